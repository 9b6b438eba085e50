import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localSqsClient } from '../../local/clients';
import { freePort, type SqsEmulator, startSqsEmulator } from '../../local/emulators';
import { createSqsPoller, type SqsPoller, type SqsPollerOptions } from '../../local/sqs-poller';
import { receiveAll, recordingLogger, uniqueName, waitFor } from './support';

let emulator: SqsEmulator;
let sqs: SQSClient;
const pollers: SqsPoller[] = [];

beforeAll(async () => {
  emulator = await startSqsEmulator({ port: await freePort() });
  sqs = localSqsClient(emulator.endpoint);
});

afterAll(async () => {
  await Promise.all(pollers.map((p) => p.stop()));
  sqs?.destroy();
  await emulator?.stop();
});

interface TestQueue {
  url: string;
  arn: string;
  dlqUrl: string;
}

/** A consumer queue with a 1 s lease and a DLQ after `maxReceiveCount` receives. */
async function consumerQueue(maxReceiveCount: number): Promise<TestQueue> {
  const name = uniqueName('billing-meter');
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const dlqArn = await arnOf(dlq.QueueUrl as string);
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: '1',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount }),
      },
    }),
  );
  return { url: queue.QueueUrl as string, arn: await arnOf(queue.QueueUrl as string), dlqUrl: dlq.QueueUrl as string };
}

async function arnOf(url: string): Promise<string> {
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  return Attributes?.QueueArn as string;
}

async function counts(url: string): Promise<{ visible: number; inFlight: number }> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(Attributes?.ApproximateNumberOfMessages),
    inFlight: Number(Attributes?.ApproximateNumberOfMessagesNotVisible),
  };
}

function poller(queue: TestQueue, handler: SqsPollerOptions['handler'], extra: Partial<SqsPollerOptions> = {}): SqsPoller {
  const subject = createSqsPoller({ sqs, queueUrl: queue.url, queueArn: queue.arn, handler, logger: recordingLogger(), ...extra });
  pollers.push(subject);
  return subject;
}

describe('SQS poller', () => {
  it('builds Lambda SQS records from the received messages', async () => {
    const queue = await consumerQueue(5);
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queue.url,
        MessageBody: JSON.stringify({ v: 1, eventId: 'evt_01J8K7M2Q4', tenantId: 'tenant_204' }),
        MessageAttributes: { consumerId: { DataType: 'String', StringValue: 'billing-meter' } },
      }),
    );
    const events: SQSEvent[] = [];
    const subject = poller(queue, async (event) => void events.push(event), { maxConcurrency: 1 });
    subject.start();
    await waitFor('a batch', () => events[0]);
    await subject.stop();

    const [record] = events[0]?.Records ?? [];
    expect(record).toMatchObject<Partial<SQSRecord>>({
      messageId: expect.any(String),
      receiptHandle: expect.any(String),
      body: JSON.stringify({ v: 1, eventId: 'evt_01J8K7M2Q4', tenantId: 'tenant_204' }),
      md5OfBody: expect.stringMatching(/^[0-9a-f]{32}$/),
      eventSource: 'aws:sqs',
      eventSourceARN: queue.arn,
      awsRegion: 'us-east-1',
      messageAttributes: { consumerId: expect.objectContaining({ dataType: 'String', stringValue: 'billing-meter' }) },
    });
    expect(record?.attributes).toMatchObject({
      ApproximateReceiveCount: '1',
      SentTimestamp: expect.stringMatching(/^\d{13}$/),
      ApproximateFirstReceiveTimestamp: expect.stringMatching(/^\d{13}$/),
      SenderId: expect.any(String),
    });
  });

  it('deletes the messages that succeeded and leaves the reported failures', async () => {
    const queue = await consumerQueue(5);
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: ['evt_01J8K7M2Q4', 'evt_fails', 'evt_01J8K7M2Q6'].map((id, i) => ({ Id: String(i), MessageBody: id })),
      }),
    );
    const bodies: string[] = [];
    const subject = poller(
      queue,
      async (event) => {
        bodies.push(...event.Records.map((r) => r.body));
        return { batchItemFailures: event.Records.filter((r) => r.body === 'evt_fails').map((r) => ({ itemIdentifier: r.messageId })) };
      },
      { maxConcurrency: 1 },
    );
    subject.start();
    await waitFor('three messages handled', () => (bodies.length >= 3 ? true : undefined));
    await subject.pause();

    expect(new Set(bodies)).toEqual(new Set(['evt_01J8K7M2Q4', 'evt_fails', 'evt_01J8K7M2Q6']));
    expect(bodies.filter((b) => b === 'evt_01J8K7M2Q4')).toHaveLength(1);
    // Only the failure is left, still leased: the poller never changes visibility, the lease runs out by itself.
    expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 1 });
    const [again] = await receiveAll(sqs, queue.url, 1);
    expect(again?.Body).toBe('evt_fails');
    const handlerSawIt = bodies.filter((b) => b === 'evt_fails').length;
    expect(again?.Attributes?.ApproximateReceiveCount).toBe(String(handlerSawIt + 1));
  });

  it('deletes nothing when an itemIdentifier is not in the batch', async () => {
    const queue = await consumerQueue(5);
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'evt_01J8K7M2Q4' }));
    const receiveCounts: string[] = [];
    const subject = poller(
      queue,
      async (event) => {
        receiveCounts.push(...event.Records.map((r) => r.attributes.ApproximateReceiveCount));
        return receiveCounts.length === 1 ? { batchItemFailures: [{ itemIdentifier: 'msg-not-in-this-batch' }] } : undefined;
      },
      { maxConcurrency: 1 },
    );
    subject.start();
    await waitFor('the redelivery', () => (receiveCounts.length >= 2 ? true : undefined));
    await subject.idle();
    await subject.pause();

    expect(receiveCounts).toEqual(['1', '2']);
    expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('moves a message to the DLQ after maxReceiveCount, the handler seeing each ApproximateReceiveCount', async () => {
    const queue = await consumerQueue(2);
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'evt_01J8K7M2Q4' }));
    const receiveCounts: string[] = [];
    const subject = poller(
      queue,
      async (event) => {
        receiveCounts.push(...event.Records.map((r) => r.attributes.ApproximateReceiveCount));
        throw new Error('tenant_204 ledger unavailable');
      },
      { maxConcurrency: 1 },
    );
    subject.start();
    const [dead] = await receiveAll(sqs, queue.dlqUrl, 1, 10_000);
    await subject.pause();

    expect(dead?.Body).toBe('evt_01J8K7M2Q4');
    expect(receiveCounts).toEqual(['1', '2']);
    expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('runs up to maxConcurrency batches at once', async () => {
    const queue = await consumerQueue(5);
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: Array.from({ length: 6 }, (_, i) => ({ Id: String(i), MessageBody: `evt_${i}` })),
      }),
    );
    let running = 0;
    let most = 0;
    let handled = 0;
    const subject = poller(
      queue,
      async (event) => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 200));
        running -= 1;
        handled += event.Records.length;
      },
      { batchSize: 1, maxConcurrency: 3 },
    );
    subject.start();
    await waitFor('six messages', () => (handled >= 6 ? true : undefined));
    await subject.idle();
    await subject.stop();

    expect(most).toBe(3);
    expect(await counts(queue.url)).toEqual({ visible: 0, inFlight: 0 });
  });
});
