/**
 * Turning verified bytes into a JSON body and an attribution tuple, refusing anything odd with an
 * error that names the field. Pure functions: no I/O, no logging.
 */
import { BODY_HASH_ID_PREFIX, type EventIdSource, type SourceConfig } from '../../core/config/schema';
import { readPath } from '../shared/dotted-path';
import { HookledgerError } from '../../core/errors';

export class InputError extends HookledgerError {
  override readonly name = 'InputError';
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
    /** Response headers the refusal needs (`allow` on a 405). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export const MAX_JSON_DEPTH = 32;
export const MAX_ATTRIBUTE_LENGTH = 200;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
// Printable ASCII, no spaces: ids become parts of DynamoDB keys and log fields.
const ATTRIBUTE_VALUE = /^[\x21-\x7e]+$/;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * The body as attribution reads it: form fields for `application/x-www-form-urlencoded` (Twilio,
 * Slack slash commands), otherwise JSON. A top-level JSON array (SendGrid's batch of events) is
 * kept as an array, so attribution paths address it by index (`0.sg_event_id`).
 */
export function parseBody(raw: Buffer, contentType: string | undefined): Record<string, unknown> {
  if ((contentType ?? '').toLowerCase().split(';')[0]?.trim() === 'application/x-www-form-urlencoded') return parseFormBody(raw);
  return parseJsonBody(raw, { arrays: true });
}

/** Form fields by name; a repeated field reads as its first value. Prototype keys are refused, as in JSON. */
export function parseFormBody(raw: Buffer): Record<string, unknown> {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new InputError('invalid_encoding', 'body is not valid UTF-8');
  }
  const fields: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    if (FORBIDDEN_KEYS.has(name)) throw new InputError('forbidden_key', `body contains the field "${name}", which is not accepted`);
    if (!Object.hasOwn(fields, name)) fields[name] = value;
  }
  return fields;
}

/** Parses a JSON object body: valid UTF-8, not nested beyond MAX_JSON_DEPTH, no prototype keys. */
export function parseJsonBody(raw: Buffer, options: { readonly arrays?: boolean } = {}): Record<string, unknown> {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new InputError('invalid_encoding', 'body is not valid UTF-8; send JSON encoded as UTF-8');
  }
  const depth = maxNesting(text);
  if (depth > MAX_JSON_DEPTH) {
    throw new InputError('too_deep', `body nests ${depth} levels deep; at most ${MAX_JSON_DEPTH} are accepted`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // Only the position: the parser's own message quotes the body around the bad token.
    const position = error instanceof SyntaxError ? /position (\d+)/.exec(error.message)?.[1] : undefined;
    throw new InputError('invalid_json', `body is not valid JSON${position ? ` (at character ${position})` : ''}`);
  }
  if (!parsed || typeof parsed !== 'object' || (Array.isArray(parsed) && !options.arrays)) {
    throw new InputError('invalid_json', options.arrays ? 'body must be a JSON object or array' : 'body must be a JSON object');
  }
  const forbidden = findForbiddenKey(parsed);
  if (forbidden) {
    throw new InputError('forbidden_key', `body contains the key "${forbidden}", which is not accepted`);
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

export interface ExtractedAttribution {
  readonly eventId: string;
  readonly eventType: string;
  readonly tenantId: string;
  readonly keyId: string;
}

const FIELD_NAMES: Record<keyof ExtractedAttribution, string> = {
  eventId: 'event id',
  eventType: 'event type',
  tenantId: 'tenant_id',
  keyId: 'key_id',
};

/**
 * Reads the four attribution fields from where the source's config says they are. `bodyHash` is the
 * keyed hash of the raw body (hex, the receipt's payload HMAC): an event id `{ derived: 'body-hash' }`
 * is `bh_` + it, so the same bytes always name the same event and different bytes different ones.
 */
export function extractAttribution(
  source: SourceConfig,
  body: Record<string, unknown>,
  headers: Readonly<Record<string, string>>,
  bodyHash?: string,
): ExtractedAttribution {
  const read = (field: keyof ExtractedAttribution): string => {
    const from: EventIdSource = source.attribution[field];
    if ('derived' in from) {
      if (bodyHash === undefined) throw new Error('an event id derived from the body needs the body hash');
      return `${BODY_HASH_ID_PREFIX}${bodyHash}`;
    }
    const where = describe(from);
    const value = 'value' in from ? from.value : 'body' in from ? readPath(body, from.body) : headers[from.header];
    if (value === undefined || value === null) {
      throw new InputError('missing_attribution', `${FIELD_NAMES[field]} is missing: expected it at ${where}`);
    }
    const text = attributeText(value);
    if (text === undefined) {
      throw new InputError(
        'invalid_attribution',
        `${FIELD_NAMES[field]} at ${where} must be a string or a whole number, got ${describeValue(value)}`,
      );
    }
    if (text.length === 0) {
      throw new InputError('invalid_attribution', `${FIELD_NAMES[field]} at ${where} is empty`);
    }
    if (text.length > MAX_ATTRIBUTE_LENGTH) {
      throw new InputError(
        'invalid_attribution',
        `${FIELD_NAMES[field]} at ${where} is ${text.length} characters; at most ${MAX_ATTRIBUTE_LENGTH} are accepted`,
      );
    }
    if (!ATTRIBUTE_VALUE.test(text)) {
      throw new InputError('invalid_attribution', `${FIELD_NAMES[field]} at ${where} must be printable ASCII without spaces`);
    }
    return text;
  };
  return { eventId: read('eventId'), eventType: read('eventType'), tenantId: read('tenantId'), keyId: read('keyId') };
}

/**
 * Strings as they are; safe integers (GitHub's `installation.id` is a JSON number) as their decimal
 * string. Floats, unsafe integers, booleans, objects and arrays are not identifiers.
 */
function attributeText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer beyond 2^53' : 'a fractional number';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value === 'object' ? 'an object' : typeof value;
}

function describe(from: Exclude<EventIdSource, { readonly derived: string }>): string {
  if ('value' in from) return `the fixed value "${from.value}"`;
  return 'body' in from ? `body.${from.body}` : `header ${from.header}`;
}

/** Header values with control characters are refused before anything reads them. */
export function findControlCharacterHeader(headers: Readonly<Record<string, string>>): string | undefined {
  for (const [name, value] of Object.entries(headers)) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: that is the point
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) return name;
  }
  return undefined;
}
