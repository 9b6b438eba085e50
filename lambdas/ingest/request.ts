/**
 * Intake's first two steps: `route` finds the source and reads the Lambda event into a request;
 * `checkShape` refuses what no verifier or reader should see (too many headers, too large a body,
 * control characters, a method the source does not answer, a media type or a form size the source's
 * body format refuses). Pure: no I/O.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { countFormFields, mediaTypeConflict } from '../../core/body';
import { findSource } from '../../core/config/routing';
import type { HookledgerConfig } from '../../core/config/schema';
import { HANDSHAKE_STEPS } from '../../core/handshakes';
import type { SchemeSet } from '../../core/schemes/set';
import { InputError } from '../recording/parse';
import type { IngestRequest } from '../recording/request';

/** The request to a registered source; 404 `unknown_source` for any other path. */
export function route(event: APIGatewayProxyEventV2, config: HookledgerConfig, receivedAt: number): IngestRequest {
  const sourceId = sourceIdOf(event);
  const source = findSource(config, sourceId);
  if (!source) {
    throw new InputError('unknown_source', `no webhook source is registered at /hooks/${sourceId.slice(0, 40)}`, 404);
  }
  const headers = normaliseHeaders(event.headers);
  return {
    source,
    method: (event.requestContext?.http?.method ?? 'POST').toUpperCase(),
    headers,
    rawBody: decodeBody(event),
    query: new URLSearchParams(event.rawQueryString ?? ''),
    url: requestUrl(event, headers),
    receivedAt,
  };
}

/** `/hooks/{source}`: one path segment after `/hooks/`, nothing after it (the HTTP API's route). */
const WEBHOOK_PATH = /^\/hooks\/([^/]+)$/;

/**
 * The source id the request names: the HTTP API's route parameter, or, behind a function URL
 * (`intake.endpoint: 'function-url'`: every path and method reaches intake, with no route key and no
 * path parameters), the raw path's segment under `/hooks/`; '' for any other path (404 in `route`).
 */
export function sourceIdOf(event: APIGatewayProxyEventV2): string {
  const fromRoute = event.pathParameters?.source;
  if (fromRoute !== undefined) return fromRoute;
  const segment = WEBHOOK_PATH.exec(event.rawPath ?? '')?.[1];
  if (segment === undefined) return '';
  try {
    return decodeURIComponent(segment);
  } catch {
    // A malformed escape names no registered source.
    return segment;
  }
}

/**
 * Bounds before anything reads the request: headers (count, control characters), body size, the
 * method (POST, or the GET of the source's handshake: `405 Allow: POST` otherwise), and for a POST
 * the body's shape: the source's format decides how it is read (never the unsigned Content-Type, so
 * one naming another format is refused: 415), and a form is bounded in fields (counted in one pass
 * over the bytes) before a verifier sorts them.
 */
export function checkShape(request: IngestRequest, schemes: SchemeSet): void {
  const { source, headers, rawBody } = request;
  const headerCount = Object.keys(headers).length;
  if (headerCount > source.maxHeaders) {
    throw new InputError(
      'too_many_headers',
      `request has ${headerCount} headers; source "${source.id}" accepts at most ${source.maxHeaders} (maxHeaders)`,
    );
  }
  if (rawBody.length > source.maxBodyBytes) {
    throw new InputError(
      'payload_too_large',
      `body is ${rawBody.length} bytes; source "${source.id}" accepts at most ${source.maxBodyBytes}`,
      413,
    );
  }
  const badHeader = findControlCharacterHeader(headers);
  if (badHeader) throw new InputError('invalid_header', `header ${badHeader} contains control characters`);

  if (request.method !== 'POST') {
    // Only a handshake arriving by GET is answered; nothing is ever stored for a GET.
    const handshake = request.method === 'GET' ? source.handshake : undefined;
    if (!handshake || HANDSHAKE_STEPS[handshake].method !== 'GET') {
      throw new InputError('method_not_allowed', `source "${source.id}" accepts POST only`, 405, { allow: 'POST' });
    }
    return;
  }
  const conflict = mediaTypeConflict(headers['content-type'], source.bodyFormat, source.id);
  if (conflict) throw new InputError('unsupported_media_type', conflict, 415);
  // Twilio's verifier reads form parameters even on a JSON source when the URL has no bodySHA256.
  if (source.bodyFormat === 'form' || schemes.bodyFormat(source.scheme).format === 'form') {
    const fields = countFormFields(rawBody);
    if (fields > source.maxFormFields) {
      throw new InputError(
        'too_many_fields',
        `body has ${fields} form fields; source "${source.id}" accepts at most ${source.maxFormFields} (maxFormFields)`,
        413,
      );
    }
  }
}

/** Header values with control characters are refused before anything reads them. */
function findControlCharacterHeader(headers: Readonly<Record<string, string>>): string | undefined {
  for (const [name, value] of Object.entries(headers)) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: that is the point
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) return name;
  }
  return undefined;
}

/**
 * The URL the provider called, as Twilio and Square sign it: the forwarded scheme (API Gateway and
 * the local gateway both set x-forwarded-proto), the Host header as sent (with its port, if any),
 * the path and the query string exactly as received.
 */
function requestUrl(event: APIGatewayProxyEventV2, headers: Record<string, string>): string {
  const proto = headers['x-forwarded-proto']?.split(',')[0]?.trim() || 'https';
  const host = headers.host ?? event.requestContext?.domainName ?? '';
  const path = event.rawPath ?? '';
  return `${proto}://${host}${path}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`;
}

function normaliseHeaders(headers: APIGatewayProxyEventV2['headers'] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value !== undefined) out[name.toLowerCase()] = value;
  }
  return out;
}

function decodeBody(event: APIGatewayProxyEventV2): Buffer {
  if (!event.body) return Buffer.alloc(0);
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
}
