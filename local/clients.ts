/**
 * SDK clients for the loopback emulators. Region and credentials are explicit so nothing is read
 * from the developer's AWS profile or environment (a stray AWS_PROFILE must never reach a real
 * account from the local stack).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';

/** The region every local resource lives in (ARNs, queue URLs, `awsRegion` in events). */
export const LOCAL_REGION = 'us-east-1';

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

export function localDynamoClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 3 });
}

/**
 * The SQS client takes the endpoint explicitly and never the queue URL's host: fauxqs can hand out
 * URLs whose host (`sqs.<region>.localhost`) does not resolve here.
 */
export function localSqsClient(endpoint: string): SQSClient {
  return new SQSClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    useQueueUrlAsEndpoint: false,
    maxAttempts: 3,
  });
}
