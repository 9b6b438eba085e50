/**
 * Public-key signatures (ed25519, ECDSA P-256): the secrets of these sources are the provider's
 * public key for verifying and, for `hookledger send` and the tests only, the private key for signing.
 */
import { createPrivateKey, createPublicKey, type KeyObject, verify as verifySignature } from 'node:crypto';
import type { SecretVersion } from '../model';
import { accepted, readable, rejected, SigningSecretError } from './crypto';
import { secretKey } from './template';
import type { SecretSpec, SigningSecrets, VerifyResult } from './types';

export type KeyEncoding = 'hex' | 'base64';

// DER headers that turn a raw 32-byte ed25519 key into SPKI / PKCS#8 (RFC 8410).
const ED25519_SPKI = /* @__PURE__ */ Buffer.from('302a300506032b6570032100', 'hex');
const ED25519_PKCS8 = /* @__PURE__ */ Buffer.from('302e020100300506032b657004220420', 'hex');

function rawKey(text: string, encoding: KeyEncoding, what: string): Buffer {
  const bytes = Buffer.from(text, encoding);
  if (bytes.length !== 32) throw new SigningSecretError(`${what} is not 32 bytes of ${encoding}`);
  return bytes;
}

export const ed25519PublicKey = (text: string, encoding: KeyEncoding): KeyObject =>
  createPublicKey({ key: Buffer.concat([ED25519_SPKI, rawKey(text, encoding, 'ed25519 public key')]), format: 'der', type: 'spki' });

/** The 32-byte seed (what most providers' docs call the private key); a 64-byte seed+public key is cut to its seed. */
export function ed25519PrivateKey(text: string, encoding: KeyEncoding): KeyObject {
  const bytes = Buffer.from(text, encoding);
  const seed = bytes.length === 64 ? bytes.subarray(0, 32) : bytes;
  if (seed.length !== 32) throw new SigningSecretError('ed25519 private key is not 32 (or 64) bytes');
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8, seed]), format: 'der', type: 'pkcs8' });
}

/** Base64 DER SubjectPublicKeyInfo, as SendGrid shows the verification key. */
export function spkiPublicKey(text: string): KeyObject {
  try {
    return createPublicKey({ key: Buffer.from(text, 'base64'), format: 'der', type: 'spki' });
  } catch {
    throw new SigningSecretError('public key is not base64 DER (SubjectPublicKeyInfo)');
  }
}

/**
 * Tries the current key, then the previous one; a key that cannot be read (a generated `whsec_`
 * value where the provider's public key belongs) counts as no match, so the other key still verifies
 * and the request is never a 503.
 */
export function verifyWithKeys(
  secrets: SigningSecrets,
  keyOf: (secret: string) => KeyObject,
  check: (key: KeyObject) => boolean,
  header: string,
): VerifyResult {
  const ordered: Array<[SecretVersion, string]> = [['current', secrets.current]];
  if (secrets.previous !== undefined) ordered.push(['previous', secrets.previous]);
  for (const [version, secret] of ordered) {
    let key: KeyObject;
    try {
      key = keyOf(secret);
    } catch {
      continue;
    }
    if (check(key)) return accepted(version);
  }
  return rejected('signature_mismatch', `the signature in header ${header} does not verify with the source's public key`);
}

/**
 * The secret of an ed25519 scheme: the provider's 32-byte public key, written strictly in `encoding`
 * (a stray character is a paste error, not a key). A generated value never is one.
 */
export function ed25519Secret(encoding: KeyEncoding, expected: string, strip = ''): SecretSpec {
  return {
    generated: false,
    expected,
    usable: (value) => {
      if (!value.startsWith(strip)) return false;
      const text = value.slice(strip.length);
      return readable(() => secretKey(text, encoding)) && readable(() => ed25519PublicKey(text, encoding));
    },
  };
}

export const ed25519Verifies = (key: KeyObject, content: Buffer, signature: Buffer): boolean =>
  signature.length === 64 && verifySignature(null, content, key, signature);
