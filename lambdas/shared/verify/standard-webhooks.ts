/** Standard Webhooks (standardwebhooks.com): `v1,<base64>` HMAC-SHA256 over `${id}.${timestamp}.${body}`. */
import {
  SigningSecretError,
  decodeSignature,
  headerValue,
  malformedHeader,
  missingHeader,
  outOfTolerance,
  parseUnixSeconds,
  signedContent,
  verifyHmac,
} from './crypto';
import type { Verifier } from './types';

const ID = 'webhook-id';
const TIMESTAMP = 'webhook-timestamp';
const SIGNATURE = 'webhook-signature';
const SECRET_PREFIX = 'whsec_';

export const standardWebhooksVerifier: Verifier = {
  verify(input, secrets) {
    const id = headerValue(input, ID);
    const timestamp = headerValue(input, TIMESTAMP);
    const signature = headerValue(input, SIGNATURE);
    if (id === undefined) return missingHeader(ID);
    if (timestamp === undefined) return missingHeader(TIMESTAMP);
    if (signature === undefined) return missingHeader(SIGNATURE);

    const seconds = parseUnixSeconds(timestamp);
    if (seconds === undefined) return malformedHeader(TIMESTAMP, 'is not unix seconds');
    const candidates = v1Signatures(signature);
    if (typeof candidates === 'string') return malformedHeader(SIGNATURE, candidates);

    const content = signedContent(`${id}.${timestamp}.`, input.rawBody);
    const result = verifyHmac({ algorithm: 'sha256', content, candidates, header: SIGNATURE, keyOf }, secrets);
    if (!result.ok) return result;
    return outOfTolerance(TIMESTAMP, seconds, input) ?? result;
  },
};

/** Space-separated `<version>,<signature>` entries; versions other than v1 (v1a, ...) are skipped. */
function v1Signatures(header: string): Buffer[] | string {
  const signatures: Buffer[] = [];
  for (const entry of header.split(/\s+/)) {
    const comma = entry.indexOf(',');
    if (comma <= 0) return 'has an entry that is not <version>,<signature>';
    if (entry.slice(0, comma) !== 'v1') continue;
    const bytes = decodeSignature(entry.slice(comma + 1), 'base64');
    if (!bytes) return 'has a v1 entry that is not base64';
    signatures.push(bytes);
  }
  return signatures.length > 0 ? signatures : 'has no v1 entry';
}

/** `whsec_<base64>` is the spec's form; a secret without the prefix is used as its UTF-8 bytes. */
function keyOf(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) return Buffer.from(secret, 'utf8');
  const key = decodeSignature(secret.slice(SECRET_PREFIX.length), 'base64');
  if (!key) throw new SigningSecretError(`standard-webhooks secret after "${SECRET_PREFIX}" is not base64`);
  return key;
}
