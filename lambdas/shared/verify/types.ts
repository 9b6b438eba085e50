import type { SecretVersion } from '../../../core/model';

/** The signing secrets of one source: AWSCURRENT and, during a rotation overlap, AWSPREVIOUS. */
export interface SigningSecrets {
  readonly current: string;
  readonly previous?: string;
  /**
   * Epoch ms at which the rotation overlap ends: from then on `previous` verifies nothing. Set by
   * the adapters from the rotation's record; a `previous` without it is not accepted at all.
   */
  readonly previousUntil?: number;
}

export interface VerifyInput {
  /** The exact bytes the provider sent (API Gateway's base64 already undone). */
  readonly rawBody: Buffer;
  /** Header names lower-cased; repeated headers joined with ','. */
  readonly headers: Readonly<Record<string, string>>;
  /** Epoch milliseconds. */
  readonly now: number;
  readonly toleranceSeconds: number;
}

export type VerifyFailureCode =
  | 'missing_signature'
  | 'malformed_signature'
  | 'signature_mismatch'
  | 'timestamp_out_of_tolerance';

export type VerifyResult =
  | { readonly ok: true; readonly secretVersion: SecretVersion }
  | { readonly ok: false; readonly code: VerifyFailureCode; readonly message: string };

/** A verifier never logs, never throws on bad input, and compares in constant time. */
export interface Verifier {
  verify(input: VerifyInput, secrets: SigningSecrets): VerifyResult;
}
