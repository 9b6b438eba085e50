/**
 * Large bodies (core/blobs.ts), without AWS: the body-size ceiling in the config, the fan-out's claim
 * check for views too large for a queue message, and the runtime reading a claim-checked view.
 */
import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import type { AckRequest, FailRequest } from '../../adapters/ledger';
import type { PayloadBlobs } from '../../adapters/payload-blobs';
import { DEFAULT_MAX_BODY_BYTES, MAX_BODY_BYTES_CEILING } from '../../core/blobs';
import { findConsumer } from '../../core/config/routing';
import { defineConfig } from '../../core/config/schema';
import { MAX_QUEUE_MESSAGE_BYTES } from '../../core/model';
import baseConfig from '../../hookledger.config';
import { createFanoutHandler } from '../../lambdas/fanout/app';
import { type ConsumerHandle, createConsumerHandler } from '../../lambdas/runtime/runtime';
import { DEFAULT_MAX_BODY } from '../../local/http-gateway';
import { deliveryMessage, NOW, sqsRecord, streamRecord } from '../support/factories';
import { capturingLogger } from '../support/logs';

const sqsMock = mockClient(SQSClient);
afterEach(() => sqsMock.reset());

/** An in-memory payload bucket that keeps every put. */
function memoryBlobs(initial: Record<string, string> = {}, failPut = false) {
  const objects = new Map(Object.entries(initial).map(([k, v]) => [k, Buffer.from(v)]));
  const retention = new Map<string, number | undefined>();
  const blobs: PayloadBlobs & { objects: Map<string, Buffer>; retention: Map<string, number | undefined> } = {
    objects,
    retention,
    async put(key, body, _contentType, retentionDays) {
      if (failPut) throw Object.assign(new Error('slow down'), { name: 'StorageUnavailableError' });
      objects.set(key, Buffer.from(body));
      retention.set(key, retentionDays);
    },
    async get(key) {
      return objects.get(key);
    },
  };
  return blobs;
}

const withMax = (maxBodyBytes: number) => ({ ...baseConfig, sources: baseConfig.sources.map((s) => ({ ...s, maxBodyBytes })) });

describe('body size limits', () => {
  it('defaults maxBodyBytes to 1 MiB', () => {
    expect(DEFAULT_MAX_BODY_BYTES).toBe(1_048_576);
    expect(
      defineConfig({ ...baseConfig, sources: baseConfig.sources.map(({ maxBodyBytes: _m, ...s }) => s) }).sources[0]!.maxBodyBytes,
    ).toBe(1_048_576);
  });

  it('accepts the 4 MiB ceiling and refuses one byte more, naming the field and the limit', () => {
    expect(defineConfig(withMax(4_194_304)).sources[0]!.maxBodyBytes).toBe(MAX_BODY_BYTES_CEILING);
    expect(() => defineConfig(withMax(4_194_305))).toThrow(
      "sources[id=platform].maxBodyBytes (value 4194305): maxBodyBytes must be at most 4194304 bytes (4 MiB): Lambda's 6 MB synchronous request limit, after API Gateway's event envelope and base64 for binary bodies",
    );
  });

  it("keeps the ceiling under Lambda's 6 MB request with a base64 body and a 16 KiB envelope, and the local gateway above it", () => {
    expect(Math.ceil(MAX_BODY_BYTES_CEILING / 3) * 4 + 16_384).toBe(5_608_792);
    expect(Math.ceil(MAX_BODY_BYTES_CEILING / 3) * 4 + 16_384).toBeLessThan(6_291_456);
    expect(DEFAULT_MAX_BODY).toBeGreaterThan(MAX_BODY_BYTES_CEILING);
  });
});

const receipt = (eventId: string, consumers: string[]) => ({
  pk: `evt#platform#${eventId}`,
  kind: 'event',
  source: 'platform',
  eventId,
  eventType: 'payment.succeeded',
  tenantId: 'tenant_204',
  keyId: 'key_42',
  receivedAt: NOW,
  consumers,
  payloadHmac: '5f3c9a0e',
  payloadBytes: 10,
  secretVersion: 'current',
  payloadExpiresAt: NOW + 30 * 86_400_000,
});

describe('fan-out claim check', () => {
  const queueUrls = { 'billing-meter': 'http://sqs/q/billing-meter', 'risk-evaluator': 'http://sqs/q/risk-evaluator' };
  const views = { 'billing-meter': ['id', 'data.amount'], 'risk-evaluator': ['id', 'data'] };
  const attachment = 'z'.repeat(1100 * 1024);
  const payloads = {
    async getPayload() {
      return Buffer.from(JSON.stringify({ id: 'evt_01J8K7M2Q4', data: { amount: 4200, attachment } }));
    },
  };
  const sent = (url: string) =>
    sqsMock
      .commandCalls(SendMessageBatchCommand)
      .filter((c) => c.args[0].input.QueueUrl === url)
      .flatMap((c) => c.args[0].input.Entries!.map((e) => JSON.parse(e.MessageBody!)));
  const fanout = (viewObjects?: PayloadBlobs) =>
    createFanoutHandler({
      sqs: new SQSClient({ region: 'us-east-1' }),
      queueUrls,
      payloads,
      views,
      bodyFormats: { platform: 'json' },
      clock: () => NOW,
      logger: capturingLogger().logger,
      ...(viewObjects ? { viewObjects } : {}),
    });

  it("puts a view over a queue message under views/<consumer>/ and sends its key; the other consumer's view stays inline", async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const blobs = memoryBlobs();
    const res = await fanout(blobs)({ Records: [streamRecord(receipt('evt_01J8K7M2Q4', ['billing-meter', 'risk-evaluator']), '70')] });
    expect(res.batchItemFailures).toEqual([]);
    expect(sent(queueUrls['billing-meter'])[0].payload).toEqual({ id: 'evt_01J8K7M2Q4', data: { amount: 4200 } });
    const [risk] = sent(queueUrls['risk-evaluator']);
    expect(risk.payload).toBeUndefined();
    expect(risk.payloadUnavailable).toBeUndefined();
    expect(risk.payloadObject).toMatch(/^views\/risk-evaluator\/evt_01J8K7M2Q4\/[0-9a-f]{64}$/);
    expect([...blobs.objects.keys()]).toEqual([risk.payloadObject]);
    const stored = blobs.objects.get(risk.payloadObject)!;
    expect(stored.length).toBeGreaterThan(MAX_QUEUE_MESSAGE_BYTES);
    expect(JSON.parse(stored.toString())).toEqual({ id: 'evt_01J8K7M2Q4', data: { amount: 4200, attachment } });
  });

  it("tags a claim-checked view with its event's retention (7 days for a 7-day source), so the bucket's rule for 7 expires it", async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const blobs = memoryBlobs();
    const sevenDay = { ...receipt('evt_01J8K7M2Q7', ['risk-evaluator']), payloadExpiresAt: NOW + 7 * 86_400_000 };
    await fanout(blobs)({ Records: [streamRecord(sevenDay, '73')] });
    const [risk] = sent(queueUrls['risk-evaluator']);
    expect([...blobs.retention]).toEqual([[risk.payloadObject, 7]]);
  });

  it('names the object by its content: the same view sent twice is one object', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const blobs = memoryBlobs();
    await fanout(blobs)({ Records: [streamRecord(receipt('evt_01J8K7M2Q4', ['risk-evaluator']), '71')] });
    await fanout(blobs)({ Records: [streamRecord(receipt('evt_01J8K7M2Q4', ['risk-evaluator']), '71')] });
    expect(blobs.objects.size).toBe(1);
  });

  it('fails the record (retried by Lambda) when the view object cannot be written, sending nothing for it', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const res = await fanout(memoryBlobs({}, true))({
      Records: [streamRecord(receipt('evt_01J8K7M2Q4', ['billing-meter', 'risk-evaluator']), '72')],
    });
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: '72' }]);
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('marks the delivery too_large when no payload bucket is wired', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Failed: [] });
    await fanout()({ Records: [streamRecord(receipt('evt_01J8K7M2Q4', ['risk-evaluator']), '73')] });
    expect(sent(queueUrls['risk-evaluator'])[0]).toMatchObject({ eventId: 'evt_01J8K7M2Q4', payloadUnavailable: 'too_large' });
  });
});

describe('runtime reading a claim-checked view', () => {
  const risk = findConsumer(baseConfig, 'risk-evaluator')!;
  function ledger() {
    return {
      acks: [] as AckRequest[],
      failures: [] as FailRequest[],
      async claim() {
        return { kind: 'claimed' as const, attempt: 1, replay: false };
      },
      async acknowledge(request: AckRequest) {
        this.acks.push(request);
        return true;
      },
      async recordFailure(request: FailRequest) {
        this.failures.push(request);
        return true;
      },
    };
  }
  const run = (l: ReturnType<typeof ledger>, handle: ConsumerHandle, viewObjects?: Pick<PayloadBlobs, 'get'>) => {
    sqsMock.on(ChangeMessageVisibilityCommand).resolves({}).on(SendMessageCommand).resolves({});
    return createConsumerHandler(
      {
        consumer: risk,
        ledger: l,
        events: { getKey: async () => undefined },
        sqs: new SQSClient({ region: 'us-east-1' }),
        queueUrl: 'http://sqs/q/risk-evaluator',
        dlqUrl: 'http://sqs/q/risk-evaluator-dlq',
        principal: 'arn:aws:iam::1:role/risk-evaluator',
        logger: capturingLogger().logger,
        clock: () => NOW,
        ...(viewObjects ? { viewObjects } : {}),
      },
      handle,
    );
  };
  const key = `views/risk-evaluator/evt_01J8K7M2Q4/${'c'.repeat(64)}`;
  const message = deliveryMessage({ consumerId: 'risk-evaluator', payload: undefined, payloadObject: key });

  it('hands the handler the view from its object and acknowledges', async () => {
    const seen: unknown[] = [];
    const l = ledger();
    const blobs = memoryBlobs({ [key]: JSON.stringify({ id: 'evt_01J8K7M2Q4', data: { amount: 4200 } }) });
    const res = await run(
      l,
      async (ctx) => {
        seen.push(ctx.payload);
        return { units: 2 };
      },
      blobs,
    )({ Records: [sqsRecord(message)] });
    expect(res.batchItemFailures).toEqual([]);
    expect(seen).toEqual([{ id: 'evt_01J8K7M2Q4', data: { amount: 4200 } }]);
    expect(l.acks.map((a) => a.units)).toEqual([2]);
  });

  it('quarantines with payload_expired when the object is gone (bucket lifecycle)', async () => {
    const l = ledger();
    const res = await run(l, async () => ({ units: 1 }), memoryBlobs())({ Records: [sqsRecord(message)] });
    expect(res.batchItemFailures).toEqual([]);
    expect(l.failures.map((f) => [f.category, f.quarantine])).toEqual([['payload_expired', true]]);
  });

  it('retries (an ordinary failure) when the bucket cannot be read', async () => {
    const l = ledger();
    const failing = { get: async () => Promise.reject(Object.assign(new Error('timeout'), { name: 'StorageUnavailableError' })) };
    const res = await run(l, async () => ({ units: 1 }), failing)({ Records: [sqsRecord(message)] });
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'm-evt_01J8K7M2Q4' }]);
    expect(l.failures.map((f) => [f.category, f.quarantine])).toEqual([['StorageUnavailableError', false]]);
  });
});
