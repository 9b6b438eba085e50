/**
 * What intake loads at the first request of its execution environment, as one chunk of the bundle
 * (one `import()` in handler.ts): the Secrets Manager client and port, through which every request
 * reads its source's secrets (cached after the first read), and the verification-key port (jwks
 * sources only; a few hundred bytes). One module on purpose: code splitting gives every set of
 * importers its own chunk, so the modules the cold start shares with two lazy modules
 * (core/errors.ts, adapters/secrets.ts, the SDK's credential chain) would load at cold start as
 * several small files, each one read, mapped and compiled apart (about 0.6 ms a file on the bench
 * machine); through one door they are one file.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SecretsManagerPort, type SecretsManagerPortOptions } from '../../adapters/secrets-manager';

export { overlapMsBySource } from '../../adapters/secrets-manager';
export { HttpVerificationKeys } from '../../adapters/verification-keys';

/** The Secrets Manager port over a default client (the function's role, its region). */
export function secretsManagerPort(options: Omit<SecretsManagerPortOptions, 'client'>): SecretsManagerPort {
  return new SecretsManagerPort({ client: new SecretsManagerClient({}), ...options });
}
