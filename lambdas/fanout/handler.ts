/** Lambda entry for the fan-out (DynamoDB stream event source). */
import { SQSClient } from '@aws-sdk/client-sqs';
import { ENV, requireEnv, requireJsonEnv } from '../../core/env';
import { createLogger } from '../shared/logger';
import { createFanoutHandler } from './app';
import { createSkippedDeliveriesMetric } from './metrics';

export const handler = createFanoutHandler({
  sqs: new SQSClient({}),
  queueUrls: requireJsonEnv(ENV.queueUrls),
  logger: createLogger('hookledger-fanout'),
  onSkipped: createSkippedDeliveriesMetric(requireEnv(ENV.stackName)),
});
