/** Lambda entry for the fan-out (DynamoDB stream event source). */
import { SQSClient } from '@aws-sdk/client-sqs';
import { ENV, requireEnv, requireJsonEnv } from '../../core/env';
import { bundledConfig } from '../shared/bundled-config';
import { createDocumentClient } from '../shared/clients';
import { EventStore } from '../shared/event-store';
import { createLogger } from '../shared/logger';
import { consumerVersionPaths, consumerViews, createFanoutHandler } from './app';
import { createSkippedDeliveriesMetric } from './metrics';

export const handler = createFanoutHandler({
  sqs: new SQSClient({}),
  queueUrls: requireJsonEnv(ENV.queueUrls),
  payloads: new EventStore({ client: createDocumentClient(), tableName: requireEnv(ENV.eventsTable) }),
  views: consumerViews(bundledConfig()),
  versionPaths: consumerVersionPaths(bundledConfig()),
  logger: createLogger('hookledger-fanout'),
  onSkipped: createSkippedDeliveriesMetric(requireEnv(ENV.stackName)),
});
