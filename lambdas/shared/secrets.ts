import type { SigningSecrets } from './verify/types';

/**
 * Where a source's signing secrets come from. Secrets Manager in AWS (see secrets-manager.ts);
 * a git-ignored local file on the local stack (see local/secrets-file.ts).
 */
export interface SecretsPort {
  /** The source's secrets, from cache when fresh. */
  get(sourceId: string): Promise<SigningSecrets>;
  /** Bypasses the cache once (after a failed verification, in case the secret was just rotated). */
  refresh(sourceId: string): Promise<SigningSecrets>;
}

export class UnknownSecretError extends Error {
  override readonly name = 'UnknownSecretError';
}
