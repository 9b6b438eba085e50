/**
 * Tracing, when a team turns it on (`tracing: 'xray'`): the trace context carried across the stream
 * hop on the receipt (intake writes its X-Ray trace header there) and across each queue on the
 * message (the SQS system attribute AWSTraceHeader), the ids each hop annotates its trace with, and
 * the handlers unchanged when tracing is off or no X-Ray daemon is there (the local stack).
 */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../adapters/clients';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import type { SecretsPort } from '../../adapters/secrets';
import { formatTrace } from '../../cli/commands/trace';
import { defineConfig } from '../../core/config/schema';
import { ALL_SCHEMES } from '../../core/schemes';
import config from '../../hookledger.config';
import { createFanoutHandler } from '../../lambdas/fanout/app';
import { createIngestHandler } from '../../lambdas/ingest/app';
import { handlerTracing, sqsTraceIds, streamTraceIds, type TraceIds, traceRoot } from '../../lambdas/shared/tracing';
import { trace } from '../../ops/trace';
import { httpEvent, NOW, platformEvent, signedHeaders, sqsRecord, streamRecord, TEST_HASH_KEY, TEST_SECRET } from '../support/factories';
import { capturingLogger } from '../support/logs';

const HEADER = 'Root=1-674d8a40-3f2b9c1e7a6d5e4f3c2b1a09;Parent=53995c3f42cd8ad8;Sampled=1';
const ROOT = '1-674d8a40-3f2b9c1e7a6d5e4f3c2b1a09';

const ddbMock = mockClient(DynamoDBDocumentClient);
const sqsMock = mockClient(SQSClient);
afterEach(() => {
  ddbMock.reset();
  sqsMock.reset();
});

describe('the tracing setting', () => {
  it("is 'off' unless the configuration says 'xray'", () => {
    expect(config.tracing).toBe('off');
    expect(defineConfig({ ...config, tracing: 'xray' }).tracing).toBe('xray');
  });

  it("refuses 'jaeger', naming the field, the value and the two choices", () => {
    expect(() => defineConfig({ ...config, tracing: 'jaeger' as 'xray' })).toThrow(
      /tracing \(value "jaeger"\): must be "off" \(no tracing code in any bundle\) or "xray"/,
    );
  });
});

/** Intake over a mocked table, with the tracing port a traced bundle gives it (or none). */
function intake(tracing?: { header: () => string | undefined; annotate: (ids: TraceIds) => void }) {
  ddbMock.on(PutCommand).resolves({});
  const secrets: SecretsPort = {
    payloadHashKey: async () => TEST_HASH_KEY,
    get: async () => ({ current: TEST_SECRET }),
    refresh: async () => ({ current: TEST_SECRET }),
  };
  return createIngestHandler({
    schemes: ALL_SCHEMES,
    config,
    store: intakeStore(eventStores({ client: createDocumentClient({ region: 'us-east-1' }), tableName: 'events' })),
    secrets,
    logger: capturingLogger().logger,
    clock: () => NOW,
    ...(tracing ? { tracing } : {}),
  });
}

const receiptWritten = () =>
  ddbMock
    .commandCalls(PutCommand)
    .map((c) => c.args[0].input.Item as Record<string, unknown>)
    .find((item) => item.kind === 'event');

describe("intake's receipt", () => {
  it("carries the X-Ray trace header of intake's invocation, and intake's trace is annotated with evt_01J8K7M2Q4 and tenant_204", async () => {
    const annotations: TraceIds[] = [];
    const body = JSON.stringify(platformEvent());
    const res = await intake({ header: () => HEADER, annotate: (ids) => annotations.push(ids) })(
      httpEvent('platform', body, signedHeaders(body)),
    );
    expect(res.statusCode).toBe(202);
    expect(receiptWritten()).toMatchObject({ eventId: 'evt_01J8K7M2Q4', traceHeader: HEADER });
    expect(annotations).toEqual([{ event_id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204' }]);
  });

  it('carries no trace field with tracing off (no tracing port), nor when the invocation is not sampled', async () => {
    const body = JSON.stringify(platformEvent());
    await intake()(httpEvent('platform', body, signedHeaders(body)));
    expect(receiptWritten()).not.toHaveProperty('traceHeader');
    ddbMock.reset();
    await intake({ header: () => undefined, annotate: () => {} })(httpEvent('platform', body, signedHeaders(body)));
    expect(Object.keys(receiptWritten() ?? {})).not.toContain('traceHeader');
  });
});

const receipt = (eventId: string, traceHeader?: string) => ({
  pk: `evt#platform#${eventId}`,
  kind: 'event',
  source: 'platform',
  eventId,
  eventType: 'payment.succeeded',
  tenantId: 'tenant_204',
  keyId: 'key_42',
  receivedAt: NOW,
  consumers: ['billing-meter', 'audit-writer'],
  payloadHmac: '5f3c9a0e',
  payloadBytes: 10,
  payloadExpiresAt: NOW + 30 * 86_400_000,
  ...(traceHeader ? { traceHeader } : {}),
});

function fanout() {
  sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
  return createFanoutHandler({
    sqs: new SQSClient({ region: 'us-east-1' }),
    queueUrls: { 'billing-meter': 'http://sqs/q/billing-meter', 'audit-writer': 'http://sqs/q/audit-writer' },
    payloads: { getPayload: async (_s: string, eventId: string) => Buffer.from(JSON.stringify({ id: eventId })) },
    views: { 'billing-meter': ['id'], 'audit-writer': ['id'] },
    bodyFormats: { platform: 'json' },
    clock: () => NOW,
    logger: capturingLogger().logger,
  });
}

const entriesSent = () => sqsMock.commandCalls(SendMessageBatchCommand).flatMap((c) => c.args[0].input.Entries ?? []);

describe("the fan-out's messages", () => {
  it("carry the receipt's trace header as the SQS system attribute AWSTraceHeader, to each consumer's queue", async () => {
    await fanout()({ Records: [streamRecord(receipt('evt_01J8K7M2Q4', HEADER), '100')] });
    const entries = entriesSent();
    expect(entries).toHaveLength(2);
    for (const entry of entries) {
      expect(entry.MessageSystemAttributes).toEqual({ AWSTraceHeader: { DataType: 'String', StringValue: HEADER } });
      // The body stays the delivery message: the context travels beside it, not in it.
      expect(entry.MessageBody).not.toContain('Root=');
    }
  });

  it('carry no trace attribute for a receipt without a header (tracing off)', async () => {
    await fanout()({ Records: [streamRecord(receipt('evt_01J8K7M2Q5'), '101')] });
    const entries = entriesSent();
    expect(entries).toHaveLength(2);
    for (const entry of entries) expect(entry).not.toHaveProperty('MessageSystemAttributes');
  });
});

describe('the ids each hop annotates its trace with', () => {
  it("the fan-out's: each stream record's event and tenant, and intake's trace id from the receipt", () => {
    expect(streamTraceIds(streamRecord(receipt('evt_01J8K7M2Q4', HEADER), '100'))).toEqual({
      event_id: 'evt_01J8K7M2Q4',
      tenant_id: 'tenant_204',
      intake_trace_id: ROOT,
    });
    expect(streamTraceIds(streamRecord(receipt('evt_01J8K7M2Q5'), '101'))).toEqual({ event_id: 'evt_01J8K7M2Q5', tenant_id: 'tenant_204' });
  });

  it("a consumer's: the message's event, tenant and consumer (Lambda links its trace to the sender's by AWSTraceHeader)", () => {
    const message = {
      v: 2 as const,
      source: 'platform',
      eventId: 'evt_01J8K7M2Q4',
      eventType: 'payment.succeeded',
      tenantId: 'tenant_204',
      keyId: 'key_42',
      receivedAt: NOW,
      consumerId: 'billing-meter',
    };
    const record = sqsRecord(message);
    expect(sqsTraceIds({ ...record, attributes: { ...record.attributes, AWSTraceHeader: HEADER } })).toEqual({
      event_id: 'evt_01J8K7M2Q4',
      tenant_id: 'tenant_204',
      consumer_id: 'billing-meter',
    });
    expect(sqsTraceIds({ ...record, body: 'not json' })).toEqual({});
  });

  it('reads the root of a trace header, whatever the order of its fields', () => {
    expect(traceRoot(HEADER)).toBe(ROOT);
    expect(traceRoot(`Sampled=1;Root=${ROOT}`)).toBe(ROOT);
    expect(traceRoot('Parent=53995c3f42cd8ad8')).toBeUndefined();
  });
});

describe('a handler with tracing', () => {
  it("is the handler itself when the configuration's tracing is off", () => {
    expect(handlerTracing(config, 'hookledger-ingest', [])).toBeUndefined();
  });

  it('runs the handler unchanged where no X-Ray daemon is (the local stack): the Tracer is a no-op, no header is given', async () => {
    const tracing = handlerTracing(defineConfig({ ...config, tracing: 'xray' }), 'hookledger-fanout', []);
    expect(tracing).toBeDefined();
    const traced = tracing!.wrap(
      async (event: { n: number }) => ({ doubled: event.n * 2 }),
      () => [{ event_id: 'evt_01J8K7M2Q4' }],
    );
    expect(await traced({ n: 21 }, {} as never)).toEqual({ doubled: 42 });
    expect(tracing!.header()).toBeUndefined();
    await expect(tracing!.wrap(async () => Promise.reject(new RangeError('boom')))({}, {} as never)).rejects.toThrow('boom');
  });
});

describe('hookledger trace', () => {
  /** `trace` over a mocked table holding one receipt of evt_01J8K7M2Q4 (with `traceHeader` when given) and no ledger rows. */
  async function traced(traceHeader?: string) {
    ddbMock.on(GetCommand).resolves({});
    ddbMock.on(GetCommand, { Key: { pk: 'evt#platform#evt_01J8K7M2Q4' } }).resolves({ Item: receipt('evt_01J8K7M2Q4', traceHeader) });
    ddbMock.on(BatchGetCommand).resolves({ Responses: {} });
    const ddb = createDocumentClient({ region: 'us-east-1' });
    return trace({ ddb, tables: { events: 'events', ledger: 'ledger' }, config, clock: () => NOW }, 'evt_01J8K7M2Q4');
  }

  it("prints the X-Ray trace id of intake's invocation when the receipt carries its header, and how to find the other hops", async () => {
    const report = await traced(HEADER);
    expect(report.receipt.traceId).toBe(ROOT);
    expect(formatTrace(report)).toContain(
      `x-ray trace   ${ROOT} (intake; the fan-out's and consumers' traces: annotation.event_id = "evt_01J8K7M2Q4")`,
    );
  });

  it('prints no trace line for a receipt without one (tracing off)', async () => {
    const report = await traced();
    expect(report.receipt).not.toHaveProperty('traceId');
    expect(formatTrace(report)).not.toContain('x-ray');
  });
});
