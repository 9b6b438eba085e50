/**
 * Turning verified bytes into the body's fields and an attribution tuple, refusing anything odd with an
 * error that names the field. Pure functions: no I/O, no logging.
 */

import { readPath } from '../../adapters/dotted-path';
import { type BodyFormat, BodyFormatError, readBody } from '../../core/body';
import type { EventIdSource, SourceConfig } from '../../core/config/schema';
import { HookledgerError, WiringError } from '../../core/errors';
import { BODY_HASH_ID_PREFIX } from '../../core/model';

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

export const MAX_ATTRIBUTE_LENGTH = 200;
// Printable ASCII, no spaces: ids become parts of DynamoDB keys and log fields.
const ATTRIBUTE_VALUE = /^[\x21-\x7e]+$/;

/**
 * The body as attribution reads it, in the source's format (core/body.ts: the one reader the fan-out
 * and `send` use too), never as the request's Content-Type says. A body that cannot be read in that
 * format is answered 400 with the reader's code (`invalid_json`, `too_deep`, `forbidden_key`, ...).
 */
export function parseBody(raw: Buffer, format: BodyFormat): Record<string, unknown> {
  try {
    return readBody(raw, format);
  } catch (error) {
    if (error instanceof BodyFormatError) throw new InputError(error.code, error.message);
    throw error;
  }
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
      if (bodyHash === undefined) {
        throw new WiringError(
          `extractAttribution: source ${source.id} derives its ${FIELD_NAMES[field]} from the body, but no body hash was passed`,
        );
      }
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
