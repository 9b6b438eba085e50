/**
 * How a source's body is read: the one reader every part uses (intake's attribution and ordering
 * keys, the fan-out's narrowing, `hookledger send`). A source's body format is fixed by its scheme
 * (Twilio's form parameters, Mailgun's carrier) or its config (`bodyFormat`), never by the request's
 * Content-Type: that header is not signed, so a JSON body re-sent as a form must not be read as one.
 * A media type that names another format is refused (`mediaTypeConflict`); one that names none
 * (`text/plain`, `application/octet-stream`, or no header at all, as some providers send JSON) is
 * read in the source's format. Pure functions: no I/O, no logging.
 */
import { HookledgerError } from './errors';

export const BODY_FORMATS = ['json', 'form'] as const;
/** `json`: a JSON object or array (SendGrid's batch); `form`: application/x-www-form-urlencoded fields. */
export type BodyFormat = (typeof BODY_FORMATS)[number];

/** The media type a body of this format is sent with (`hookledger send`). */
export const MEDIA_TYPES: Readonly<Record<BodyFormat, string>> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
};

const FORMAT_NAMES: Readonly<Record<BodyFormat, string>> = { json: 'JSON', form: 'form fields' };

/**
 * The default bound on the form fields a source accepts, counted before verification: Twilio sends
 * 15-40 parameters, a Slack slash command about a dozen, a Mailgun form post a few dozen; 1,000
 * leaves a wide margin while keeping a verifier's sort and a consumer's narrowing small.
 */
export const DEFAULT_MAX_FORM_FIELDS = 1000;
export const MAX_FORM_FIELDS_CEILING = 100_000;
/**
 * The default bound on a request's headers (distinct names, after API Gateway joins repeats):
 * providers send 10-25 and API Gateway or a proxy adds about ten (`x-forwarded-*`, `x-amzn-trace-id`).
 */
export const DEFAULT_MAX_HEADERS = 100;
export const MIN_MAX_HEADERS = 16;
export const MAX_HEADERS_CEILING = 1000;

export const MAX_JSON_DEPTH = 32;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Why a body cannot be read in its source's format; `code` is what intake answers (400). */
export class BodyFormatError extends HookledgerError {
  override readonly name = 'BodyFormatError';
  constructor(
    readonly code: 'invalid_encoding' | 'invalid_json' | 'too_deep' | 'forbidden_key',
    message: string,
  ) {
    super(message);
  }
}

/** The media type without parameters, lower-cased; undefined when the header is absent or blank. */
export function mediaTypeOf(contentType: string | undefined): string | undefined {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return type ? type : undefined;
}

/**
 * The body format a media type names: `json` for application/json and any `+json` suffix
 * (application/webhook+json, application/cloudevents+json), `form` for application/x-www-form-urlencoded,
 * `multipart` for multipart/form-data (read by neither format); undefined for everything else.
 */
function namedFormat(mediaType: string): BodyFormat | 'multipart' | undefined {
  if (mediaType === 'application/json' || mediaType === 'text/json' || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(mediaType)) {
    return 'json';
  }
  if (mediaType === 'application/x-www-form-urlencoded') return 'form';
  if (mediaType === 'multipart/form-data') return 'multipart';
  return undefined;
}

/**
 * The refusal for a Content-Type that names another format than the source's, or undefined when the
 * header agrees or names no format at all (the body is then read in the source's format).
 */
export function mediaTypeConflict(contentType: string | undefined, format: BodyFormat, sourceId: string): string | undefined {
  const mediaType = mediaTypeOf(contentType);
  if (mediaType === undefined) return undefined;
  const named = namedFormat(mediaType);
  if (named === undefined || named === format) return undefined;
  return (
    `Content-Type ${mediaType} contradicts the body format of source "${sourceId}": source "${sourceId}" reads its body as ` +
    `${FORMAT_NAMES[format]} (bodyFormat '${format}'); send ${MEDIA_TYPES[format]}, or fix the source's bodyFormat`
  );
}

/**
 * How many fields a form body holds, as the reader counts them (`&`-separated, empty pairs skipped),
 * without decoding anything: one pass over the bytes, so intake can bound a form before any verifier
 * or parser touches it.
 */
export function countFormFields(raw: Buffer): number {
  let count = 0;
  let inField = false;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0x26) inField = false;
    else if (!inField) {
      inField = true;
      count++;
    }
  }
  return count;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function decode(raw: Buffer, what: string): string {
  try {
    return utf8.decode(raw);
  } catch {
    throw new BodyFormatError('invalid_encoding', `body is not valid UTF-8${what}`);
  }
}

/**
 * The body read in its source's format: the one reader of bodies. A JSON object or array (arrays
 * address by index: `0.sg_event_id`), or the form's fields by name. Throws BodyFormatError naming
 * what is wrong; never reads the Content-Type.
 */
export function readBody(raw: Buffer, format: BodyFormat): Record<string, unknown> {
  return format === 'form' ? readFormBody(raw) : readJsonBody(raw, { arrays: true });
}

/**
 * Form fields by name, in one pass. A field sent once is its value; a field sent more than once is the
 * array of its values in the order received (that order is not signed by every scheme, so attribution,
 * which takes strings only, refuses such a field instead of picking one). Prototype keys are refused,
 * as in JSON.
 */
export function readFormBody(raw: Buffer): Record<string, unknown> {
  const text = decode(raw, '');
  const fields: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    if (FORBIDDEN_KEYS.has(name)) throw new BodyFormatError('forbidden_key', `body contains the field "${name}", which is not accepted`);
    const seen = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (seen === undefined) fields[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else fields[name] = [seen, value];
  }
  return fields;
}

/** A JSON object (or, with `arrays`, array) body: valid UTF-8, not nested beyond MAX_JSON_DEPTH, no prototype keys. */
export function readJsonBody(raw: Buffer, options: { readonly arrays?: boolean } = {}): Record<string, unknown> {
  const text = decode(raw, '; send JSON encoded as UTF-8');
  const depth = maxNesting(text);
  if (depth > MAX_JSON_DEPTH) {
    throw new BodyFormatError('too_deep', `body nests ${depth} levels deep; at most ${MAX_JSON_DEPTH} are accepted`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // Only the position: the parser's own message quotes the body around the bad token.
    const position = error instanceof SyntaxError ? /position (\d+)/.exec(error.message)?.[1] : undefined;
    throw new BodyFormatError('invalid_json', `body is not valid JSON${position ? ` (at character ${position})` : ''}`);
  }
  if (!parsed || typeof parsed !== 'object' || (Array.isArray(parsed) && !options.arrays)) {
    throw new BodyFormatError('invalid_json', options.arrays ? 'body must be a JSON object or array' : 'body must be a JSON object');
  }
  const forbidden = findForbiddenKey(parsed);
  if (forbidden) {
    throw new BodyFormatError('forbidden_key', `body contains the key "${forbidden}", which is not accepted`);
  }
  return parsed as Record<string, unknown>;
}

/** Bracket depth outside strings, counted before JSON.parse so hostile nesting costs nothing. */
function maxNesting(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) max = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

function findForbiddenKey(root: object): string | undefined {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!node || typeof node !== 'object') continue;
    for (const key of Object.keys(node)) {
      if (FORBIDDEN_KEYS.has(key)) return key;
      stack.push((node as Record<string, unknown>)[key]);
    }
  }
  return undefined;
}
