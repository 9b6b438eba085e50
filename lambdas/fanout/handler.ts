/** Lambda entry for the fan-out (DynamoDB stream event source). */
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createDocumentClient } from '../../adapters/clients';
import { S3PayloadBlobs } from '../../adapters/payload-blobs';
import { Payloads } from '../../adapters/payloads';
import { ENV, requireEnv, requireJsonEnv } from '../../core/env';
import { bundledConfig } from '../shared/bundled-config';
import { createLogger } from '../shared/logger';
import { createSkippedDeliveriesMetric } from '../shared/metrics';
import { consumerVersionPaths, consumerViews, createFanoutHandler, FANOUT_READ_RETRY_MS, sourceBodyFormats } from './app';

/** GetObject on payloads/* (large bodies), PutObject on views/* (claim-checked views). */
const bucket = new S3PayloadBlobs({ client: new S3Client({}), bucket: requireEnv(ENV.payloadBucket) });

/** Parsed once at cold start. */
const config = bundledConfig();

export const handler = createFanoutHandler({
  sqs: new SQSClient({}),
  queueUrls: requireJsonEnv(ENV.queueUrls),
  payloads: new Payloads({ client: createDocumentClient(), tableName: requireEnv(ENV.eventsTable), blobs: bucket }),
  viewObjects: bucket,
  views: consumerViews(config),
  bodyFormats: sourceBodyFormats(config),
  versionPaths: consumerVersionPaths(config),
  readRetryMs: FANOUT_READ_RETRY_MS,
  logger: createLogger('hookledger-fanout'),
  onSkipped: createSkippedDeliveriesMetric(requireEnv(ENV.stackName)),
});
