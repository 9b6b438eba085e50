/**
 * The console's "start DLQ redrive" is StartMessageMoveTask. fauxqs lacks it, so the path is proved
 * on local-aws-sqs, a second implementation of the API.
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localSqsClient } from '../../local/clients';
import { freePort, type SqsEmulator, startMoveTaskSqs } from '../../local/emulators';
import { receiveAll, uniqueName, waitFor } from './support';

let emulator: SqsEmulator;
let sqs: SQSClient;

beforeAll(async () => {
  emulator = await startMoveTaskSqs({ port: await freePort() });
  sqs = localSqsClient(emulator.endpoint);
});

afterAll(async () => {
  sqs?.destroy();
  await emulator?.stop();
});

async function arnOf(url: string): Promise<string> {
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  return Attributes?.QueueArn as string;
}

describe('StartMessageMoveTask (local-aws-sqs)', () => {
  it('moves dead-lettered messages back to the queue they came from', async () => {
    const name = uniqueName('billing-meter');
    const dlqUrl = (
      await sqs.send(
        new CreateQueueCommand({
          QueueName: `${name}-dlq`,
          Attributes: { RedriveAllowPolicy: JSON.stringify({ redrivePermission: 'allowAll' }) },
        }),
      )
    ).QueueUrl as string;
    const dlqArn = await arnOf(dlqUrl);
    const queueUrl = (
      await sqs.send(
        new CreateQueueCommand({
          QueueName: name,
          Attributes: { VisibilityTimeout: '1', RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }) },
        }),
      )
    ).QueueUrl as string;
    const bodies = ['evt_01J8K7M2Q4', 'evt_01J8K7M2Q5'].map((eventId) => JSON.stringify({ v: 1, eventId, tenantId: 'tenant_204' }));
    await sqs.send(
      new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: bodies.map((MessageBody, i) => ({ Id: String(i), MessageBody })) }),
    );

    // Dead-letter them the way a failing consumer does: receive once, let the lease expire.
    expect(await receiveAll(sqs, queueUrl, 2, 8000, null)).toHaveLength(2);
    await waitFor('both messages in the DLQ', async () => {
      await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
      );
      return Attributes?.ApproximateNumberOfMessages === '2' ? true : undefined;
    });

    const { TaskHandle } = await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlqArn }));
    expect(TaskHandle).toEqual(expect.any(String));
    const task = await waitFor('the move task to complete', async () => {
      const { Results } = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlqArn }));
      const latest = Results?.[0];
      return latest?.Status === 'COMPLETED' ? latest : undefined;
    });

    expect(task).toMatchObject({ SourceArn: dlqArn, ApproximateNumberOfMessagesMoved: 2 });
    const moved = await receiveAll(sqs, queueUrl, 2);
    expect(moved.map((m) => m.Body).sort()).toEqual([...bodies].sort());
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    expect(Attributes?.ApproximateNumberOfMessages).toBe('0');
  });
});
