/**
 * Builds a consumer's Lambda handler from the environment the CDK stack sets, lazily on the first
 * invocation, so that the local stack and tests can import a team's module without that environment.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createDocumentClient } from '../../adapters/clients';
import { KeyRegistry } from '../../adapters/key-registry';
import { onFirstUse } from '../../adapters/lazy';
import { Ledger } from '../../adapters/ledger';
import { VersionWatermarks } from '../../adapters/ledger-controls';
import { s3PayloadBlobs } from '../../adapters/payload-blobs';
import { findConsumer } from '../../core/config/routing';
import { ENV, requireEnv } from '../../core/env';
import { ConfigurationError } from '../../core/errors';
import { bundledConfig } from '../shared/bundled-config';
import { createLambdaLogger, flushingLogs, type LambdaLogger } from '../shared/lambda-logger';
import { handlerTracing, traced } from '../shared/tracing';
import { type ConsumerHandle, type ConsumerLambdaHandler, createConsumerHandler } from './runtime';

/** `logger`: the handle's own, when it logs (the HTTP worker), so that one flush covers both. */
export function lambdaConsumer(
  consumerId: string,
  handle: ConsumerHandle,
  logger: LambdaLogger = createLambdaLogger(`hookledger-${consumerId}`),
): ConsumerLambdaHandler {
  let built: ConsumerLambdaHandler | undefined;
  return flushingLogs(logger, (event, context) => {
    built ??= build(consumerId, handle, logger);
    return built(event, context);
  });
}

function build(consumerId: string, handle: ConsumerHandle, logger: LambdaLogger): ConsumerLambdaHandler {
  const config = bundledConfig();
  const consumer = findConsumer(config, consumerId);
  if (!consumer) {
    throw new ConfigurationError(
      `consumer ${consumerId} is not in the bundled hookledger configuration; add it to hookledger.config.ts and deploy again`,
    );
  }
  const running = requireEnv(ENV.consumerId);
  if (running !== consumerId) throw new ConfigurationError(`CONSUMER_ID is ${running}, but this module is ${consumerId}`);
  const client = createDocumentClient();
  const bucket = requireEnv(ENV.payloadBucket);
  const sqs = onFirstUse(async () => new (await import('@aws-sdk/client-sqs')).SQSClient({}));
  const ledger = new Ledger({ client, tableName: requireEnv(ENV.ledgerTable) });
  // With `tracing: 'xray'` only: each delivery annotated with its event, tenant and consumer.
  const tracing = handlerTracing(config, `hookledger-${consumerId}`, [client]);
  const consume = createConsumerHandler(
    {
      consumer,
      ledger,
      // Ordered consumers with `version`: the per-key watermark lives among its own ledger rows.
      versions: new VersionWatermarks({ client, tableName: requireEnv(ENV.ledgerTable) }),
      events: new KeyRegistry({ client, tableName: requireEnv(ENV.eventsTable) }),
      // Retries and quarantines only: the SQS client loads on the first (adapters/lazy.ts).
      sqs: { send: async (command: never) => (await sqs()).send(command) } as Pick<SQSClient, 'send'>,
      queueUrl: requireEnv(ENV.queueUrl),
      dlqUrl: requireEnv(ENV.dlqUrl),
      principal: requireEnv(ENV.principal),
      logger,
      // Claim-checked views: this role may read views/<consumerId>/* and nothing else in the bucket.
      // S3 loads on the first such view (adapters/payload-blobs.ts).
      viewObjects: s3PayloadBlobs(bucket),
    },
    handle,
  );
  return traced(tracing, consume, 'queue messages');
}
