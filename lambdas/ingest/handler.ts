/**
 * Lambda entry for intake. Configuration and the DynamoDB client are built once, at cold start; the
 * clients of rarer paths load on first use (adapters/lazy.ts; their modules are chunks of the
 * bundle): S3 for a body stored over payloads.inlineMaxBytes, Secrets Manager at the first request
 * of the environment (then cached), the key endpoint for jwks sources only.
 */
import { createDocumentClient } from '../../adapters/clients';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import { lazyPayloadBlobs, lazySecrets, lazyVerificationKeys } from '../../adapters/lazy';
import { ENV, requireEnv, requireJsonEnv } from '../../core/env';
import { bundledSchemes } from '../../core/schemes/bundled';
import { bundledConfig } from '../shared/bundled-config';
import { createLambdaLogger, flushingLogs } from '../shared/lambda-logger';
import { createIntakeMetrics, createSecretRefreshFailureMetric } from '../shared/metrics';
import { createIngestHandler } from './app';

const config = bundledConfig();
const logger = createLambdaLogger('hookledger-ingest');
/** The `Stack` dimension of the intake metrics: two copies in one account keep their own series. */
const stackName = requireEnv(ENV.stackName);
const onSecretRefreshFailure = createSecretRefreshFailureMetric(stackName);
const payloadBucket = requireEnv(ENV.payloadBucket);
const secretIds = requireJsonEnv<Record<string, string>>(ENV.sourceSecrets);
const payloadHashKeySecretId = requireEnv(ENV.payloadHashKeySecret);
// The configured sources' schemes only: the bundle holds no other (core/schemes/bundled.ts).
const schemes = bundledSchemes();

export const handler = flushingLogs(
  logger,
  createIngestHandler({
    config,
    schemes,
    store: intakeStore(
      eventStores({
        client: createDocumentClient(),
        tableName: requireEnv(ENV.eventsTable),
        shardsOf: (tenantId) => config.windowIndex.hotTenants[tenantId] ?? 1,
        // Bodies whose stored size passes payloads.inlineMaxBytes (core/blobs.ts); PutObject on payloads/* only.
        inlineMaxBytes: config.payloads.inlineMaxBytes,
        blobs: lazyPayloadBlobs(async () => (await import('../../adapters/payload-blobs')).s3PayloadBlobs(payloadBucket)),
      }),
    ),
    secrets: lazySecrets(async () => {
      const [{ SecretsManagerClient }, { overlapMsBySource, SecretsManagerPort }] = await Promise.all([
        import('@aws-sdk/client-secrets-manager'),
        import('../../adapters/secrets-manager'),
      ]);
      return new SecretsManagerPort({
        client: new SecretsManagerClient({}),
        secretIds,
        payloadHashKeySecretId,
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
      });
    }),
    logger,
    // Plaid's keys (jwks sources only), cached by kid for the life of the container.
    verificationKeys: lazyVerificationKeys(async () => new (await import('../../adapters/verification-keys')).HttpVerificationKeys()),
    // One EMF line per request: IntakeRequests by Stack and Outcome (the dashboard's intake outcomes widget).
    onOutcome: createIntakeMetrics(stackName),
  }),
);
