/**
 * Intake: verify, extract attribution, record once, answer.
 *
 * The provider is answered 202 only after the receipt (the event and its delivery set, one
 * conditional write) has committed. Unverified requests leave no trace: nothing is stored and the
 * only log line is the rejection reason.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { findSource, subscribedConsumers } from '../../core/config/routing';
import type { HookledgerConfig, SourceConfig } from '../../core/config/schema';
import { countFormFields, mediaTypeConflict } from '../../core/body';
import { StorageUnavailableError } from '../../adapters/errors';
import type { IntakeStore } from '../../adapters/event-stores';
import type { Logger } from '../shared/logger';
import type { Attribution, KeyItem } from '../../core/model';
import { payloadHmac as keyedHash } from '../../adapters/payload-hash';
import { activeSecrets, type SecretsPort } from '../../adapters/secrets';
import { keyRequestFor, schemeBodyFormat, verifierFor } from '../../core/schemes';
import type { JsonWebKey, VerificationKeysPort, VerifyInput, VerifyResult } from '../../core/schemes/types';
import { answerGetHandshake, answerGraphValidation, answerHandshake, GET_HANDSHAKES } from './handshake';
import { extractAttribution, findControlCharacterHeader, InputError, parseBody } from './parse';
import { orderingKeysFor } from './ordering';

export interface IngestDeps {
  readonly config: HookledgerConfig;
  readonly store: IntakeStore;
  readonly secrets: SecretsPort;
  readonly logger: Logger;
  readonly clock?: () => number;
  /**
   * Told the outcome of every request: `recorded`, `duplicate` (same event id, same bytes),
   * `duplicate_conflict` (same event id, other bytes), `duplicate_body` (same signed bytes under
   * other unsigned headers, sources with replay protection by body), `challenge`, or the error code of a
   * refusal (`signature_mismatch`, `unknown_source`, `storage_unavailable`, ...). A short, closed set:
   * fit for a metric dimension.
   */
  readonly onOutcome?: (outcome: string) => void;
  /**
   * Where schemes whose keys are fetched by key id (jwks: Plaid) get them, cached
   * (adapters/verification-keys.ts). Without it such sources answer 503; no other scheme uses it.
   */
  readonly verificationKeys?: VerificationKeysPort;
}

export type IngestHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

const DAY_MS = 86_400_000;

export function createIngestHandler(deps: IngestDeps): IngestHandler {
  const clock = deps.clock ?? Date.now;
  const { config, logger } = deps;

  return async (event) => {
    const started = clock();
    const sourceId = event.pathParameters?.source ?? '';
    try {
      const result = await ingest(event, sourceId, started);
      deps.onOutcome?.(result.outcome);
      // A recorded webhook's durable record is its receipt (`hookledger trace`): its line is DEBUG
      // (logs.applicationLevel), so at INFO logs carry what went wrong, and the duplicates.
      logger[result.outcome === 'recorded' ? 'debug' : 'info']('webhook accepted', {
        outcome: result.outcome,
        source: sourceId,
        event_id: result.eventId,
        tenant_id: result.tenantId,
        deliveries: result.deliveries,
        ms: clock() - started,
      });
      return result.response;
    } catch (error) {
      if (error instanceof InputError) {
        // The reason only: no header values, no body, no secret.
        deps.onOutcome?.(error.code);
        logger.warn('webhook rejected', { source: sourceId.slice(0, 40), status: error.status, reason: error.code });
        const refusal = json(error.status, { error: error.code, message: error.message });
        return { ...refusal, headers: { ...refusal.headers, ...error.headers } };
      }
      if (error instanceof StorageUnavailableError) {
        deps.onOutcome?.('storage_unavailable');
        logger.error('event store unavailable', { source: sourceId, error: error.message });
        return json(503, { error: 'storage_unavailable', message: 'the event could not be stored; retry later' });
      }
      deps.onOutcome?.('unavailable');
      logger.error('intake failed', { source: sourceId, error: error instanceof Error ? error.name : 'unknown' });
      return json(503, { error: 'unavailable', message: 'the event could not be accepted; retry later' });
    }
  };

  async function ingest(event: APIGatewayProxyEventV2, sourceId: string, now: number) {
    const source = findSource(config, sourceId);
    if (!source) {
      throw new InputError('unknown_source', `no webhook source is registered at /hooks/${sourceId.slice(0, 40)}`, 404);
    }
    const headers = normaliseHeaders(event.headers);
    const headerCount = Object.keys(headers).length;
    if (headerCount > source.maxHeaders) {
      throw new InputError(
        'too_many_headers',
        `request has ${headerCount} headers; source "${source.id}" accepts at most ${source.maxHeaders} (maxHeaders)`,
      );
    }
    const rawBody = decodeBody(event);
    if (rawBody.length > source.maxBodyBytes) {
      throw new InputError(
        'payload_too_large',
        `body is ${rawBody.length} bytes; source "${source.id}" accepts at most ${source.maxBodyBytes}`,
        413,
      );
    }
    const badHeader = findControlCharacterHeader(headers);
    if (badHeader) throw new InputError('invalid_header', `header ${badHeader} contains control characters`);

    const url = requestUrl(event, headers);
    const query = new URLSearchParams(event.rawQueryString ?? '');
    const method = (event.requestContext?.http?.method ?? 'POST').toUpperCase();
    if (method !== 'POST') {
      // Only a preset's GET handshake is answered; nothing is ever stored for a GET.
      const handshake = method === 'GET' ? source.handshake : undefined;
      if (!handshake || !GET_HANDSHAKES.has(handshake)) {
        throw new InputError('method_not_allowed', `source "${source.id}" accepts POST only`, 405, { allow: 'POST' });
      }
      if (handshake === 'okta-verification') {
        // Okta sends the hook's Authorization value with its verification request too.
        const verified = await verify(source.id, rawBody, headers, now, source.toleranceSeconds, source.scheme, url);
        if (!verified.ok) throw new InputError(verified.code, verified.message, 401);
      }
      return challenge(answerGetHandshake(handshake, { query, headers, verifyToken: source.verifyToken }));
    }
    checkBodyShape(source, rawBody, headers);
    if (source.handshake === 'graph-validation-token') {
      // Graph's validation POST carries no clientState: answered before verification, nothing stored.
      const reply = answerGraphValidation(query);
      if (reply) return challenge(reply);
    }
    const verified = await verify(source.id, rawBody, headers, now, source.toleranceSeconds, source.scheme, url);
    if (!verified.ok) throw new InputError(verified.code, verified.message, 401);

    const body = parseBody(rawBody, source.bodyFormat);
    const handshake = source.handshake ?? (source.scheme.type === 'slack' ? 'slack-url-verification' : undefined);
    if (handshake) {
      // The secret that just verified the request: Zoom's answer is an HMAC under it.
      const secrets = activeSecrets(await deps.secrets.get(source.id), now);
      const secret = verified.secretVersion === 'previous' && secrets.previous !== undefined ? secrets.previous : secrets.current;
      const reply = answerHandshake(handshake, body, secret);
      if (reply) return challenge(reply);
    }
    // Computed before attribution: an event id derived from the body (`bh_`) is this keyed hash.
    const payloadHmac = keyedHash(await deps.secrets.payloadHashKey(), rawBody);
    const requested = extractAttribution(source, body, headers, payloadHmac);
    if (source.enforceKeyRegistry) checkKey(requested, await deps.store.getKey(requested.keyId));

    // Replay protection by body: these bytes name the event they first came with, whatever the
    // unsigned headers of this request say.
    const attribution: Omit<Attribution, 'source'> =
      source.replayProtection === 'body'
        ? await deps.store.claimBody({ source: source.id, ...requested, claimedAt: now }, payloadHmac)
        : requested;
    const consumers = subscribedConsumers(config, attribution.eventType);
    const recorded = await deps.store.recordEvent(
      {
        source: source.id,
        eventId: attribution.eventId,
        eventType: attribution.eventType,
        tenantId: attribution.tenantId,
        keyId: attribution.keyId,
        receivedAt: now,
        consumers,
        payloadHmac,
        payloadBytes: rawBody.length,
        secretVersion: verified.secretVersion,
        payloadExpiresAt: now + config.retention.payloadDays * DAY_MS,
        ...withOrderingKeys(orderingKeysFor(config, consumers, attribution.tenantId, body)),
      },
      rawBody,
    );
    const replayed = recorded === 'duplicate' && attribution.eventId !== requested.eventId;
    const outcome = replayed ? 'duplicate_body' : recorded;
    const response =
      recorded === 'recorded'
        ? json(202, { event_id: attribution.eventId, deliveries: consumers.length })
        : json(200, { status: recorded, event_id: attribution.eventId });
    return { outcome, eventId: attribution.eventId, tenantId: attribution.tenantId, deliveries: consumers.length, response };
  }

  async function verify(
    sourceId: string,
    rawBody: Buffer,
    headers: Record<string, string>,
    now: number,
    toleranceSeconds: number,
    scheme: Parameters<typeof verifierFor>[0],
    url: string,
  ): Promise<VerifyResult> {
    const verifier = verifierFor(scheme);
    const base: VerifyInput = { rawBody, headers, now, toleranceSeconds, url };
    // Only key-fetching schemes (jwks) name a key; every other scheme verifies without awaiting anything more.
    const wanted = keyRequestFor(scheme, base);
    const input: VerifyInput = wanted ? { ...base, publicKeys: await publicKeys(sourceId, wanted, now) } : base;
    // The ports keep an open rotation overlap fresh themselves (the secrets file is re-read, Secrets
    // Manager cached for 30 s), so a `secrets retire` reaches a previous-secret match without help here.
    const first = verifier.verify(input, activeSecrets(await deps.secrets.get(sourceId), now));
    if (first.ok || first.code !== 'signature_mismatch') return first;
    // A mismatch: the secret may have been rotated since it was cached. Look once more.
    return verifier.verify(input, activeSecrets(await deps.secrets.refresh(sourceId), now));
  }

  /** The key the request names, fetched with the source's credentials (its secret); {} when the endpoint knows none. */
  async function publicKeys(sourceId: string, wanted: { kid: string; url: string }, now: number): Promise<Record<string, JsonWebKey>> {
    if (!deps.verificationKeys) throw new Error('no verification key port is configured for a key-fetching scheme');
    const credentials = activeSecrets(await deps.secrets.get(sourceId), now).current;
    const key = await deps.verificationKeys.get({ ...wanted, sourceId, credentials });
    return key ? { [wanted.kid]: key } : {};
  }
}

/**
 * Before anything reads the body: the source's format decides how it is read (never the unsigned
 * Content-Type, so one naming another format is refused: 415), and a form is bounded in fields
 * (counted in one pass over the bytes) before a verifier sorts them.
 */
function checkBodyShape(source: SourceConfig, rawBody: Buffer, headers: Readonly<Record<string, string>>): void {
  const conflict = mediaTypeConflict(headers['content-type'], source.bodyFormat, source.id);
  if (conflict) throw new InputError('unsupported_media_type', conflict, 415);
  // Twilio's verifier reads form parameters even on a JSON source when the URL has no bodySHA256.
  if (source.bodyFormat === 'form' || schemeBodyFormat(source.scheme).format === 'form') {
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

function challenge(response: APIGatewayProxyStructuredResultV2) {
  return { outcome: 'challenge', eventId: undefined, tenantId: undefined, deliveries: 0, response };
}

/** Unknown keys and keys of another tenant are refused; a revoked key's event is still a fact. */
function checkKey(attribution: { tenantId: string; keyId: string }, key: KeyItem | undefined): void {
  if (!key) {
    throw new InputError('unknown_key', `key_id ${attribution.keyId} is not registered; issue it first`, 403);
  }
  if (key.tenantId !== attribution.tenantId) {
    throw new InputError('key_tenant_mismatch', `key_id ${attribution.keyId} does not belong to tenant ${attribution.tenantId}`, 403);
  }
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

function json(statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** Only receipts with an ordered consumer carry the keys (no empty attribute on the others). */
function withOrderingKeys(keys: Record<string, string> | undefined): { orderingKeys?: Record<string, string> } {
  return keys ? { orderingKeys: keys } : {};
}
