/**
 * Mailgun: HMAC-SHA256 (hex, keyed with the webhook signing key) over `${timestamp}${token}`, the
 * three values carried in the body itself: the JSON body's `signature` object
 * (`{ timestamp, token, signature }`, today's webhooks) or, with `carrier: 'form'`, top-level form
 * fields of the same names (legacy form posts, `application/x-www-form-urlencoded` only).
 *
 * THE BODY IS NOT SIGNED. Only the timestamp and the token are: whoever holds one request (within
 * its timestamp window) can rewrite its `event-data` and the signature still verifies. So the only
 * signed values attribution may read are `signature.token` (a fresh random string per delivery:
 * the event id) and `signature.timestamp`; event type, tenant and key must be fixed values
 * (`{ value: '...' }`) on the source. See https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks
 */
import { createHmac } from 'node:crypto';
import { MEDIA_TYPES, mediaTypeOf } from '../body';
import { decodeSignature, outOfTolerance, parseUnixSeconds, rejected, verifyHmac } from './crypto';
import type { OptionsOf, Scheme, SignedParts, Verifier, VerifyInput } from './types';

const OPTIONS = {
  /** Where the signature fields are: the JSON body's `signature` object, or top-level form fields. */
  carrier: { kind: 'enum', values: ['json', 'form'], default: 'json' },
} as const;

export type MailgunOptions = OptionsOf<typeof OPTIONS>;

const MAX_TOKEN = 200;
const FIELDS = ['timestamp', 'token', 'signature'] as const;

/** Only to word a refusal: which fields are read follows from `carrier`, never from the unsigned header. */
const saysForm = (input: Pick<VerifyInput, 'headers'>): boolean => mediaTypeOf(input.headers['content-type']) === MEDIA_TYPES.form;

const prefixOf = (options: MailgunOptions): string => (options.carrier === 'json' ? 'signature.' : '');

function partsOf(options: MailgunOptions): SignedParts {
  const where = options.carrier === 'json' ? 'the JSON body' : 'the form body';
  const prefix = prefixOf(options);
  return {
    body: false,
    bodyFields: FIELDS.map((f) => `${prefix}${f}`),
    headers: [],
    summary: `ONLY ${prefix}timestamp and ${prefix}token in ${where}: the event data is NOT signed`,
    timestamp: `${prefix}timestamp in ${where}`,
  };
}

type Fields = Partial<Record<(typeof FIELDS)[number], string>>;

/** The three fields as text, or a reason they cannot be read. */
function readFields(options: MailgunOptions, input: VerifyInput): Fields | string {
  const text = input.rawBody.toString('utf8');
  if (options.carrier === 'form') {
    const form = new URLSearchParams(text);
    const out: Fields = {};
    for (const field of FIELDS) {
      const values = form.getAll(field);
      if (values.length > 1) return `the form has more than one ${field} field`;
      if (values[0] !== undefined) out[field] = values[0];
    }
    return out;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return saysForm(input)
      ? "the body is not JSON, so it carries no signature object (a form body carries Mailgun's signature in form fields: set carrier: 'form' on the scheme)"
      : 'the body is not JSON, so it carries no signature object';
  }
  const signature = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>).signature : undefined;
  if (!signature || typeof signature !== 'object' || Array.isArray(signature)) return 'the body has no signature object';
  const out: Fields = {};
  for (const field of FIELDS) {
    const value = (signature as Record<string, unknown>)[field];
    // Mailgun documents the timestamp as an int and sends it as a string; both are accepted.
    if (typeof value === 'string') out[field] = value;
    else if (typeof value === 'number' && Number.isSafeInteger(value)) out[field] = String(value);
  }
  return out;
}

export function mailgunVerifier(options: MailgunOptions): Verifier {
  const prefix = prefixOf(options);
  return {
    verify(input, secrets) {
      const fields = readFields(options, input);
      if (typeof fields === 'string') return rejected('missing_signature', fields);
      for (const field of FIELDS) {
        if (fields[field] === undefined || fields[field] === '') return rejected('missing_signature', `the body has no ${prefix}${field}`);
      }
      const { timestamp = '', token = '', signature = '' } = fields;
      const seconds = parseUnixSeconds(timestamp);
      if (seconds === undefined) return rejected('malformed_signature', `${prefix}timestamp is not unix seconds`);
      if (token.length > MAX_TOKEN || !/^[\x21-\x7e]+$/.test(token)) {
        return rejected('malformed_signature', `${prefix}token is not up to ${MAX_TOKEN} printable characters`);
      }
      const candidate = decodeSignature(signature, 'hex');
      if (!candidate) return rejected('malformed_signature', `${prefix}signature is not hex`);
      const content = Buffer.from(`${timestamp}${token}`, 'utf8');
      const result = verifyHmac({ algorithm: 'sha256', content, candidates: [candidate], header: `${prefix}signature` }, secrets);
      if (!result.ok) return rejected('signature_mismatch', `${prefix}signature does not match ${prefix}timestamp and ${prefix}token`);
      const stale = outOfTolerance(`${prefix}timestamp`, seconds, input);
      return stale ?? result;
    },
  };
}

/** Mailgun's signature of one timestamp and token (hex). */
export const mailgunSignature = (signingKey: string, timestamp: string, token: string): string =>
  createHmac('sha256', signingKey).update(`${timestamp}${token}`).digest('hex');

export const mailgun: Scheme<typeof OPTIONS> = {
  signedParts: partsOf,
  options: OPTIONS,
  // The verifier reads the signature fields from the body in the carrier's format, and only that one.
  bodyFormat: (options) => options.carrier,
  bodyFormatFixed: true,
  verifier: mailgunVerifier,
  /** Nothing goes in a header: the signature is in the body (`signBody`). */
  sign: (options) => ({ 'content-type': MEDIA_TYPES[options.carrier] }),
  /** The body with its signature: the token is `input.messageId`, the timestamp `input.now`. */
  signBody(options, input) {
    const timestamp = String(Math.floor(input.now / 1000));
    const token = input.messageId;
    const signature = mailgunSignature(input.secret, timestamp, token);
    if (options.carrier === 'form') {
      const form = new URLSearchParams(input.body.toString('utf8'));
      for (const [name, value] of Object.entries({ timestamp, token, signature })) form.set(name, value);
      return Buffer.from(form.toString(), 'utf8');
    }
    const parsed: unknown = JSON.parse(input.body.toString('utf8'));
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new TypeError('a mailgun body is a JSON object');
    return Buffer.from(JSON.stringify({ ...parsed, signature: { timestamp, token, signature } }), 'utf8');
  },
};
