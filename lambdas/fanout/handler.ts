/** Lambda entry for the fan-out (DynamoDB stream event source). */
import { SQSClient } from '@aws-sdk/client-sqs';
import { ENV, requireJsonEnv } from '../shared/env';
import { createLogger } from '../shared/logger';
import { createFanoutHandler } from './app';

export const handler = createFanoutHandler({
  sqs: new SQSClient({}),
  queueUrls: requireJsonEnv(ENV.queueUrls),
  logger: createLogger('hookledger-fanout'),
});
