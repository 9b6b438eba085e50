import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** One document client per module; tests pass `clientConfig` (or a client) pointing at a local endpoint. */
export function createDocumentClient(client: DynamoDBClientConfig | DynamoDBClient = {}): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client instanceof DynamoDBClient ? client : new DynamoDBClient(client), {
    marshallOptions: { removeUndefinedValues: true },
  });
}
