import { ConfigurationError } from '../core/errors';
import type { SigningSecrets } from '../core/schemes/types';

/**
 * Where a source's signing secrets come from. Secrets Manager in AWS (see secrets-manager.ts);
 * a git-ignored local file on the local stack (see local/secrets-file.ts).
 */
export interface SecretsPort {
  /** The source's secrets, from cache when fresh. */
  get(sourceId: string): Promise<SigningSecrets>;
  /** Bypasses the cache once (after a failed verification, in case the secret was just rotated). */
  refresh(sourceId: string): Promise<SigningSecrets>;
  /**
   * The deployment's payload-hash key: receipts keep HMAC-SHA256(key, body), never a plain hash, so
   * a low-entropy body cannot be recovered from a table dump by guessing. Never logged.
   */
  payloadHashKey(): Promise<Buffer>;
}

/** The secrets that may verify a request at `now`: `previous` only inside its rotation overlap. */
export function activeSecrets(secrets: SigningSecrets, now: number): SigningSecrets {
  if (secrets.previous === undefined) return secrets;
  if (secrets.previousUntil !== undefined && now < secrets.previousUntil) return secrets;
  return { current: secrets.current };
}

export class UnknownSecretError extends ConfigurationError {
  override readonly name = 'UnknownSecretError';
}
