/**
 * Lambda entry of every HTTP destination consumer (`kind: 'http'`): the consumer runtime with the
 * built-in POSTing handle (http.ts). Built lazily from the environment the CDK stack sets, so the
 * module loads without it (bundle measurements, tests).
 */
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createDocumentClient } from '../../adapters/clients';
import { Breakers } from '../../adapters/ledger-controls';
import { SecretsManagerPort } from '../../adapters/secrets-manager';
import { findConsumer } from '../../core/config/routing';
import { ENV, requireEnv } from '../../core/env';
import { HOUR_MS } from '../../core/model';
import { bundledConfig } from '../shared/bundled-config';
import { eventSourcePause } from '../shared/event-source-pause';
import { createLogger } from '../shared/logger';
import { createCircuitOpenMetric } from '../shared/metrics';
import { createHttpHandle } from './http';
import { lambdaConsumer } from './lambda';
import type { ConsumerHandle, ConsumerLambdaHandler } from './runtime';

let built: ConsumerLambdaHandler | undefined;

export const handler: ConsumerLambdaHandler = (event, context) => {
  built ??= build();
  return built(event, context);
};

function build(): ConsumerLambdaHandler {
  const consumerId = requireEnv(ENV.consumerId);
  const consumer = findConsumer(bundledConfig(), consumerId);
  if (consumer?.kind !== 'http') throw new Error(`consumer ${consumerId} is not an http consumer in the bundled configuration`);
  const logger = createLogger(`hookledger-${consumerId}`);
  const onBreakerOpen = createCircuitOpenMetric(requireEnv(ENV.stackName), consumerId);
  const handle: ConsumerHandle = createHttpHandle({
    consumer,
    secrets: new SecretsManagerPort({
      client: new SecretsManagerClient({}),
      secretIds: { [consumerId]: requireEnv(ENV.consumerSecret) },
      overlapMs: { [consumerId]: consumer.secretOverlapHours * HOUR_MS },
    }),
    breaker: new Breakers({ client: createDocumentClient(), tableName: requireEnv(ENV.ledgerTable) }),
    pause: eventSourcePause({ lambda: new LambdaClient({}), queueArn: requireEnv(ENV.queueArn) }),
    onBreakerOpen,
    logger,
  });
  return lambdaConsumer(consumerId, handle);
}
