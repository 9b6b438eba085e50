/**
 * What every scheme shares: reading headers, decoding signatures, HMAC over the raw bytes, the
 * constant-time comparison against each secret in rotation order, and the timestamp window.
 * Nothing here puts a secret, a computed signature or the body into a message.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ConfigurationError } from '../errors';
import type { SecretVersion } from '../model';
import type { SecretSpec, SigningSecrets, VerifyFailureCode, VerifyInput, VerifyResult } from './types';

export type HmacAlgorithm = 'sha1' | 'sha256' | 'sha512';
export type SignatureEncoding = 'hex' | 'base64' | 'base64url';

/** A signing secret that cannot be turned into a key: configuration, not request input. */
export class SigningSecretError extends ConfigurationError {
  override readonly name = 'SigningSecretError';
}

/** The secret of most schemes: any non-empty text, whose UTF-8 bytes are the HMAC key; a generated one works. */
export const ANY_TEXT_SECRET: SecretSpec = {
  generated: 'whsec',
  expected: 'the signing secret (non-empty text)',
  usable: (value) => value.length > 0,
};

/** Whether `read` turns a secret into a key without throwing (SecretSpec.usable). */
export function readable(read: () => unknown): boolean {
  try {
    read();
    return true;
  } catch {
    return false;
  }
}

export const accepted = (secretVersion: SecretVersion): VerifyResult => ({ ok: true, secretVersion });

export const rejected = (code: VerifyFailureCode, message: string): VerifyResult => ({ ok: false, code, message });

export const missingHeader = (header: string): VerifyResult => rejected('missing_signature', `missing header ${header}`);

export const malformedHeader = (header: string, problem: string): VerifyResult =>
  rejected('malformed_signature', `header ${header} ${problem}`);

/** The trimmed header value; absent and blank are the same thing to a verifier. */
export function headerValue(input: VerifyInput, name: string): string | undefined {
  const value = input.headers[name]?.trim();
  return value ? value : undefined;
}

/**
 * Strict decoding: Buffer.from silently skips characters it does not understand, so a value only
 * counts when it re-encodes to itself. Undefined means "not this encoding", never an empty buffer.
 */
export function decodeSignature(value: string, encoding: SignatureEncoding): Buffer | undefined {
  const bytes = Buffer.from(value, encoding);
  const canonical = encoding === 'hex' ? value.toLowerCase() : encoding === 'base64url' ? value.replace(/=+$/, '') : value;
  return bytes.length > 0 && bytes.toString(encoding) === canonical ? bytes : undefined;
}

/** Provider text (ids, timestamps) in UTF-8 followed by the body exactly as received. */
export const signedContent = (prefix: string, rawBody: Buffer): Buffer => Buffer.concat([Buffer.from(prefix, 'utf8'), rawBody]);

export const utf8Key = (secret: string): Buffer => Buffer.from(secret, 'utf8');

/** A length mismatch is a mismatch, not an error (timingSafeEqual throws on unequal lengths). */
export const constantTimeEqual = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

export interface HmacCheck {
  readonly algorithm: HmacAlgorithm;
  /** The exact bytes the provider signed. */
  readonly content: Buffer;
  /** Decoded signatures from the request; any one matching is enough. */
  readonly candidates: readonly Buffer[];
  /** Named in the mismatch message. */
  readonly header: string;
  readonly keyOf?: (secret: string) => Buffer;
}

/**
 * Tries `current` first, then `previous`, so a rotation overlap reports which secret signed. A secret
 * that is no key of this scheme (a generated `whsec_` where the provider's hex key belongs) matches
 * nothing, like any wrong key: the other one still verifies, and the request is never a 503.
 */
export function verifyHmac(check: HmacCheck, secrets: SigningSecrets): VerifyResult {
  const keyOf = check.keyOf ?? utf8Key;
  for (const [version, secret] of inRotationOrder(secrets)) {
    let key: Buffer;
    try {
      key = keyOf(secret);
    } catch {
      continue;
    }
    const expected = createHmac(check.algorithm, key).update(check.content).digest();
    if (check.candidates.some((candidate) => constantTimeEqual(candidate, expected))) return accepted(version);
  }
  return rejected('signature_mismatch', `no signature in header ${check.header} matches the body`);
}

function inRotationOrder(secrets: SigningSecrets): Array<[SecretVersion, string]> {
  const ordered: Array<[SecretVersion, string]> = [['current', secrets.current]];
  if (secrets.previous !== undefined) ordered.push(['previous', secrets.previous]);
  return ordered;
}

/** Unix seconds as digits only (parseInt would accept "1700000000abc"). */
export function parseUnixSeconds(value: string): number | undefined {
  if (!/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}

/** Rejects stale and future timestamps alike; exactly `toleranceSeconds` away is still accepted. */
export function outOfTolerance(header: string, seconds: number, input: VerifyInput): VerifyResult | undefined {
  const skew = Math.floor(input.now / 1000) - seconds;
  if (Math.abs(skew) <= input.toleranceSeconds) return undefined;
  const direction = skew > 0 ? `${skew} s in the past` : `${-skew} s in the future`;
  return rejected('timestamp_out_of_tolerance', `header ${header} is ${direction}, beyond the ${input.toleranceSeconds} s tolerance`);
}
