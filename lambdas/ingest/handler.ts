/**
 * Lambda entry for intake. Configuration, the DynamoDB client and the ports are built once, at cold
 * start; the clients of other services load on first use: Secrets Manager's at the first request of
 * the environment (first-request.ts, one chunk of the bundle; the secrets are then cached), the key
 * port at the first jwks request, S3 with the first body stored over payloads.inlineMaxBytes
 * (adapters/payload-blobs.ts loads it).
 */
import { createDocumentClient } from '../../adapters/clients';
import { intakeStore, intakeStores } from '../../adapters/event-stores';
import { lazySecretReads, lazyVerificationKeys } from '../../adapters/lazy';
import { s3BlobWrites } from '../../adapters/payload-blobs';
import { overlapMsBySource, SecretsManagerPort } from '../../adapters/secrets-manager';
import { ENV, requireEnv, requireJsonEnv } from '../../core/env';
import { bundledSchemes } from '../../core/schemes/bundled';
import { bundledConfig } from '../shared/bundled-config';
import { createLambdaLogger, flushingLogs } from '../shared/lambda-logger';
import { createIntakeMetrics, createSecretRefreshFailureMetric } from '../shared/metrics';
import { handlerTracing, traced } from '../shared/tracing';
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
const client = createDocumentClient();
// With `tracing: 'xray'` only (else undefined, and no tracing code is bundled: lambdas/shared/tracing.ts).
const tracing = handlerTracing(config, 'hookledger-ingest', [client]);

const ingest = flushingLogs(
  logger,
  createIngestHandler({
    config,
    schemes,
    store: intakeStore(
      intakeStores({
        client,
        tableName: requireEnv(ENV.eventsTable),
        shardsOf: (tenantId) => config.windowIndex.hotTenants[tenantId] ?? 1,
        // Bodies whose stored size passes payloads.inlineMaxBytes (core/blobs.ts); PutObject on payloads/* only.
        inlineMaxBytes: config.payloads.inlineMaxBytes,
        blobs: s3BlobWrites(payloadBucket),
      }),
    ),
    // Built now, its reads loaded with the first: the Secrets Manager client (first-request.ts), with
    // the DynamoDB client's credentials.
    secrets: new SecretsManagerPort({
      reads: lazySecretReads(async () => (await import('./first-request')).secretReads(client.config.credentials)),
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
    }),
    logger,
    // Plaid's keys (jwks sources only), cached by kid for the life of the container. Folded away with
    // the scheme when no source is jwks (core/schemes/bundled.ts), so no chunk shares modules with the
    // cold start.
    ...(process.env.HOOKLEDGER_BUNDLED_SCHEME_JWKS !== 'false'
      ? {
          verificationKeys: lazyVerificationKeys(async () => new (await import('../../adapters/verification-keys')).HttpVerificationKeys()),
        }
      : {}),
    // One EMF line per request: IntakeRequests by Stack and Outcome (the dashboard's intake outcomes widget).
    onOutcome: createIntakeMetrics(stackName),
    ...(tracing ? { tracing } : {}),
  }),
);

export const handler = traced(tracing, ingest);
