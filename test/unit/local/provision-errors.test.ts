/**
 * What provisioning says when the SQS emulator answers off the SQS contract: a CreateQueue without
 * its QueueUrl, a queue without its QueueArn. Fake clients stand in for the emulators (DynamoDB
 * answers every table as ACTIVE), so each answer can be one SQS never gives.
 */
import { CreateTableCommand, DescribeTableCommand, DescribeTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, GetQueueUrlCommand, QueueDoesNotExist, type SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { HookledgerError } from '../../../core/errors';
import config from '../../../hookledger.config';
import { ProvisionError, provisionLocalStack } from '../../../local/provision';

const tables = { events: 'EventStore-tenant_204', ledger: 'Ledger-tenant_204' };

/** A DynamoDB that creates every table at once. */
function fakeDynamo(): DynamoDBClient {
  const send = async (command: unknown) => {
    if (command instanceof DescribeTableCommand) return { Table: { TableStatus: 'ACTIVE' } };
    if (command instanceof DescribeTimeToLiveCommand) return { TimeToLiveDescription: { TimeToLiveStatus: 'DISABLED' } };
    if (command instanceof CreateTableCommand) return {};
    return {};
  };
  return { send } as unknown as DynamoDBClient;
}

/** An SQS where no queue exists yet, answering CreateQueue and GetQueueAttributes as given. */
function fakeSqs(answers: { readonly createQueue: () => object; readonly queueAttributes: () => object }): SQSClient {
  const send = async (command: unknown) => {
    if (command instanceof GetQueueUrlCommand) throw new QueueDoesNotExist({ message: 'no such queue', $metadata: {} });
    if (command instanceof CreateQueueCommand) return answers.createQueue();
    if (command instanceof GetQueueAttributesCommand) return answers.queueAttributes();
    return {};
  };
  return { send } as unknown as SQSClient;
}

describe('provisionLocalStack on an SQS emulator off the contract', () => {
  it('stops with a ProvisionError naming the queue when CreateQueue answers without a QueueUrl', async () => {
    const sqs = fakeSqs({ createQueue: () => ({}), queueAttributes: () => ({}) });
    const provisioned = provisionLocalStack({ config, dynamo: fakeDynamo(), sqs, tables, queuePrefix: 'hl-204-' });
    await expect(provisioned).rejects.toBeInstanceOf(ProvisionError);
    await expect(provisioned).rejects.toBeInstanceOf(HookledgerError);
    await expect(provisioned).rejects.toThrow('CreateQueue hl-204-fanout-failures answered without a QueueUrl');
    await expect(provisioned).rejects.toThrow('restart the local stack');
  });

  it('stops with a ProvisionError naming the queue URL when it has no QueueArn', async () => {
    const url = 'http://127.0.0.1:4566/000000000000/hl-204-fanout-failures';
    const sqs = fakeSqs({ createQueue: () => ({ QueueUrl: url }), queueAttributes: () => ({ Attributes: {} }) });
    const provisioned = provisionLocalStack({ config, dynamo: fakeDynamo(), sqs, tables, queuePrefix: 'hl-204-' });
    await expect(provisioned).rejects.toBeInstanceOf(ProvisionError);
    await expect(provisioned).rejects.toThrow(`queue ${url} answered GetQueueAttributes without its QueueArn`);
    await expect(provisioned).rejects.toThrow('restart the local stack');
  });
});
