/**
 * AWS Signature Version 4 in its header form, as the SDK signs: verifying a signed request (the
 * local listeners that hold data accept only their own keys, local/listener-guard.ts) and signing
 * one (the assembly's IAM proxies forward each call they checked under the stack's key). One
 * canonical request for both directions; local/dynamodb-local/LoopbackDynamoDBLocal.java holds the
 * same algorithm for DynamoDB Local. The algorithm:
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { AccessKey } from './credentials';

const ALGORITHM = 'AWS4-HMAC-SHA256';
export const PAYLOAD_HASH_HEADER = 'x-amz-content-sha256';
/** How far a signature's time may be from this machine's clock, as AWS allows. */
export const MAX_CLOCK_SKEW_MS = 15 * 60_000;

export type HeaderMap = Readonly<Record<string, string | string[] | undefined>>;

export interface WireRequest {
  readonly method: string;
  /** The request target as sent: path and query, percent-encoded. */
  readonly target: string;
  /** Lower-case names, as node:http gives them. */
  readonly headers: HeaderMap;
  /** The body; read only when no x-amz-content-sha256 header names its hash. */
  readonly body?: Buffer;
}

/** The parts of an `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…` header. */
export interface SignatureHeader {
  readonly accessKeyId: string;
  /** yyyymmdd */
  readonly date: string;
  readonly region: string;
  readonly service: string;
  readonly signedHeaders: readonly string[];
  readonly signature: string;
}

export type SignatureFailure = 'missing' | 'malformed' | 'unknown_key' | 'expired' | 'bad_signature';

export type Verification =
  | { readonly ok: true; readonly accessKeyId: string; readonly region: string; readonly service: string }
  | { readonly ok: false; readonly reason: SignatureFailure; readonly accessKeyId?: string };

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;_.-]+),\s*Signature=([0-9a-f]{64})$/;

export function parseSignatureHeader(header: string | undefined): SignatureHeader | undefined {
  const match = AUTHORIZATION.exec(header?.trim() ?? '');
  if (!match) return undefined;
  const [, accessKeyId, date, region, service, signed, signature] = match as unknown as string[];
  return {
    accessKeyId: accessKeyId!,
    date: date!,
    region: region!,
    service: service!,
    signedHeaders: signed!.split(';'),
    signature: signature!,
  };
}

export function headerValue(headers: HeaderMap, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** Whether the signature covers a hash only the body gives (no x-amz-content-sha256 header names it). */
export function needsBody(headers: HeaderMap): boolean {
  return headerValue(headers, PAYLOAD_HASH_HEADER) === undefined;
}

/**
 * Checks the request's signature against the secret of the key it names (`secretOf`: undefined for a
 * key this listener does not accept). The payload is the x-amz-content-sha256 header's value when the
 * signer sent one (the SDK always does), else the body's hash.
 */
export function verifySignature(
  request: WireRequest,
  secretOf: (accessKeyId: string) => string | undefined,
  now = Date.now(),
): Verification {
  const authorization = headerValue(request.headers, 'authorization');
  if (authorization === undefined) return { ok: false, reason: 'missing' };
  const parsed = parseSignatureHeader(authorization);
  if (!parsed?.signedHeaders.includes('host')) return { ok: false, reason: 'malformed' };
  const secret = secretOf(parsed.accessKeyId);
  if (secret === undefined) return { ok: false, reason: 'unknown_key', accessKeyId: parsed.accessKeyId };
  const amzDate = headerValue(request.headers, 'x-amz-date') ?? '';
  const at = parseAmzDate(amzDate);
  if (at === undefined || !amzDate.startsWith(parsed.date)) return { ok: false, reason: 'malformed', accessKeyId: parsed.accessKeyId };
  if (Math.abs(now - at) > MAX_CLOCK_SKEW_MS) return { ok: false, reason: 'expired', accessKeyId: parsed.accessKeyId };
  const payloadHash = headerValue(request.headers, PAYLOAD_HASH_HEADER) ?? sha256Hex(request.body ?? Buffer.alloc(0));
  const expected = signatureOf(request, parsed, amzDate, payloadHash, secret);
  const matches = timingSafeEqual(Buffer.from(expected), Buffer.from(parsed.signature));
  return matches
    ? { ok: true, accessKeyId: parsed.accessKeyId, region: parsed.region, service: parsed.service }
    : { ok: false, reason: 'bad_signature', accessKeyId: parsed.accessKeyId };
}

/** Headers a forwarded request is signed over: the host, the media type, and every x-amz-* header. */
const signable = (name: string) => name === 'host' || name === 'content-type' || name === 'content-md5' || name.startsWith('x-amz-');

/**
 * Signs `request` (its `host` header naming where it goes) as `key`: its headers with x-amz-date,
 * x-amz-content-sha256 and Authorization set. A payload hash the original signer sent is kept when it
 * is not one (UNSIGNED-PAYLOAD, a STREAMING-* chunked body): the body is still in that encoding.
 */
export function signRequest(
  request: WireRequest & { readonly body: Buffer },
  key: AccessKey,
  scope: { readonly region: string; readonly service: string },
  now = new Date(),
): Record<string, string> {
  const amzDate = formatAmzDate(now);
  const given = headerValue(request.headers, PAYLOAD_HASH_HEADER);
  const payloadHash = given !== undefined && !/^[0-9a-f]{64}$/.test(given) ? given : sha256Hex(request.body);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'authorization' || name === 'x-amz-security-token') continue;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  headers['x-amz-date'] = amzDate;
  headers[PAYLOAD_HASH_HEADER] = payloadHash;
  const signedHeaders = Object.keys(headers).filter(signable).sort();
  const parts: SignatureHeader = { accessKeyId: key.accessKeyId, date: amzDate.slice(0, 8), ...scope, signedHeaders, signature: '' };
  const signature = signatureOf({ ...request, headers }, parts, amzDate, payloadHash, key.secretAccessKey);
  headers.authorization = `${ALGORITHM} Credential=${key.accessKeyId}/${parts.date}/${scope.region}/${scope.service}/aws4_request, SignedHeaders=${signedHeaders.join(';')}, Signature=${signature}`;
  return headers;
}

function signatureOf(request: WireRequest, parts: SignatureHeader, amzDate: string, payloadHash: string, secret: string): string {
  const scope = `${parts.date}/${parts.region}/${parts.service}/aws4_request`;
  const stringToSign = [ALGORITHM, amzDate, scope, sha256Hex(canonicalRequest(request, parts, payloadHash))].join('\n');
  let key: Buffer = hmac(`AWS4${secret}`, parts.date);
  for (const part of [parts.region, parts.service, 'aws4_request']) key = hmac(key, part);
  return createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
}

function canonicalRequest(request: WireRequest, parts: SignatureHeader, payloadHash: string): string {
  const queryAt = request.target.indexOf('?');
  const path = queryAt === -1 ? request.target : request.target.slice(0, queryAt);
  const query = queryAt === -1 ? '' : request.target.slice(queryAt + 1);
  const headerLines = parts.signedHeaders.map(
    (name) => `${name}:${(headerValue(request.headers, name) ?? '').trim().replace(/\s+/g, ' ')}`,
  );
  return [
    request.method.toUpperCase(),
    canonicalPath(path || '/', parts.service),
    canonicalQuery(query),
    ...headerLines,
    '',
    parts.signedHeaders.join(';'),
    payloadHash,
  ].join('\n');
}

/** S3 signs the path as sent; every other service its normalized segments, encoded once more. */
function canonicalPath(path: string, service: string): string {
  if (service === 's3') return path;
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalized = `/${segments.join('/')}${segments.length > 0 && path.endsWith('/') ? '/' : ''}`;
  return escapeUri(normalized).replace(/%2F/g, '/');
}

function canonicalQuery(query: string): string {
  const pairs: [string, string][] = [];
  for (const part of query.split('&')) {
    if (part === '') continue;
    const at = part.indexOf('=');
    const name = escapeUri(decode(at === -1 ? part : part.slice(0, at)));
    if (name.toLowerCase() === 'x-amz-signature') continue;
    pairs.push([name, escapeUri(decode(at === -1 ? '' : part.slice(at + 1)))]);
  }
  pairs.sort(([a, x], [b, y]) => (a === b ? compare(x, y) : compare(a, b)));
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** RFC 3986: everything but unreserved characters percent-encoded (encodeURIComponent leaves !'()*). */
function escapeUri(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function parseAmzDate(text: string): number | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
}

function formatAmzDate(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
