/**
 * The contract of an HTTP destination's transform (`transform: 'transforms/<name>.ts'` on a
 * `kind: 'http'` consumer): the module exports `transform`, bundled into that consumer's worker and
 * run on each delivery before signing. What it returns is what is POSTed: `body` as JSON, its
 * `headers` beside hookledger's own. A throw quarantines the delivery with its message
 * (`transform_failed`); a result fetch could not send is quarantined `transform_invalid`.
 */

import { HookledgerError } from './errors';

/**
 * What a transform throws for a delivery it cannot reshape (a field the destination needs is missing
 * or of another kind): the delivery is quarantined `transform_failed` with the message, which is kept
 * on the ledger row and shown by `hookledger trace`, so it names fields and kinds, never a payload value.
 */
export class TransformError extends HookledgerError {
  override readonly name: string = 'TransformError';
}

export interface TransformInput {
  readonly eventId: string;
  readonly eventType: string;
  readonly tenantId: string;
  readonly keyId: string;
  /** The consumer's narrowed view (its `fields`), as a Lambda consumer's `handle` gets it. */
  readonly payload: Readonly<Record<string, unknown>>;
}

export interface TransformOutput {
  /** Sent as JSON (the bytes signed). */
  readonly body: unknown;
  /**
   * Extra request headers: token names, Latin-1 string values (percent-encode anything else).
   * hookledger's own (webhook-*, content-type, user-agent, hookledger-*) and those HTTP sets itself
   * (the Fetch standard's forbidden request headers: host, content-length, connection, ...) cannot be set.
   */
  readonly headers?: Readonly<Record<string, string>>;
}

export type Transform = (input: TransformInput) => TransformOutput | Promise<TransformOutput>;

/** A transform's result as it will be sent: read once, so no getter runs again between check and send. */
export interface TransformRequest {
  /** The body as the transform returned it. */
  readonly body: unknown;
  /** The body serialised once: the bytes signed and sent. */
  readonly json: string;
  /** The headers as plain data, values trimmed of spaces and tabs as fetch would. */
  readonly headers: Readonly<Record<string, string>>;
}

export type TransformCheck = { readonly ok: true; readonly request: TransformRequest } | { readonly ok: false; readonly problem: string };

/**
 * Headers a transform may add. Every header is one more line servers bound: past their limits a
 * destination answers 431 or 400, which would count against its circuit breaker for everyone.
 */
export const MAX_TRANSFORM_HEADERS = 32;
/** Names and values together, 4 bytes per header for ': ' and CRLF: half the 8 KiB request head many servers accept. */
export const MAX_TRANSFORM_HEADER_BYTES = 4096;

/** RFC 9110 `token`: what fetch's Headers accepts as a name. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** hookledger's own headers: the signature, the media type and the delivery's metadata. */
const OWN_HEADERS = new Set(['content-type', 'user-agent']);
const OWN_PREFIXES = ['webhook-', 'hookledger-'];
/**
 * The Fetch standard's forbidden request-header names (https://fetch.spec.whatwg.org/#forbidden-request-header):
 * HTTP sets them itself. Node's fetch throws on some (connection, expect, keep-alive, transfer-encoding,
 * upgrade, a content-length that does not match), drops or passes others; none is a transform's to set.
 */
const FORBIDDEN_HEADERS = new Set([
  'accept-charset',
  'accept-encoding',
  'access-control-request-headers',
  'access-control-request-method',
  'connection',
  'content-length',
  'cookie',
  'cookie2',
  'date',
  'dnt',
  'expect',
  'host',
  'keep-alive',
  'origin',
  'referer',
  'set-cookie',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'via',
]);
const FORBIDDEN_PREFIXES = ['proxy-', 'sec-'];

/** Header names a transform may not set: hookledger's own, and those HTTP sets itself. */
export function reservedHeader(name: string): boolean {
  return ownHeader(name.toLowerCase()) || forbiddenHeader(name.toLowerCase());
}

const ownHeader = (n: string) => OWN_HEADERS.has(n) || OWN_PREFIXES.some((p) => n.startsWith(p));
const forbiddenHeader = (n: string) => FORBIDDEN_HEADERS.has(n) || FORBIDDEN_PREFIXES.some((p) => n.startsWith(p));

/**
 * What a transform returned, checked as the request fetch will send: a body JSON can write, headers
 * a plain object of strings under token names, not reserved, each value Latin-1 without controls,
 * within the bounds above. Every property is read exactly once, and what is returned is a copy: a
 * getter or proxy cannot answer one thing to the check and another to fetch. Problems name the
 * header and the position, never a value (it may be a payload value) nor what a getter threw.
 */
export function checkTransformRequest(out: unknown): TransformCheck {
  try {
    return readRequest(out);
  } catch (error) {
    return invalid(`reading the transform's result threw (${errorClass(error)}); return plain data, not getters or proxies`);
  }
}

function readRequest(out: unknown): TransformCheck {
  if (typeof out !== 'object' || out === null || !('body' in out)) return invalid('transform must return { body, headers? }');
  const { body, headers: rawHeaders } = out as { body: unknown; headers?: unknown };
  let json: string | undefined;
  try {
    json = JSON.stringify(body);
  } catch (error) {
    // A BigInt, a cycle, a throwing toJSON or getter: the error's own message may quote the payload.
    return invalid(`transform returned a body that is not JSON (${errorClass(error)}): return plain data without BigInt or cycles`);
  }
  if (json === undefined) return invalid('transform returned a body that is not JSON (undefined or a function)');
  const headers = readHeaders(rawHeaders);
  return typeof headers === 'string' ? invalid(headers) : { ok: true, request: { body, json, headers } };
}

/** The headers copied into plain data, or the problem. */
function readHeaders(raw: unknown): Record<string, string> | string {
  if (raw === undefined) return {};
  if (!isPlainObject(raw) || Object.getOwnPropertySymbols(raw).length > 0) return 'transform headers must be a plain object of strings';
  const entries = Object.entries(raw);
  if (entries.length > MAX_TRANSFORM_HEADERS) {
    return `transform returned ${entries.length} headers; at most ${MAX_TRANSFORM_HEADERS} are sent`;
  }
  const seen = new Set<string>();
  const copied: [string, string][] = [];
  let bytes = 0;
  for (const [index, [name, value]] of entries.entries()) {
    const problem = headerProblem(name, value, index, seen);
    if (problem) return problem;
    const trimmed = (value as string).replace(/^[ \t]+|[ \t]+$/g, '');
    bytes += name.length + trimmed.length + 4;
    copied.push([name, trimmed]);
  }
  if (bytes > MAX_TRANSFORM_HEADER_BYTES) return `transform headers take ${bytes} bytes; at most ${MAX_TRANSFORM_HEADER_BYTES} are sent`;
  // fromEntries defines own data properties: a header named __proto__ stays a header.
  return Object.fromEntries(copied);
}

function headerProblem(name: string, value: unknown, index: number, seen: Set<string>): string | undefined {
  // An invalid name is not quoted: it may have been built from the payload.
  if (!TOKEN.test(name)) return `transform header ${index + 1}'s name is not a header name: letters, digits and !#$%&'*+.^_\`|~- only`;
  const lower = name.toLowerCase();
  if (seen.has(lower)) return `transform header ${lower} is given twice (header names are case-insensitive)`;
  seen.add(lower);
  if (ownHeader(lower)) return `transform header ${name} is hookledger's own and cannot be set`;
  if (forbiddenHeader(lower)) {
    return `transform header ${name} is set by HTTP itself (a forbidden request header in the Fetch standard) and cannot be set by a transform`;
  }
  if (typeof value !== 'string') return `transform header ${name} must be a string, got ${value === null ? 'null' : typeof value}`;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c > 0xff) {
      return (
        `transform header ${name}: its value has a character above U+00FF at index ${i}; header values carry Latin-1 only ` +
        '(percent-encode it, e.g. encodeURIComponent, or send it in the body)'
      );
    }
    // Tab, visible ASCII and Latin-1's upper half: what Node's HTTP client writes; the rest it refuses.
    if (!(c === 0x09 || (c >= 0x20 && c <= 0x7e) || c >= 0x80)) {
      return `transform header ${name}: its value has a control character at index ${i}; line breaks and other controls cannot be sent`;
    }
  }
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

const invalid = (problem: string): TransformCheck => ({ ok: false, problem });

/** The class of what was thrown, never its message. */
function errorClass(error: unknown): string {
  if (error instanceof Error) return error.name.replace(/[^A-Za-z0-9_]/g, '').slice(0, 40) || 'Error';
  return typeof error;
}
