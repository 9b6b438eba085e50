/**
 * A shared secret sent as a header value (Okta event hooks: the `Authorization` value configured on
 * the hook). NOTHING IS SIGNED: the request carries the secret itself, so it proves only that the
 * sender holds the secret. Anyone who sees one request (a log, a proxy) can forge any other; only
 * TLS protects it. Compared in constant time against the current secret, then the previous one.
 */
import { createHash } from 'node:crypto';
import type { SecretVersion } from '../model';
import { accepted, constantTimeEqual, headerValue, malformedHeader, missingHeader, rejected } from './crypto';
import type { OptionsOf, Scheme, SigningSecrets, Verifier, VerifyResult } from './types';

const OPTIONS = {
  header: { kind: 'header' },
  /** Expected before the secret (`Bearer `); '' for none. */
  prefix: { kind: 'text', default: '' },
} as const;

export type SharedSecretOptions = OptionsOf<typeof OPTIONS>;

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * Whether `presented` is one of the source's secrets. Both sides are hashed first, so the comparison
 * takes the same time whatever the lengths (timingSafeEqual needs equal lengths).
 */
export function matchSharedSecret(presented: string, secrets: SigningSecrets, where: string): VerifyResult {
  const ordered: Array<[SecretVersion, string]> = [['current', secrets.current]];
  if (secrets.previous !== undefined) ordered.push(['previous', secrets.previous]);
  const got = digest(presented);
  for (const [version, secret] of ordered) {
    if (constantTimeEqual(got, digest(secret))) return accepted(version);
  }
  return rejected('signature_mismatch', `${where} is not the source's shared secret`);
}

export function sharedSecretVerifier(options: SharedSecretOptions): Verifier {
  const header = options.header.toLowerCase();
  return {
    verify(input, secrets) {
      const value = headerValue(input, header);
      if (value === undefined) return missingHeader(header);
      if (!value.startsWith(options.prefix)) return malformedHeader(header, `does not start with "${options.prefix}"`);
      return matchSharedSecret(value.slice(options.prefix.length), secrets, `header ${header}`);
    },
  };
}

export const sharedSecret: Scheme<typeof OPTIONS> = {
  signedParts: (options) => ({
    body: 'bytes',
    authentication: 'shared-secret',
    headers: [],
    summary: `nothing: ${options.header} carries the shared secret itself (no signature, no timestamp; TLS only)`,
  }),
  options: OPTIONS,
  verifier: sharedSecretVerifier,
  sign: (options, input) => ({ [options.header.toLowerCase()]: `${options.prefix}${input.secret}` }),
};
