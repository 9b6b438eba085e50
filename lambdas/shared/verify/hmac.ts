/** A plain HMAC over the body in one header, optionally behind a fixed prefix (`sha256=`). */
import {
  type HmacAlgorithm,
  type SignatureEncoding,
  decodeSignature,
  headerValue,
  malformedHeader,
  missingHeader,
  verifyHmac,
} from './crypto';
import type { Verifier } from './types';

export interface HmacOptions {
  readonly algorithm: HmacAlgorithm;
  readonly encoding: SignatureEncoding;
  /** Header name; matched lower-cased, as intake lower-cases every header. */
  readonly header: string;
  /** Expected before the signature, case-sensitive; '' for none. */
  readonly prefix: string;
}

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
