/**
 * Tracing across the re-sends (`tracing: 'xray'`): a replay's or a repair's re-queue, and a
 * quarantine's DLQ copy, carry the trace header of the intake that recorded the webhook, so their
 * consumers' traces join the webhook's trace; a receipt without one gives them none. A bundle built
 * for tracing off sets none, whatever the receipt or the message holds.
 */
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../adapters/clients';
import { requeueItem } from '../../adapters/requeue';
import { findConsumer } from '../../core/config/routing';
import type { RequeueItem } from '../../core/model';
import config from '../../hookledger.config';
import { createFanoutHandler } from '../../lambdas/fanout/app';
import type { ReconcileReport } from '../../lambdas/reconcile/reconcile';
import { repair } from '../../lambdas/reconcile/repair';
import { PermanentError } from '../../lambdas/runtime/errors';
import { createConsumerHandler } from '../../lambdas/runtime/runtime';
import { redriveEntry } from '../../ops/redrive';
import { replay } from '../../ops/replay';
import { deliveryMessage, sqsRecord, streamRecord } from '../support/factories';
import { capturingLogger } from '../support/logs';

const HEADER = 'Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1';
/** When the trace of HEADER began (its Root's time): intake recorded evt_01J8K7M2Q4 then. */
const TRACED_AT = 0x67891233 * 1000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const TRACE_ATTRIBUTE = { AWSTraceHeader: { DataType: 'String', StringValue: HEADER } };

const ddbMock = mockClient(DynamoDBDocumentClient);
const sqsMock = mockClient(SQSClient);
afterEach(() => {
  ddbMock.reset();
  sqsMock.reset();
  delete process.env.HOOKLEDGER_BUNDLED_TRACING;
});

/** The receipt of evt_01J8K7M2Q4 for billing-meter and audit-writer, with `traceHeader` when given. */
const receipt = (traceHeader?: string) => ({
  pk: 'evt#platform#evt_01J8K7M2Q4',
  kind: 'event',
  source: 'platform',
  eventId: 'evt_01J8K7M2Q4',
  eventType: 'payment.succeeded',
  tenantId: 'tenant_204',
  keyId: 'key_42',
  receivedAt: TRACED_AT,
  consumers: ['billing-meter', 'audit-writer'],
  payloadHmac: '5f3c9a0e',
  payloadBytes: 10,
  payloadExpiresAt: TRACED_AT + 30 * DAY,
  ...(traceHeader ? { traceHeader } : {}),
});

/** A table holding only that receipt: read by GetItem (replay of one event) or BatchGetItem (repair). */
function tableWith(item: Record<string, unknown>) {
  ddbMock.on(GetCommand).resolves({});
  ddbMock.on(GetCommand, { Key: { pk: item.pk } }).resolves({ Item: item });
  ddbMock.on(BatchGetCommand).callsFake((input: { RequestItems: Record<string, { Keys: { pk: string }[] }> }) => ({
    Responses: Object.fromEntries(
      Object.entries(input.RequestItems).map(([table, { Keys }]) => [table, Keys.some((k) => k.pk === item.pk) ? [item] : []]),
    ),
  }));
  ddbMock.on(PutCommand).resolves({});
  return createDocumentClient({ region: 'us-east-1' });
}

const requeueWritten = (): RequeueItem => {
  const items = ddbMock.commandCalls(PutCommand).map((c) => c.args[0].input.Item as Record<string, unknown>);
  const found = items.filter((item) => item.kind === 'requeue');
  expect(found).toHaveLength(1);
  return found[0] as unknown as RequeueItem;
};

/** The entries the fan-out sends for `item`'s stream INSERT. */
async function fannedOut(item: RequeueItem) {
  sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
  await createFanoutHandler({
    sqs: new SQSClient({ region: 'us-east-1' }),
    queueUrls: { 'billing-meter': 'http://sqs/q/billing-meter', 'audit-writer': 'http://sqs/q/audit-writer' },
    payloads: { getPayload: async () => Buffer.from('{"id":"evt_01J8K7M2Q4"}') },
    views: { 'billing-meter': ['id'], 'audit-writer': ['id'] },
    bodyFormats: { platform: 'json' },
    clock: () => item.createdAt,
    logger: capturingLogger().logger,
  })({ Records: [streamRecord(item as unknown as Record<string, unknown>, '200')] });
  return sqsMock.commandCalls(SendMessageBatchCommand).flatMap((c) => c.args[0].input.Entries ?? []);
}

async function replayed(traceHeader: string | undefined, at = TRACED_AT + 2 * HOUR): Promise<RequeueItem> {
  const ddb = tableWith(receipt(traceHeader));
  await replay(
    { ddb, tables: { events: 'events', ledger: 'ledger' }, config, operator: 'ops-test', clock: () => at },
    { consumer: 'billing-meter', event: { eventId: 'evt_01J8K7M2Q4', source: 'platform' } },
  );
  return requeueWritten();
}

async function repaired(traceHeader: string | undefined): Promise<RequeueItem> {
  const at = TRACED_AT + 2 * HOUR;
  const ddb = tableWith(receipt(traceHeader));
  const missing = {
    kind: 'missing_delivery' as const,
    source: 'platform',
    eventId: 'evt_01J8K7M2Q4',
    consumerId: 'billing-meter',
    ledgerKey: 'platform:evt_01J8K7M2Q4#billing-meter',
  };
  const report = {
    from: TRACED_AT - HOUR,
    to: TRACED_AT + HOUR,
    graceMs: 15 * 60_000,
    checkedAt: at,
    receipts: 1,
    ledgerItems: 0,
    expectedDeliveries: 2,
    inGrace: 0,
    quarantined: 0,
    violations: [missing],
    counts: { missing_delivery: 1 },
  } as unknown as ReconcileReport;
  const result = await repair(
    { ddb, tables: { events: 'events', ledger: 'ledger' }, operator: 'ops-test', clock: () => at },
    { from: report.from, to: report.to, trigger: 'cli' },
    report,
  );
  expect(result.repaired).toBe(1);
  return requeueWritten();
}

describe("a replay's re-queue", () => {
  it("of evt_01J8K7M2Q4 carries the receipt's trace header, and the fan-out sends it to billing-meter as AWSTraceHeader", async () => {
    const item = await replayed(HEADER);
    expect(item).toMatchObject({ eventId: 'evt_01J8K7M2Q4', consumerId: 'billing-meter', traceHeader: HEADER });
    const entries = await fannedOut(item);
    expect(entries).toHaveLength(1);
    expect(entries[0]?.MessageSystemAttributes).toEqual(TRACE_ATTRIBUTE);
    expect(entries[0]?.MessageBody).not.toContain('Root=');
  });

  it('carries none for a receipt recorded without one (tracing off at intake, or not sampled)', async () => {
    const item = await replayed(undefined);
    expect(item).not.toHaveProperty('traceHeader');
    expect((await fannedOut(item))[0]).not.toHaveProperty('MessageSystemAttributes');
  });

  it('carries none once the trace is older than X-Ray takes segments for: the replay starts a trace of its own', async () => {
    expect(await replayed(HEADER, TRACED_AT + 6 * DAY)).toMatchObject({ traceHeader: HEADER });
    ddbMock.reset();
    expect(await replayed(HEADER, TRACED_AT + 8 * DAY)).not.toHaveProperty('traceHeader');
  });
});

describe("a repair's re-queue", () => {
  it("of evt_01J8K7M2Q4 carries the receipt's trace header, and the fan-out sends it as AWSTraceHeader", async () => {
    const item = await repaired(HEADER);
    expect(item).toMatchObject({ eventId: 'evt_01J8K7M2Q4', consumerId: 'billing-meter', traceHeader: HEADER });
    expect(item.repairId).toMatch(/^rep_/);
    const entries = await fannedOut(item);
    expect(entries).toHaveLength(1);
    expect(entries[0]?.MessageSystemAttributes).toEqual(TRACE_ATTRIBUTE);
  });

  it('carries none for a receipt recorded without one', async () => {
    const item = await repaired(undefined);
    expect(item).not.toHaveProperty('traceHeader');
    expect((await fannedOut(item))[0]).not.toHaveProperty('MessageSystemAttributes');
  });
});

describe('a re-queue and tracing off', () => {
  it('written by a bundle built for tracing off (the scheduled reconciler) carries no trace header, though the receipt had one', () => {
    process.env.HOOKLEDGER_BUNDLED_TRACING = 'false';
    expect(requeueItem(receipt(HEADER), 'billing-meter', { repairId: 'rep_01J8K7' }, TRACED_AT + HOUR)).not.toHaveProperty('traceHeader');
  });

  it('is sent without AWSTraceHeader by a fan-out bundled for tracing off, though it carries one', async () => {
    const item = requeueItem(receipt(HEADER), 'billing-meter', { repairId: 'rep_01J8K7' }, TRACED_AT + HOUR);
    expect(item.traceHeader).toBe(HEADER);
    process.env.HOOKLEDGER_BUNDLED_TRACING = 'false';
    const entries = await fannedOut(item);
    expect(entries).toHaveLength(1);
    expect(entries[0]).not.toHaveProperty('MessageSystemAttributes');
  });
});

/** billing-meter's runtime around a handler that refuses evt_01J8K7M2Q4 for good: the delivery is quarantined at once. */
async function quarantined(traceHeader: string | undefined) {
  sqsMock.on(SendMessageCommand).resolves({});
  const handler = createConsumerHandler(
    {
      consumer: findConsumer(config, 'billing-meter')!,
      ledger: {
        claim: async () => ({ kind: 'claimed', attempt: 1, replay: false }),
        acknowledge: async () => true,
        recordFailure: async () => true,
      },
      events: { getKey: async () => undefined },
      sqs: new SQSClient({ region: 'us-east-1' }),
      queueUrl: 'http://sqs/q/billing-meter',
      dlqUrl: 'http://sqs/q/billing-meter-dlq',
      principal: 'arn:aws:iam::1:role/billing-meter',
      logger: capturingLogger().logger,
      clock: () => TRACED_AT + HOUR,
    },
    async () => {
      throw new PermanentError('amount is not a number', 'invalid_payload');
    },
  );
  const record = sqsRecord(deliveryMessage());
  const res = await handler({
    Records: [{ ...record, attributes: { ...record.attributes, ...(traceHeader ? { AWSTraceHeader: traceHeader } : {}) } }],
  });
  expect(res.batchItemFailures).toEqual([]);
  const sent = sqsMock.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
  expect(sent).toHaveLength(1);
  expect(sent[0]?.QueueUrl).toBe('http://sqs/q/billing-meter-dlq');
  return sent[0]!;
}

describe("a quarantine's DLQ copy", () => {
  it("of evt_01J8K7M2Q4 carries the trace header its message came with (the receipt's, sent by the fan-out)", async () => {
    expect((await quarantined(HEADER)).MessageSystemAttributes).toEqual(TRACE_ATTRIBUTE);
  });

  it('carries none when its message came without one', async () => {
    expect(await quarantined(undefined)).not.toHaveProperty('MessageSystemAttributes');
  });

  it('carries none from a consumer bundled for tracing off', async () => {
    process.env.HOOKLEDGER_BUNDLED_TRACING = 'false';
    expect(await quarantined(HEADER)).not.toHaveProperty('MessageSystemAttributes');
  });
});

describe('a redrive moved by hand', () => {
  const dlqMessage = (attributes: Record<string, string>) => ({
    MessageId: 'm-1',
    ReceiptHandle: 'r-1',
    Body: JSON.stringify(deliveryMessage()),
    Attributes: attributes,
  });

  it('sends the DLQ copy back with the trace header it holds, and none when it holds none', () => {
    expect(redriveEntry('http://sqs/q/billing-meter', dlqMessage({ AWSTraceHeader: HEADER }), 0).MessageSystemAttributes).toEqual(
      TRACE_ATTRIBUTE,
    );
    expect(redriveEntry('http://sqs/q/billing-meter', dlqMessage({}), 0)).not.toHaveProperty('MessageSystemAttributes');
  });
});
