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

const receipt = (eventId: string, consumers: string[], tenantId = 'tenant_204', source = 'platform') => ({
  pk: `evt#${source}#${eventId}`,
  kind: 'event',
  source,
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

/** Each consumer's fields, as hookledger.config.ts might list them. */
const views = {
  'billing-meter': ['id', 'type', 'tenant_id', 'data.amount'],
  'audit-writer': ['id', 'type'],
  'risk-evaluator': ['id', 'data.card.country'],
};

/** A stored payload per event id, and every read the fan-out makes. */
function payloadStore(bodies: Record<string, unknown> = {}, failing: readonly string[] = []) {
  const reads: string[] = [];
  return {
    reads,
    async getPayload(_source: string, eventId: string) {
      reads.push(eventId);
      if (failing.includes(eventId)) throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
      const body =
        eventId in bodies
          ? bodies[eventId]
          : {
              id: eventId,
              type: 'payment.succeeded',
              tenant_id: 'tenant_204',
              data: { amount: 4200, card: { country: 'NL', last4: '4242' } },
            };
      return body === null ? undefined : Buffer.from(JSON.stringify(body));
    },
  };
}

function handler(payloads = payloadStore(), extra: Partial<Parameters<typeof createFanoutHandler>[0]> = {}) {
  return createFanoutHandler({
    sqs: new SQSClient({ region: 'us-east-1' }),
    queueUrls,
    payloads,
    views,
    // As the config resolves them: a Standard Webhooks source reads JSON, a Twilio source form fields.
    bodyFormats: { platform: 'json', 'twilio-sms': 'form' },
    clock: () => NOW,
    logger: capturingLogger().logger,
    ...extra,
  });
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
    const res = await handler()({
      Records: [streamRecord(receipt('evt_01J8K7M2Q4', ['billing-meter', 'audit-writer', 'risk-evaluator']), '100')],
    });
    expect(res.batchItemFailures).toEqual([]);
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(3);
    expect(sentTo(queueUrls['risk-evaluator'])).toEqual([
      {
        v: 2,
        source: 'platform',
        eventId: 'evt_01J8K7M2Q4',
        eventType: 'payment.succeeded',
        tenantId: 'tenant_204',
        keyId: 'key_42',
        receivedAt: NOW,
        consumerId: 'risk-evaluator',
        payloadHmac: '5f3c9a0e',
        payloadExpiresAt: NOW + 30 * 86_400_000,
        payload: { id: 'evt_01J8K7M2Q4', data: { card: { country: 'NL' } } },
      },
    ]);
  });

  it('reads each payload once, whatever the number of consumers, and gives each consumer only its fields', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const payloads = payloadStore();
    const all = ['billing-meter', 'audit-writer', 'risk-evaluator'];
    await handler(payloads)({
      Records: [streamRecord(receipt('evt_01J8K7M2Q4', all), '100'), streamRecord(receipt('evt_01J8K7M2Q5', all), '101')],
    });
    expect(payloads.reads).toEqual(['evt_01J8K7M2Q4', 'evt_01J8K7M2Q5']);
    expect(sentTo(queueUrls['billing-meter']).map((m) => m.payload)).toEqual([
      { id: 'evt_01J8K7M2Q4', type: 'payment.succeeded', tenant_id: 'tenant_204', data: { amount: 4200 } },
      { id: 'evt_01J8K7M2Q5', type: 'payment.succeeded', tenant_id: 'tenant_204', data: { amount: 4200 } },
    ]);
    expect(sentTo(queueUrls['audit-writer']).map((m) => m.payload)).toEqual([
      { id: 'evt_01J8K7M2Q4', type: 'payment.succeeded' },
      { id: 'evt_01J8K7M2Q5', type: 'payment.succeeded' },
    ]);
    // No consumer's message carries a field it does not list (the card's last4 goes nowhere).
    expect(JSON.stringify(sqsMock.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input))).not.toContain('4242');
  });

  it('says on each message when the payload is past retention or gone, and reads nothing past retention', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const payloads = payloadStore({ evt_gone: null });
    const expired = { ...receipt('evt_old', ['billing-meter']), payloadExpiresAt: NOW - 1 };
    const res = await handler(payloads)({
      Records: [streamRecord(expired, '1'), streamRecord(receipt('evt_gone', ['billing-meter']), '2')],
    });
    expect(res.batchItemFailures).toEqual([]);
    expect(payloads.reads).toEqual(['evt_gone']);
    const sent = sentTo(queueUrls['billing-meter']);
    expect(sent.map((m) => [m.eventId, m.payloadUnavailable, m.payload])).toEqual([
      ['evt_old', 'expired', undefined],
      ['evt_gone', 'expired', undefined],
    ]);
  });

  it('fails only the records whose payload read failed, so the stream retries them', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const res = await handler(payloadStore({}, ['evt_b']))({
      Records: [streamRecord(receipt('evt_a', ['billing-meter']), '51'), streamRecord(receipt('evt_b', ['billing-meter']), '52')],
    });
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: '52' }]);
    expect(sentTo(queueUrls['billing-meter']).map((m) => m.eventId)).toEqual(['evt_a']);
  });

  it('narrows a form-urlencoded body (a Twilio source) by its fields, reading it once', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const reads: string[] = [];
    const form = {
      async getPayload(_source: string, eventId: string) {
        reads.push(eventId);
        return Buffer.from('id=SM01J8K7FRM1&type=message.received&tenant_id=tenant_204&data.amount=12&Body=hello');
      },
    };
    const res = await handler(payloadStore(), { payloads: form })({
      Records: [streamRecord(receipt('SM01J8K7FRM1', ['billing-meter', 'audit-writer'], 'tenant_204', 'twilio-sms'), '73')],
    });
    expect(res.batchItemFailures).toEqual([]);
    expect(reads).toEqual(['SM01J8K7FRM1']);
    expect(sentTo(queueUrls['audit-writer']).map((m) => m.payload)).toEqual([{ id: 'SM01J8K7FRM1', type: 'message.received' }]);
    expect(sentTo(queueUrls['billing-meter']).map((m) => m.payload)).toEqual([
      { id: 'SM01J8K7FRM1', type: 'message.received', tenant_id: 'tenant_204' },
    ]);
  });

  it("never reads a JSON source's stored body as form fields: bytes that are not JSON are marked unreadable, no field reaches a consumer", async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const stored = {
      // What a JSON source's receipt could hold from before its format was fixed: injected form fields.
      getPayload: async () => Buffer.from('id=evt_X&type=payment.succeeded&tenant_id=tenant_VICTIM&data.amount=999999'),
    };
    const res = await handler(payloadStore(), { payloads: stored })({
      Records: [streamRecord(receipt('evt_01J8K7UNR1', ['billing-meter', 'audit-writer']), '74')],
    });
    expect(res.batchItemFailures).toEqual([]);
    const messages = [...sentTo(queueUrls['billing-meter']), ...sentTo(queueUrls['audit-writer'])];
    expect(messages.map((m) => [m.consumerId, m.eventId, m.tenantId, m.payloadUnavailable, m.payload])).toEqual([
      ['billing-meter', 'evt_01J8K7UNR1', 'tenant_204', 'unreadable', undefined],
      ['audit-writer', 'evt_01J8K7UNR1', 'tenant_204', 'unreadable', undefined],
    ]);
  });

  it("reads a JSON source's stored body with intake's checks: a body nested 40 deep (refused at intake) is unreadable", async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const deep = `{"id":"evt_01J8K7UNR2","type":"payment.succeeded","data":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`;
    const res = await handler(payloadStore(), { payloads: { getPayload: async () => Buffer.from(deep) } })({
      Records: [streamRecord(receipt('evt_01J8K7UNR2', ['risk-evaluator']), '75')],
    });
    expect(res.batchItemFailures).toEqual([]);
    expect(sentTo(queueUrls['risk-evaluator']).map((m) => [m.eventId, m.payloadUnavailable])).toEqual([['evt_01J8K7UNR2', 'unreadable']]);
  });

  it('rides out a short storage outage inside the invocation instead of failing the record', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    let failures = 3;
    const waits: number[] = [];
    const flaky = {
      async getPayload(_source: string, eventId: string) {
        if (failures-- > 0) throw Object.assign(new Error('connect ECONNREFUSED'), { name: 'StorageUnavailableError' });
        return Buffer.from(JSON.stringify({ id: eventId, type: 'payment.succeeded', tenant_id: 'tenant_204' }));
      },
    };
    const res = await handler(payloadStore(), { payloads: flaky, readRetryMs: 25_000, sleep: async (ms) => void waits.push(ms) })({
      Records: [streamRecord(receipt('evt_01J8K7OUT1', ['billing-meter']), '71')],
    });
    expect(res.batchItemFailures).toEqual([]);
    expect(waits).toEqual([100, 200, 400]);
    expect(sentTo(queueUrls['billing-meter']).map((m) => m.payload)).toEqual([
      { id: 'evt_01J8K7OUT1', type: 'payment.succeeded', tenant_id: 'tenant_204' },
    ]);
  });

  it('fails the record once the retry window is spent, so the event source retries it', async () => {
    const waits: number[] = [];
    const down = { getPayload: async () => Promise.reject(Object.assign(new Error('down'), { name: 'StorageUnavailableError' })) };
    const res = await handler(payloadStore(), { payloads: down, readRetryMs: 1_000, sleep: async (ms) => void waits.push(ms) })({
      Records: [streamRecord(receipt('evt_01J8K7OUT2', ['billing-meter']), '72')],
    });
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: '72' }]);
    expect(waits).toEqual([100, 200, 400]);
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('refuses one view larger than a queue message with its reason, and splits batches by bytes', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const big = 'x'.repeat(400 * 1024);
    const bodies = {
      evt_huge: { id: 'evt_huge', type: 'payment.succeeded', data: { amount: 'y'.repeat(1100 * 1024) } },
      evt_1: { id: 'evt_1', type: 'payment.succeeded', tenant_id: big },
      evt_2: { id: 'evt_2', type: 'payment.succeeded', tenant_id: big },
      evt_3: { id: 'evt_3', type: 'payment.succeeded', tenant_id: big },
    };
    const ids = ['evt_huge', 'evt_1', 'evt_2', 'evt_3'];
    const res = await handler(payloadStore(bodies))({
      Records: ids.map((id, i) => streamRecord(receipt(id, ['billing-meter']), String(60 + i))),
    });
    expect(res.batchItemFailures).toEqual([]);
    const sent = sentTo(queueUrls['billing-meter']);
    expect(sent.map((m) => [m.eventId, m.payloadUnavailable ?? 'payload'])).toEqual([
      ['evt_huge', 'too_large'],
      ['evt_1', 'payload'],
      ['evt_2', 'payload'],
      ['evt_3', 'payload'],
    ]);
    // Three 400 KiB views cannot share one 1 MiB SendMessageBatch: [huge-refusal, 1, 2] then [3].
    const sizes = sqsMock.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.Entries!.length);
    expect(sizes).toEqual([3, 1]);
  });

  it('batches 12 events into 2 requests per queue (10 + 2)', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const records = Array.from({ length: 12 }, (_, i) =>
      streamRecord(receipt(`evt_${i}`, ['billing-meter', 'audit-writer']), String(100 + i)),
    );
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
    expect(message).toMatchObject({
      eventId: 'evt_01J8K7M2Q4',
      consumerId: 'billing-meter',
      tenantId: 'tenant_204',
      repairId: 'rep_01J8K7RP01',
    });
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
    const payloads = payloadStore();
    const res = await handler(payloads, { logger, onSkipped: (c, n) => counted.push([c, n]) })({
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
    // evt_y goes only to the removed consumer: its payload is not even read.
    expect(payloads.reads).toEqual(['evt_z', 'evt_x']);
    const warning = lines
      .map((l) => JSON.parse(l))
      .find((l) => l.message === 'skipped deliveries to a consumer that is no longer configured');
    expect(warning).toMatchObject({ level: 'WARN', consumer_id: 'fraud-graph', skipped: 2, event_ids: ['evt_z', 'evt_y'] });
  });

  it('fails a receipt missing its tenant instead of inventing one', async () => {
    const { tenantId: _, ...noTenant } = receipt('evt_y', ['billing-meter']);
    const res = await handler()({ Records: [streamRecord(noTenant, '41')] });
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: '41' }]);
    expect(sqsMock.calls()).toHaveLength(0);
  });
});
