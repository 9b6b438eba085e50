/**
 * Standard Webhooks `v1a`: ed25519 signatures beside the HMAC `v1`, over the same
 * `${webhook-id}.${webhook-timestamp}.${body}`, in `webhook-signature` as `v1a,<base64>` entries.
 * The source's secret is the sender's public key, `whpk_<base64 of 32 bytes>`; signing (tests,
 * `hookledger send`) takes the secret key, `whsk_<base64 of the 32-byte seed (or seed + public key)>`.
 */
import { sign as signBytes } from 'node:crypto';
import { outOfTolerance, SigningSecretError, signedContent } from './crypto';
import { ed25519PrivateKey, ed25519PublicKey, ed25519Secret, ed25519Verifies, verifyWithKeys } from './keys';
import { namesOf, readSignedRequest } from './standard-webhooks';
import type { OptionsOf, Scheme, Verifier } from './types';

const OPTIONS = {
  headerPrefix: { kind: 'enum', values: ['webhook', 'svix'], default: 'webhook' },
} as const;

function keyText(secret: string, prefix: 'whpk_' | 'whsk_'): string {
  if (!secret.startsWith(prefix)) throw new SigningSecretError(`a standard-webhooks v1a key starts with ${prefix}`);
  return secret.slice(prefix.length);
}

function createVerifier(options: OptionsOf<typeof OPTIONS>): Verifier {
  const names = namesOf(options.headerPrefix);
  return {
    verify(input, secrets) {
      const request = readSignedRequest(input, names, 'v1a');
      if (!('content' in request)) return request;
      const { content, candidates, seconds } = request;
      const keyOf = (secret: string) => ed25519PublicKey(keyText(secret, 'whpk_'), 'base64');
      const result = verifyWithKeys(secrets, keyOf, (key) => candidates.some((c) => ed25519Verifies(key, content, c)), names.SIGNATURE);
      if (!result.ok) return result;
      return outOfTolerance(names.TIMESTAMP, seconds, input) ?? result;
    },
  };
}

export const standardWebhooksV1a: Scheme<typeof OPTIONS> = {
  signedParts: (options) => {
    const { ID, TIMESTAMP } = namesOf(options.headerPrefix);
    return { body: 'bytes', headers: [ID, TIMESTAMP], summary: `the body, ${ID} and ${TIMESTAMP}`, timestamp: TIMESTAMP };
  },
  options: OPTIONS,
  secret: /* @__PURE__ */ ed25519Secret('base64', "the sender's ed25519 public key (whpk_ + base64 of 32 bytes)", 'whpk_'),
  verifier: createVerifier,
  sign(options, input) {
    const { ID, TIMESTAMP, SIGNATURE } = namesOf(options.headerPrefix);
    const ts = String(Math.floor(input.now / 1000));
    const key = ed25519PrivateKey(keyText(input.secret, 'whsk_'), 'base64');
    const signature = signBytes(null, signedContent(`${input.messageId}.${ts}.`, input.body), key).toString('base64');
    return { [ID]: input.messageId, [TIMESTAMP]: ts, [SIGNATURE]: `v1a,${signature}` };
  },
};
