/** Lambda entry for intake. Configuration and clients are built once, at cold start. */
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createDocumentClient } from '../../adapters/clients';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import { S3PayloadBlobs } from '../../adapters/payload-blobs';
import { overlapMsBySource, SecretsManagerPort } from '../../adapters/secrets-manager';
import { HttpVerificationKeys } from '../../adapters/verification-keys';
import { ENV, requireEnv, requireJsonEnv } from '../../core/env';
import { bundledConfig } from '../shared/bundled-config';
import { createLogger } from '../shared/logger';
import { createIntakeMetrics, createSecretRefreshFailureMetric } from '../shared/metrics';
import { createIngestHandler } from './app';

const config = bundledConfig();
const logger = createLogger('hookledger-ingest');
/** The `Stack` dimension of the intake metrics: two copies in one account keep their own series. */
const stackName = requireEnv(ENV.stackName);
const onSecretRefreshFailure = createSecretRefreshFailureMetric(stackName);

export const handler = createIngestHandler({
  config,
  store: intakeStore(
    eventStores({
      client: createDocumentClient(),
      tableName: requireEnv(ENV.eventsTable),
      shardsOf: (tenantId) => config.windowIndex.hotTenants[tenantId] ?? 1,
      // Bodies whose stored size passes payloads.inlineMaxBytes (core/blobs.ts); PutObject on payloads/* only.
      inlineMaxBytes: config.payloads.inlineMaxBytes,
      blobs: new S3PayloadBlobs({ client: new S3Client({}), bucket: requireEnv(ENV.payloadBucket) }),
    }),
  ),
  secrets: new SecretsManagerPort({
    client: new SecretsManagerClient({}),
    secretIds: requireJsonEnv(ENV.sourceSecrets),
    payloadHashKeySecretId: requireEnv(ENV.payloadHashKeySecret),
    overlapMs: overlapMsBySource(config.sources),
    // Secrets Manager unreadable: the last known values serve for up to 1 h past the cache's expiry.
    // One log line and one EMF count per failed read; the error's name only, never a value.
    onRefreshFailure: (failure) => {
      logger.warn('signing secret could not be read', {
        source: failure.sourceId,
        error: failure.error,
        served: failure.servedStale ? 'last known values' : 'nothing (503)',
        ...(failure.ageMs !== undefined ? { age_ms: failure.ageMs } : {}),
      });
      onSecretRefreshFailure(failure.servedStale ? 'stale' : 'none');
    },
  }),
  logger,
  // Plaid's keys (jwks sources only), cached by kid for the life of the container.
  verificationKeys: new HttpVerificationKeys(),
  // One EMF line per request: IntakeRequests by Stack and Outcome (the dashboard's intake outcomes widget).
  onOutcome: createIntakeMetrics(stackName),
});
