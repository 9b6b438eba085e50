/** A plain HMAC over the body in one header, optionally behind a fixed prefix (`sha256=`). */
import { createHmac } from 'node:crypto';
import { decodeSignature, headerValue, malformedHeader, missingHeader, verifyHmac } from './crypto';
import type { OptionsOf, Scheme, Verifier } from './types';

const OPTIONS = {
  algorithm: { kind: 'enum', values: ['sha256', 'sha512'], default: 'sha256' },
  encoding: { kind: 'enum', values: ['hex', 'base64'], default: 'hex' },
  /** Header name; matched lower-cased, as intake lower-cases every header. */
  header: { kind: 'header' },
  /** Expected before the signature, case-sensitive; '' for none. */
  prefix: { kind: 'text', default: '' },
} as const;

export type HmacOptions = OptionsOf<typeof OPTIONS>;

/** No timestamp is signed, so replay protection is the event-id dedupe, not this verifier. */
export function hmacVerifier(options: HmacOptions): Verifier {
  const header = options.header.toLowerCase();
  return {
    verify(input, secrets) {
      const value = headerValue(input, header);
      if (value === undefined) return missingHeader(header);
      if (!value.startsWith(options.prefix)) return malformedHeader(header, `does not start with "${options.prefix}"`);
      const signature = decodeSignature(value.slice(options.prefix.length), options.encoding);
      if (!signature) return malformedHeader(header, `is not ${options.encoding} after the prefix`);
      const check = { algorithm: options.algorithm, content: input.rawBody, candidates: [signature], header };
      return verifyHmac(check, secrets);
    },
  };
}

export function hmacSign(options: HmacOptions, input: { readonly body: Buffer; readonly secret: string }): Record<string, string> {
  const signature = createHmac(options.algorithm, input.secret).update(input.body).digest(options.encoding);
  return { [options.header.toLowerCase()]: `${options.prefix}${signature}` };
}

export const hmac: Scheme<typeof OPTIONS> = {
  signedParts: { body: 'bytes', headers: [], summary: 'the body only' },
  options: OPTIONS,
  verifier: hmacVerifier,
  sign: hmacSign,
};
