/** Real DynamoDB Local for integration tests: in memory, on a free port, tables made like the stack's. */
import { CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { localDynamoClient } from '../../local/clients';
import { freePort, startDynamoLocal } from '../../local/emulators';
import { localDocumentClient } from '../../local/wiring';

export async function startTestDynamo() {
  const server = await startDynamoLocal({ port: await freePort(), dbPath: null });
  const client = localDynamoClient(server.endpoint);
  const doc = localDocumentClient(server.endpoint);
  return { server, client, doc, stop: () => server.stop() };
}

export async function createTable(client: DynamoDBClient, name: string, stream = false): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      ...(stream ? { StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' } } : {}),
    }),
  );
}
