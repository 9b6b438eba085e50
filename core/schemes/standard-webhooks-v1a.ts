/**
 * Standard Webhooks `v1a`: ed25519 signatures beside the HMAC `v1`, over the same
 * `${webhook-id}.${webhook-timestamp}.${body}`, in `webhook-signature` as `v1a,<base64>` entries.
 * The source's secret is the sender's public key, `whpk_<base64 of 32 bytes>`; signing (tests,
 * `hookledger send`) takes the secret key, `whsk_<base64 of the 32-byte seed (or seed + public key)>`.
 */
import { sign as signBytes } from 'node:crypto';
import {
  SigningSecretError,
  decodeSignature,
  headerValue,
  malformedHeader,
  missingHeader,
  outOfTolerance,
  parseUnixSeconds,
  signedContent,
} from './crypto';
import { ed25519PrivateKey, ed25519PublicKey, ed25519Verifies, verifyWithKeys } from './keys';
import type { OptionsOf, Scheme, Verifier } from './types';

const OPTIONS = {
  headerPrefix: { kind: 'enum', values: ['webhook', 'svix'], default: 'webhook' },
} as const;

const namesOf = (prefix: string) => ({ ID: `${prefix}-id`, TIMESTAMP: `${prefix}-timestamp`, SIGNATURE: `${prefix}-signature` });

function keyText(secret: string, prefix: 'whpk_' | 'whsk_'): string {
  if (!secret.startsWith(prefix)) throw new SigningSecretError(`a standard-webhooks v1a key starts with ${prefix}`);
  return secret.slice(prefix.length);
}

/** Space-separated `<version>,<signature>` entries; only `v1a` ones are read. */
function v1aSignatures(header: string): Buffer[] | string {
  const signatures: Buffer[] = [];
  for (const entry of header.split(/\s+/)) {
    const comma = entry.indexOf(',');
    if (comma <= 0) return 'has an entry that is not <version>,<signature>';
    if (entry.slice(0, comma) !== 'v1a') continue;
    const bytes = decodeSignature(entry.slice(comma + 1), 'base64');
    if (!bytes) return 'has a v1a entry that is not base64';
    signatures.push(bytes);
  }
  return signatures.length > 0 ? signatures : 'has no v1a entry';
}

function createVerifier(options: OptionsOf<typeof OPTIONS>): Verifier {
  const { ID, TIMESTAMP, SIGNATURE } = namesOf(options.headerPrefix);
  return {
    verify(input, secrets) {
      const id = headerValue(input, ID);
      const timestamp = headerValue(input, TIMESTAMP);
      const signature = headerValue(input, SIGNATURE);
      if (id === undefined) return missingHeader(ID);
      if (timestamp === undefined) return missingHeader(TIMESTAMP);
      if (signature === undefined) return missingHeader(SIGNATURE);
      const seconds = parseUnixSeconds(timestamp);
      if (seconds === undefined) return malformedHeader(TIMESTAMP, 'is not unix seconds');
      const candidates = v1aSignatures(signature);
      if (typeof candidates === 'string') return malformedHeader(SIGNATURE, candidates);
      const content = signedContent(`${id}.${timestamp}.`, input.rawBody);
      const keyOf = (secret: string) => ed25519PublicKey(keyText(secret, 'whpk_'), 'base64');
      const result = verifyWithKeys(secrets, keyOf, (key) => candidates.some((c) => ed25519Verifies(key, content, c)), SIGNATURE);
      if (!result.ok) return result;
      return outOfTolerance(TIMESTAMP, seconds, input) ?? result;
    },
  };
}

export const standardWebhooksV1a: Scheme<typeof OPTIONS> = {
  signedParts: (options) => {
    const { ID, TIMESTAMP } = namesOf(options.headerPrefix);
    return { body: true, headers: [ID, TIMESTAMP], summary: `the body, ${ID} and ${TIMESTAMP}`, timestamp: TIMESTAMP };
  },
  options: OPTIONS,
  verifier: createVerifier,
  sign(options, input) {
    const { ID, TIMESTAMP, SIGNATURE } = namesOf(options.headerPrefix);
    const ts = String(Math.floor(input.now / 1000));
    const key = ed25519PrivateKey(keyText(input.secret, 'whsk_'), 'base64');
    const signature = signBytes(null, signedContent(`${input.messageId}.${ts}.`, input.body), key).toString('base64');
    return { [ID]: input.messageId, [TIMESTAMP]: ts, [SIGNATURE]: `v1a,${signature}` };
  },
};
