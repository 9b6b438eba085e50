/**
 * The local stack's DynamoDB and SQS clients (local/clients.ts re-exports them with the S3 and
 * Streams ones): apart so that a CLI command reaches the tables and queues without loading the S3
 * and Streams clients it may never use (ops/target.ts loads those on first use). Region and
 * credentials are explicit, as local/clients.ts says why.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { type AccessKey, processCredentials, signingKeyOf } from './credentials';

/** The region every local resource lives in (ARNs, queue URLs, `awsRegion` in events). */
export const LOCAL_REGION = 'us-east-1';

export function localDynamoClient(endpoint: string, key: AccessKey = processCredentials()): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: signingKeyOf(key), maxAttempts: 3 });
}

/**
 * The SQS client takes the endpoint explicitly and never the queue URL's host: fauxqs can hand out
 * URLs whose host (`sqs.<region>.localhost`) does not resolve here.
 */
export function localSqsClient(endpoint: string, key: AccessKey = processCredentials()): SQSClient {
  return new SQSClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: signingKeyOf(key),
    useQueueUrlAsEndpoint: false,
    maxAttempts: 3,
  });
}
