/**
 * SDK clients for the loopback emulators. Region and credentials are explicit so nothing is read
 * from the developer's AWS profile or environment (a stray AWS_PROFILE must never reach a real
 * account from the local stack). The credentials are the local stack's per-start key (the emulators
 * accept no other, local/credentials.ts): this process's own by default, the one in the state
 * folder's credentials file for a process that did not start the stack (the CLI and the console, ops/target.ts).
 */
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { type AccessKey, processCredentials, signingKeyOf } from './credentials';
import { LOCAL_REGION } from './store-clients';

export { LOCAL_REGION, localDynamoClient, localSqsClient } from './store-clients';

/** DynamoDB Local's Streams API (the same endpoint as its tables). */
export function localStreamsClient(endpoint: string, key: AccessKey = processCredentials()): DynamoDBStreamsClient {
  return new DynamoDBStreamsClient({ endpoint, region: LOCAL_REGION, credentials: signingKeyOf(key), maxAttempts: 3 });
}

/**
 * The S3 client for fauxqs, which emulates S3 on its SQS endpoint. Path-style: virtual-hosted
 * names (`<bucket>.127.0.0.1`) do not resolve.
 */
export function localS3Client(endpoint: string, key: AccessKey = processCredentials()): S3Client {
  return new S3Client({ endpoint, region: LOCAL_REGION, credentials: signingKeyOf(key), forcePathStyle: true, maxAttempts: 3 });
}

/** The local payload bucket (large bodies, claim-checked views), like the CDK stack's PayloadBucket. */
export const LOCAL_PAYLOAD_BUCKET = 'hookledger-payloads';

/**
 * Creates the payload bucket on the emulator (kept if it is there: a file-backed stack reads its
 * objects back from disk at start, local/durable-s3.ts).
 */
export async function createLocalPayloadBucket(s3: S3Client, bucket = LOCAL_PAYLOAD_BUCKET): Promise<string> {
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    if (!(error instanceof Error && /BucketAlreadyOwnedByYou|BucketAlreadyExists/.test(error.name))) throw error;
  }
  return bucket;
}
