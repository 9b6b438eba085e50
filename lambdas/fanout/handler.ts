/** Lambda entry for the fan-out (DynamoDB stream event source). */
import { SQSClient } from '@aws-sdk/client-sqs';
import { createDocumentClient } from '../../adapters/clients';
import { s3PayloadBlobs } from '../../adapters/payload-blobs';
import { Payloads } from '../../adapters/payloads';
import { ENV, requireEnv, requireJsonEnv } from '../../core/env';
import { bundledConfig } from '../shared/bundled-config';
import { createLambdaLogger, flushingLogs } from '../shared/lambda-logger';
import { createSkippedDeliveriesMetric } from '../shared/metrics';
import { handlerTracing, traced } from '../shared/tracing';
import { consumerVersionPaths, consumerViews, createFanoutHandler, FANOUT_READ_RETRY_MS, sourceBodyFormats } from './app';

/**
 * GetObject on payloads/* (large bodies), PutObject on views/* (claim-checked views). S3 loads on the
 * first such body (adapters/payload-blobs.ts): most batches never need it.
 */
const payloadBucket = requireEnv(ENV.payloadBucket);
const bucket = s3PayloadBlobs(payloadBucket);

/** Parsed once at cold start. */
const config = bundledConfig();

const logger = createLambdaLogger('hookledger-fanout');
const sqs = new SQSClient({});
const client = createDocumentClient();
// With `tracing: 'xray'` only: each record's event annotated, with the trace of the intake that wrote it.
const tracing = handlerTracing(config, 'hookledger-fanout', [sqs, client]);

const fanout = flushingLogs(
  logger,
  createFanoutHandler({
    sqs,
    queueUrls: requireJsonEnv(ENV.queueUrls),
    payloads: new Payloads({ client, tableName: requireEnv(ENV.eventsTable), blobs: bucket }),
    viewObjects: bucket,
    views: consumerViews(config),
    bodyFormats: sourceBodyFormats(config),
    versionPaths: consumerVersionPaths(config),
    readRetryMs: FANOUT_READ_RETRY_MS,
    logger,
    onSkipped: createSkippedDeliveriesMetric(requireEnv(ENV.stackName)),
  }),
);

export const handler = traced(tracing, fanout, 'stream records');
