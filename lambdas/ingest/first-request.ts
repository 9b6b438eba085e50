/**
 * What intake loads at the first request of its execution environment, as one chunk of the bundle
 * (one `import()` in handler.ts): the Secrets Manager client, through which the port built at cold
 * start reads every source's secrets (cached after the first read). Nothing of ours that the cold
 * start also loads is imported here: code splitting gives every set of importers a chunk of its own,
 * so a module shared between the cold start and this chunk would load at cold start as a file apart
 * (Node 22 charges far more for one than Node 20; docs/cost-and-scale.md, bench section 5). For the
 * same reason the client takes the DynamoDB client's credentials, and intake's bundle gives it no
 * credential chain of its own (SHARED_CREDENTIALS_ENTRIES in lib/constructs/hookledger-function.ts,
 * the plugin in lib/constructs/bundle-plugins.mjs): the chain is the cold start's.
 */
import { SecretsManagerClient, type SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import type { SecretReads } from '../../adapters/secrets-manager';
import { clientReads } from '../../adapters/secrets-manager-client';

/** GetSecretValue over a client with the function's region and the given credentials (the function's role). */
export function secretReads(credentials: SecretsManagerClientConfig['credentials']): SecretReads {
  return clientReads(new SecretsManagerClient({ credentials }));
}
