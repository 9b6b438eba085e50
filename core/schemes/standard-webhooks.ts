/** Standard Webhooks (standardwebhooks.com): `v1,<base64>` HMAC-SHA256 over `${id}.${timestamp}.${body}`. */
import { createHmac } from 'node:crypto';
import {
  ANY_TEXT_SECRET,
  decodeSignature,
  headerValue,
  malformedHeader,
  missingHeader,
  outOfTolerance,
  parseUnixSeconds,
  readable,
  SigningSecretError,
  signedContent,
  utf8Key,
  verifyHmac,
} from './crypto';
import type { OptionsOf, Scheme, Verifier, VerifyInput, VerifyResult } from './types';

const SECRET_PREFIX = 'whsec_';

const OPTIONS = {
  /** `webhook` (the standard's `webhook-id`, ...), `svix` (`svix-id`, ...: Svix-hosted senders like Clerk and Resend) or `finch`. */
  headerPrefix: { kind: 'enum', values: ['webhook', 'svix', 'finch'], default: 'webhook' },
  /** `whsec-base64`: the standard's key (base64 after `whsec_`); `utf8`: the secret text's bytes (Polar). */
  secretFormat: { kind: 'enum', values: ['whsec-base64', 'utf8'], default: 'whsec-base64' },
} as const;

export type StandardWebhooksOptions = OptionsOf<typeof OPTIONS>;

export interface StandardWebhooksHeaders {
  readonly ID: string;
  readonly TIMESTAMP: string;
  readonly SIGNATURE: string;
}

// Finch names its id header `finch-event-id`; everyone else `<prefix>-id`.
export const namesOf = (prefix: string): StandardWebhooksHeaders => ({
  ID: prefix === 'finch' ? 'finch-event-id' : `${prefix}-id`,
  TIMESTAMP: `${prefix}-timestamp`,
  SIGNATURE: `${prefix}-signature`,
});

function createVerifier(options: StandardWebhooksOptions): Verifier {
  const names = namesOf(options.headerPrefix);
  const keyOf = options.secretFormat === 'utf8' ? utf8Key : standardWebhooksKey;
  return {
    verify(input, secrets) {
      const request = readSignedRequest(input, names, 'v1');
      if (!('content' in request)) return request;
      const { content, candidates, seconds } = request;
      const result = verifyHmac({ algorithm: 'sha256', content, candidates, header: names.SIGNATURE, keyOf }, secrets);
      if (!result.ok) return result;
      return outOfTolerance(names.TIMESTAMP, seconds, input) ?? result;
    },
  };
}

/** What a Standard Webhooks request signs, and the signatures of one version it carries. */
export interface SignedRequest {
  readonly content: Buffer;
  readonly candidates: Buffer[];
  readonly seconds: number;
}

/**
 * Reads the id, timestamp and signature headers (`names`) and the `version` entries of the
 * signature header; the refusal to answer with when one is missing or malformed. Shared by `v1`
 * (HMAC) and `v1a` (ed25519).
 */
export function readSignedRequest(input: VerifyInput, names: StandardWebhooksHeaders, version: 'v1' | 'v1a'): SignedRequest | VerifyResult {
  const { ID, TIMESTAMP, SIGNATURE } = names;
  const id = headerValue(input, ID);
  const timestamp = headerValue(input, TIMESTAMP);
  const signature = headerValue(input, SIGNATURE);
  if (id === undefined) return missingHeader(ID);
  if (timestamp === undefined) return missingHeader(TIMESTAMP);
  if (signature === undefined) return missingHeader(SIGNATURE);

  const seconds = parseUnixSeconds(timestamp);
  if (seconds === undefined) return malformedHeader(TIMESTAMP, 'is not unix seconds');
  const candidates = versionedSignatures(signature, version);
  if (typeof candidates === 'string') return malformedHeader(SIGNATURE, candidates);
  return { content: signedContent(`${id}.${timestamp}.`, input.rawBody), candidates, seconds };
}

export const standardWebhooksVerifier: Verifier = /* @__PURE__ */ createVerifier({ headerPrefix: 'webhook', secretFormat: 'whsec-base64' });

export const standardWebhooks: Scheme<typeof OPTIONS> = {
  signedParts: (options) => {
    const { ID, TIMESTAMP } = namesOf(options.headerPrefix);
    return { body: 'bytes', headers: [ID, TIMESTAMP], summary: `the body, ${ID} and ${TIMESTAMP}`, timestamp: TIMESTAMP };
  },
  options: OPTIONS,
  secret: (options) =>
    options.secretFormat === 'utf8'
      ? ANY_TEXT_SECRET
      : {
          generated: 'whsec',
          expected: 'a Standard Webhooks secret (whsec_ + base64)',
          usable: (value) => readable(() => standardWebhooksKey(value)),
        },
  verifier: (options) =>
    options.headerPrefix === 'webhook' && options.secretFormat === 'whsec-base64' ? standardWebhooksVerifier : createVerifier(options),
  sign(options, input) {
    const { ID, TIMESTAMP, SIGNATURE } = namesOf(options.headerPrefix);
    const key = options.secretFormat === 'utf8' ? utf8Key(input.secret) : standardWebhooksKey(input.secret);
    const ts = String(Math.floor(input.now / 1000));
    const mac = createHmac('sha256', key)
      .update(signedContent(`${input.messageId}.${ts}.`, input.body))
      .digest('base64');
    return { [ID]: input.messageId, [TIMESTAMP]: ts, [SIGNATURE]: `v1,${mac}` };
  },
};

/**
 * At most this many signatures of one version are tried: a sender signs with one key per rotation
 * step, and each ed25519 (v1a) check is a pass over the whole body, so an unbounded list would cost
 * the header's size times the body's before anything is authenticated.
 */
export const MAX_SIGNATURES = 10;

/** Space-separated `<version>,<signature>` entries; entries of other versions (v1a beside v1, ...) are skipped. */
function versionedSignatures(header: string, version: 'v1' | 'v1a'): Buffer[] | string {
  const signatures: Buffer[] = [];
  for (const entry of header.split(/\s+/)) {
    const comma = entry.indexOf(',');
    if (comma <= 0) return 'has an entry that is not <version>,<signature>';
    if (entry.slice(0, comma) !== version) continue;
    if (signatures.length === MAX_SIGNATURES) return `has more than ${MAX_SIGNATURES} ${version} entries`;
    const bytes = decodeSignature(entry.slice(comma + 1), 'base64');
    if (!bytes) return `has a ${version} entry that is not base64`;
    signatures.push(bytes);
  }
  return signatures.length > 0 ? signatures : `has no ${version} entry`;
}

/**
 * The HMAC key of a Standard Webhooks secret, read exactly as the `standardwebhooks` library reads
 * it: an optional `whsec_` prefix is dropped and the rest is base64-decoded; a secret that does not
 * decode (or decodes to nothing) is an error, never a key. `hookledger send` signs with this too.
 */
export function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = decodeAsLibrary(encoded);
  if (!key) throw new SigningSecretError('standard-webhooks secret is not base64 (with or without the whsec_ prefix)');
  return key;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * The library's decoder (@stablelib/base64 `decode`), reproduced rule for rule so a secret means
 * the same key here as at the provider: standard alphabet only; at least 4 characters; at most two
 * trailing '='; the length need not be a multiple of 4; unused trailing bits are ignored; and a
 * lone last character (length % 4 == 1 once padding is removed) is ignored without being checked.
 * Proved against the library in test/unit/verify/standard-webhooks.test.ts.
 */
function decodeAsLibrary(text: string): Buffer | undefined {
  let padding = 0;
  while (padding < text.length && text[text.length - 1 - padding] === '=') padding++;
  if (text.length < 4 || padding > 2) return undefined;
  const length = text.length - padding;
  const used = length % 4 === 1 ? length - 1 : length;
  const values: number[] = [];
  for (let i = 0; i < used; i++) {
    const value = ALPHABET.indexOf(text[i] as string);
    if (value < 0) return undefined;
    values.push(value);
  }
  const bytes: number[] = [];
  for (let i = 0; i < values.length; i += 4) {
    const [a = 0, b = 0, c, d] = values.slice(i, i + 4);
    bytes.push(((a << 2) | (b >> 4)) & 0xff);
    if (c !== undefined) bytes.push(((b << 4) | (c >> 2)) & 0xff);
    if (c !== undefined && d !== undefined) bytes.push(((c << 6) | d) & 0xff);
  }
  return bytes.length > 0 ? Buffer.from(bytes) : undefined;
}
