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
    readonly code: 'invalid_encoding' | 'invalid_json' | 'too_deep' | 'forbidden_key' | 'duplicate_key',
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

/**
 * A JSON object (or, with `arrays`, array) body: valid UTF-8, not nested beyond MAX_JSON_DEPTH, no
 * prototype keys, and no key repeated in an object. JSON.parse keeps the last of two equal keys and
 * other parsers (a consumer's, a provider's) the first, so `{"id":"evt_1","id":"evt_2"}` would name
 * two events in one signed body: it is refused whatever the key, not only on the attribution and
 * ordering paths, because filters and each consumer's fields read the rest of the body the same way
 * (and providers' serializers never repeat a key).
 */
export function readJsonBody(raw: Buffer, options: { readonly arrays?: boolean } = {}): Record<string, unknown> {
  const text = decode(raw, '; send JSON encoded as UTF-8');
  const { depth, repeated } = scanJson(text);
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
  if (repeated) {
    throw new BodyFormatError(
      'duplicate_key',
      `body repeats the key ${quoteKey(repeated.key)} (at ${repeated.path}); each key may appear once in an object, so that every parser reads the same value from the signed bytes`,
    );
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

/** An object being read by `scanJson`: its keys so far, and where its next string is a key. */
interface ObjectFrame {
  readonly keys: Set<string>;
  expectKey: boolean;
  /** The last key read: the path to the value after it. */
  key: string;
}
/** An array being read: the index of the element after the last comma. */
interface ArrayFrame {
  readonly keys: undefined;
  index: number;
}

/**
 * One pass over the text before JSON.parse: the bracket depth outside strings (so hostile nesting
 * costs nothing), and the first key repeated within one object with its dotted path. Linear: each
 * character is read once, each key decoded once (JSON.parse of the key alone, only when it holds an
 * escape: `"\u0069d"` is `"id"`). Frames are kept to MAX_JSON_DEPTH only; a deeper body is refused
 * on its depth. Tolerant of invalid JSON, which JSON.parse then refuses.
 */
function scanJson(text: string): { depth: number; repeated?: { key: string; path: string } } {
  const frames: (ObjectFrame | ArrayFrame)[] = [];
  let depth = 0;
  let max = 0;
  let repeated: { key: string; path: string } | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      i = stringEnd(text, i);
      const frame = depth <= MAX_JSON_DEPTH ? frames.at(-1) : undefined;
      if (frame?.keys && frame.expectKey) {
        const key = decodeKey(text.slice(start, i + 1));
        if (!repeated && frame.keys.has(key)) repeated = { key, path: pathTo(frames, key) };
        frame.keys.add(key);
        frame.key = key;
        frame.expectKey = false;
      }
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) max = depth;
      if (depth <= MAX_JSON_DEPTH) frames.push(c === 0x7b ? { keys: new Set(), expectKey: true, key: '' } : { keys: undefined, index: 0 });
    } else if (c === 0x7d || c === 0x5d) {
      if (depth <= MAX_JSON_DEPTH) frames.pop();
      depth--;
    } else if (c === 0x2c && depth <= MAX_JSON_DEPTH) {
      const frame = frames.at(-1);
      if (frame?.keys) frame.expectKey = true;
      else if (frame) frame.index++;
    }
  }
  return repeated ? { depth: max, repeated } : { depth: max };
}

/**
 * The index of the quote closing the string opened at `open` (the text's length when none does):
 * native `indexOf` between quotes, and a quote after an odd run of backslashes is escaped. Each run
 * of backslashes is counted once, so the whole scan stays linear.
 */
function stringEnd(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at > 0) {
    let slashes = 0;
    while (text.charCodeAt(at - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return text.length;
}

/** A key as JSON.parse names it; the raw text when it does not parse (JSON.parse refuses the body next). */
function decodeKey(literal: string): string {
  if (!literal.includes('\\')) return literal.slice(1, -1);
  try {
    return JSON.parse(literal) as string;
  } catch {
    return literal.slice(1, -1);
  }
}

/** Keys longer than this are shortened in refusals: the message names the key, it does not echo the body. */
const SHOWN_KEY_CHARS = 64;
const shorten = (key: string) => (key.length > SHOWN_KEY_CHARS ? `${key.slice(0, SHOWN_KEY_CHARS)}...` : key);
const quoteKey = (key: string) => (key.length > SHOWN_KEY_CHARS ? `"${shorten(key)}" (${key.length} characters)` : `"${key}"`);

/** `body.data.object.id`: the open frames' keys and indexes, then the key, as readPath addresses them. */
function pathTo(frames: readonly (ObjectFrame | ArrayFrame)[], key: string): string {
  const steps = frames.slice(0, -1).map((f) => (f.keys ? shorten(f.key) : String(f.index)));
  return ['body', ...steps, shorten(key)].join('.');
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
