/** Lambda entry for the scheduled reconcile (EventBridge rule; see lib/constructs/reconciler.ts). */
import { SQSClient } from '@aws-sdk/client-sqs';
import { createDocumentClient } from '../../adapters/clients';
import { lazyStreamBatches, onFirstUse } from '../../adapters/lazy';
import { ENV, MissingEnvError, requireEnv, requireJsonEnv } from '../../core/env';
import { bundledConfig } from '../shared/bundled-config';
import { createLambdaLogger, flushingLogs } from '../shared/lambda-logger';
import { handlerTracing, traced } from '../shared/tracing';
import { createReconcileHandler } from './app';
import { createReconcileMetrics } from './metrics';

/** Set by the stack when `reconcile.repair` is on (the default); absent, the reconciler only checks. */
function repairFromEnv(): Parameters<typeof createReconcileHandler>[0]['repair'] {
  const raw = process.env[ENV.repairMaxPerRun];
  if (raw === undefined || raw === '') return undefined;
  const maxPerRun = Number(raw);
  if (!Number.isInteger(maxPerRun) || maxPerRun < 1) {
    throw new MissingEnvError(`environment variable ${ENV.repairMaxPerRun} must be a positive integer, got "${raw}"`);
  }
  const queueArns = requireJsonEnv<Record<string, string>>(ENV.queueArns);
  // The Lambda and DynamoDB Streams clients load when a run first needs them (adapters/lazy.ts).
  const paused = onFirstUse(async () => {
    const [{ LambdaClient }, { pausedConsumers }] = await Promise.all([import('@aws-sdk/client-lambda'), import('./paused')]);
    const lambda = new LambdaClient({});
    return () => pausedConsumers(lambda, queueArns);
  });
  return {
    maxPerRun,
    pausedConsumers: async () => (await paused())(),
    fanoutFailures: {
      sqs: new SQSClient({}),
      queueUrl: requireEnv(ENV.fanoutFailureQueueUrl),
      // The records a failure record names, read back from the EventStore stream (kept 24 h).
      streams: lazyStreamBatches(async () => {
        const [{ DynamoDBStreamsClient }, { dynamoStreamBatches }] = await Promise.all([
          import('@aws-sdk/client-dynamodb-streams'),
          import('../../adapters/stream-batch'),
        ]);
        return dynamoStreamBatches(new DynamoDBStreamsClient({}));
      }),
    },
  };
}

const logger = createLambdaLogger('hookledger-reconcile');
const config = bundledConfig();
const ddb = createDocumentClient();
// With `tracing: 'xray'` only: the run in one trace, its table reads traced.
const tracing = handlerTracing(config, 'hookledger-reconcile', [ddb]);

const reconcile = flushingLogs(
  logger,
  createReconcileHandler({
    ddb,
    tables: { events: requireEnv(ENV.eventsTable), ledger: requireEnv(ENV.ledgerTable) },
    metrics: createReconcileMetrics(requireEnv(ENV.stackName)),
    logger,
    repair: repairFromEnv(),
    // Every configured consumer's row of each receipt is looked up, so a row outside its delivery set is found.
    consumers: config.consumers.map((c) => c.id),
  }),
);

export const handler = traced(tracing, reconcile);
