/**
 * The Secrets Manager port's reads over the AWS SDK's client: GetSecretValue, and its
 * ResourceNotFoundException for a stage the secret does not have. Apart from ./secrets-manager.ts so
 * that the port can be built without loading the client (lambdas/ingest/first-request.ts loads this).
 */
import { GetSecretValueCommand, ResourceNotFoundException, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SecretReads } from './secrets-manager';

export function clientReads(client: SecretsManagerClient): SecretReads {
  return {
    read: async (secretId, stage) => {
      const out = await client.send(new GetSecretValueCommand({ SecretId: secretId, ...(stage ? { VersionStage: stage } : {}) }));
      return { value: out.SecretString, createdAt: out.CreatedDate?.getTime() };
    },
    isMissing: (error) => error instanceof ResourceNotFoundException,
  };
}
