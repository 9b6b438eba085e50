/**
 * Lambda entry of every HTTP destination consumer (`kind: 'http'`): the consumer runtime with the
 * built-in POSTing handle (http.ts). Built lazily from the environment the CDK stack sets, so the
 * module loads without it (bundle measurements, tests). A consumer with a `transform` runs the entry
 * the stack generates for it (core/config/consumers.ts `transformWorkerSource`): `httpWorker(transform)`.
 */
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createDocumentClient } from '../../adapters/clients';
import { Breakers } from '../../adapters/ledger-controls';
import { SecretsManagerPort } from '../../adapters/secrets-manager';
import { clientReads } from '../../adapters/secrets-manager-client';
import { findConsumer } from '../../core/config/routing';
import { ENV, requireEnv } from '../../core/env';
import { ConfigurationError } from '../../core/errors';
import { HOUR_MS } from '../../core/model';
import type { Transform } from '../../core/transform';
import { bundledConfig } from '../shared/bundled-config';
import { eventSourcePause } from '../shared/event-source-pause';
import { createLambdaLogger } from '../shared/lambda-logger';
import { createCircuitOpenMetric } from '../shared/metrics';
import { createHttpHandle } from './http';
import { lambdaConsumer } from './lambda';
import type { ConsumerHandle, ConsumerLambdaHandler } from './runtime';

/** The worker's handler, with the consumer's transform when it has one. */
export function httpWorker(transform?: Transform): ConsumerLambdaHandler {
  let built: ConsumerLambdaHandler | undefined;
  return (event, context) => {
    built ??= build(transform);
    return built(event, context);
  };
}

export const handler: ConsumerLambdaHandler = httpWorker();

function build(transform: Transform | undefined): ConsumerLambdaHandler {
  const consumerId = requireEnv(ENV.consumerId);
  const consumer = findConsumer(bundledConfig(), consumerId);
  if (consumer?.kind !== 'http') {
    throw new ConfigurationError(
      `consumer ${consumerId} is not an http consumer in the bundled configuration (${consumer ? `kind ${consumer.kind}` : 'not found'}); ` +
        'CONSUMER_ID names the consumer this worker delivers for: deploy again from hookledger.config.ts',
    );
  }
  if ((consumer.transform !== undefined) !== (transform !== undefined)) {
    throw new ConfigurationError(
      `consumer ${consumerId}: the bundled transform does not match the configuration's (${consumer.transform ?? 'none'}); synthesize and deploy again`,
    );
  }
  const logger = createLambdaLogger(`hookledger-${consumerId}`);
  const onBreakerOpen = createCircuitOpenMetric(requireEnv(ENV.stackName), consumerId);
  const handle: ConsumerHandle = createHttpHandle({
    consumer,
    secrets: new SecretsManagerPort({
      reads: clientReads(new SecretsManagerClient({})),
      secretIds: { [consumerId]: requireEnv(ENV.consumerSecret) },
      overlapMs: { [consumerId]: consumer.secretOverlapHours * HOUR_MS },
    }),
    breaker: new Breakers({ client: createDocumentClient(), tableName: requireEnv(ENV.ledgerTable) }),
    pause: eventSourcePause({ lambda: new LambdaClient({}), queueArn: requireEnv(ENV.queueArn) }),
    onBreakerOpen,
    logger,
    ...(transform ? { transform } : {}),
  });
  return lambdaConsumer(consumerId, handle, logger);
}
