import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createFanoutHandler } from '../../lambdas/fanout/app';
import { NOW, streamRecord } from '../support/factories';
import { capturingLogger } from '../support/logs';

const sqsMock = mockClient(SQSClient);
const queueUrls = {
  'billing-meter': 'http://sqs/q/billing-meter',
  'audit-writer': 'http://sqs/q/audit-writer',
  'risk-evaluator': 'http://sqs/q/risk-evaluator',
};

const receipt = (eventId: string, consumers: string[], tenantId = 'tenant_204') => ({
  pk: `evt#platform#${eventId}`,
  kind: 'event',
  source: 'platform',
  eventId,
  eventType: 'payment.succeeded',
  tenantId,
  keyId: 'key_42',
  receivedAt: NOW,
  consumers,
  payloadHmac: '5f3c9a0e',
  payloadBytes: 10,
  secretVersion: 'current',
  payloadExpiresAt: NOW + 30 * 86_400_000,
});

function handler() {
  return createFanoutHandler({ sqs: new SQSClient({ region: 'us-east-1' }), queueUrls, logger: capturingLogger().logger });
}

const sentTo = (url: string) =>
  sqsMock
    .commandCalls(SendMessageBatchCommand)
    .filter((c) => c.args[0].input.QueueUrl === url)
    .flatMap((c) => c.args[0].input.Entries!.map((e) => JSON.parse(e.MessageBody!)));

afterEach(() => sqsMock.reset());

describe('fan-out', () => {
  it('sends one message per subscribed consumer, carrying the captured attribution', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const res = await handler()({ Records: [streamRecord(receipt('evt_01J8K7M2Q4', ['billing-meter', 'audit-writer', 'risk-evaluator']), '100')] });
    expect(res.batchItemFailures).toEqual([]);
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(3);
    expect(sentTo(queueUrls['risk-evaluator'])).toEqual([
      {
        v: 1,
        source: 'platform',
        eventId: 'evt_01J8K7M2Q4',
        eventType: 'payment.succeeded',
        tenantId: 'tenant_204',
        keyId: 'key_42',
        receivedAt: NOW,
        consumerId: 'risk-evaluator',
        payloadHmac: '5f3c9a0e',
        payloadExpiresAt: NOW + 30 * 86_400_000,
      },
    ]);
  });

  it('batches 12 events into 2 requests per queue (10 + 2)', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const records = Array.from({ length: 12 }, (_, i) => streamRecord(receipt(`evt_${i}`, ['billing-meter', 'audit-writer']), String(100 + i)));
    await handler()({ Records: records });
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(4);
    expect(sentTo(queueUrls['billing-meter']).map((m) => m.eventId)).toHaveLength(12);
  });

  it('ignores MODIFY records and sends a requeue to its one consumer with the replay id', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const requeue = {
      pk: 'rq#rpl_7#platform:evt_9#audit-writer',
      kind: 'requeue',
      source: 'platform',
      eventId: 'evt_9',
      eventType: 'invoice.paid',
      tenantId: 'tenant_204',
      keyId: 'key_42',
      consumerId: 'audit-writer',
      replayId: 'rpl_7',
      receivedAt: NOW,
      createdAt: NOW,
      expiresAt: 1,
    };
    const res = await handler()({
      Records: [streamRecord(receipt('evt_8', ['billing-meter']), '1', 'MODIFY'), streamRecord(requeue, '2')],
    });
    expect(res.batchItemFailures).toEqual([]);
    expect(sentTo(queueUrls['billing-meter'])).toEqual([]);
    expect(sentTo(queueUrls['audit-writer'])).toMatchObject([{ eventId: 'evt_9', consumerId: 'audit-writer', replayId: 'rpl_7' }]);
  });

  it('sends a repair requeue as an ordinary delivery: the repair id, never a replay id', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const requeue = {
      pk: 'rq#rep_01J8K7RP01#platform:evt_01J8K7M2Q4#billing-meter',
      kind: 'requeue',
      source: 'platform',
      eventId: 'evt_01J8K7M2Q4',
      eventType: 'payment.succeeded',
      tenantId: 'tenant_204',
      keyId: 'key_42',
      consumerId: 'billing-meter',
      repairId: 'rep_01J8K7RP01',
      receivedAt: NOW,
      createdAt: NOW,
      expiresAt: 1,
    };
    const res = await handler()({ Records: [streamRecord(requeue, '3')] });
    expect(res.batchItemFailures).toEqual([]);
    const [message] = sentTo(queueUrls['billing-meter']);
    expect(message).toMatchObject({ eventId: 'evt_01J8K7M2Q4', consumerId: 'billing-meter', tenantId: 'tenant_204', repairId: 'rep_01J8K7RP01' });
    expect(message).not.toHaveProperty('replayId');
    expect(sentTo(queueUrls['audit-writer'])).toEqual([]);
  });

  it('reports only the record whose message SQS refused', async () => {
    sqsMock
      .on(SendMessageBatchCommand, { QueueUrl: queueUrls['audit-writer'] })
      .resolves({ Failed: [{ Id: '1', Code: 'InternalError', SenderFault: false }] })
      .on(SendMessageBatchCommand, { QueueUrl: queueUrls['billing-meter'] })
      .resolves({ Failed: [] });
    const res = await handler()({
      Records: [
        streamRecord(receipt('evt_a', ['billing-meter', 'audit-writer']), '11'),
        streamRecord(receipt('evt_b', ['billing-meter', 'audit-writer']), '12'),
      ],
    });
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: '12' }]);
  });

  it('reports every record of a queue whose send throws (throttling)', async () => {
    sqsMock
      .on(SendMessageBatchCommand)
      .resolves({ Failed: [] })
      .on(SendMessageBatchCommand, { QueueUrl: queueUrls['risk-evaluator'] })
      .rejects(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));
    const res = await handler()({
      Records: [
        streamRecord(receipt('evt_a', ['billing-meter']), '21'),
        streamRecord(receipt('evt_b', ['billing-meter', 'risk-evaluator']), '22'),
        streamRecord(receipt('evt_c', ['risk-evaluator']), '23'),
      ],
    });
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: '22' }, { itemIdentifier: '23' }]);
  });

  it('skips, counts and logs a delivery to a consumer no longer configured, without failing the record', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const { logger, lines } = capturingLogger();
    const counted: [string, number][] = [];
    const res = await createFanoutHandler({ sqs: new SQSClient({ region: 'us-east-1' }), queueUrls, logger, onSkipped: (c, n) => counted.push([c, n]) })({
      Records: [
        streamRecord(receipt('evt_z', ['billing-meter', 'fraud-graph']), '31'),
        streamRecord(receipt('evt_y', ['fraud-graph']), '32'),
        streamRecord(receipt('evt_x', ['audit-writer']), '33'),
      ],
    });
    // The shard moves on: nothing reported failed, the configured consumers got theirs.
    expect(res.batchItemFailures).toEqual([]);
    expect(sentTo(queueUrls['billing-meter']).map((m) => m.eventId)).toEqual(['evt_z']);
    expect(sentTo(queueUrls['audit-writer']).map((m) => m.eventId)).toEqual(['evt_x']);
    expect(counted).toEqual([['fraud-graph', 2]]);
    const warning = lines.map((l) => JSON.parse(l)).find((l) => l.message === 'skipped deliveries to a consumer that is no longer configured');
    expect(warning).toMatchObject({ level: 'WARN', consumer_id: 'fraud-graph', skipped: 2, event_ids: ['evt_z', 'evt_y'] });
  });

  it('fails a receipt missing its tenant instead of inventing one', async () => {
    const { tenantId: _, ...noTenant } = receipt('evt_y', ['billing-meter']);
    const res = await handler()({ Records: [streamRecord(noTenant, '41')] });
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: '41' }]);
    expect(sqsMock.calls()).toHaveLength(0);
  });
});
