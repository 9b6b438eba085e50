/**
 * Large bodies (core/blobs.ts) on the local stack: a 2 MB body is accepted, kept in the payload
 * bucket (fauxqs S3) with a payload item that references it, narrowed per consumer (the view too
 * large for a queue message travels by claim check under views/<consumer>/), delivered and traced;
 * a body over the source's maximum is refused 413 by intake, naming the limit. Around the inline
 * threshold (`payloads.inlineMaxBytes`, 7,000 stored bytes by default): a body stored in just under it
 * stays in its payload item, one just over it goes to the bucket, and both are delivered alike.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_INLINE_PAYLOAD_BYTES, MAX_BODY_BYTES_CEILING, MAX_INLINE_PAYLOAD_BYTES } from '../../core/blobs';
import { defineConfig } from '../../core/config/schema';
import { type DeliveryMessage, MAX_QUEUE_MESSAGE_BYTES, type PayloadItem, payloadKey } from '../../core/model';
import baseConfig from '../../hookledger.config';
import type { ConsumerHandle, ConsumerLambdaHandler } from '../../lambdas/runtime/runtime';
import { localS3Client } from '../../local/clients';
import type { LocalStack } from '../../local/stack';
import { trace } from '../../ops/trace';
import { platformEvent } from '../support/factories';
import { ledgerRows, send, startTestStack } from '../support/stack';

const config = defineConfig({
  ...baseConfig,
  sources: baseConfig.sources.map((s) => ({ ...s, maxBodyBytes: MAX_BODY_BYTES_CEILING })),
});

/** Deterministic, poorly compressible text (hex of a hash chain): gzip keeps about half of it. */
function filler(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const chunk = createHash('sha256').update(`hookledger-${i}`).digest('hex');
    parts.push(chunk);
    size += chunk.length;
  }
  return parts.join('').slice(0, bytes);
}

const received: Record<string, DeliveryMessage[]> = {};
function capture(consumerId: string, inner: ConsumerLambdaHandler): ConsumerLambdaHandler {
  return async (event, context) => {
    received[consumerId] ??= [];
    for (const record of event.Records) received[consumerId].push(JSON.parse(record.body) as DeliveryMessage);
    return inner(event, context);
  };
}
/** What each handler was given: the size of `data.attachment` it saw (undefined when not in its view). */
const handled: Record<string, (number | undefined)[]> = {};
const recordingHandle =
  (consumerId: string): ConsumerHandle =>
  async (ctx) => {
    const data = ctx.payload.data as { attachment?: string } | undefined;
    handled[consumerId] ??= [];
    handled[consumerId].push(data?.attachment?.length);
    return { units: 1 };
  };

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack({
    config,
    wrapConsumer: capture,
    handles: Object.fromEntries(config.consumers.map((c) => [c.id, recordingHandle(c.id)])),
  });
});
afterAll(() => stack?.stop());

describe('large bodies on the local stack', () => {
  const attachment = filler(2_000_000);
  const event = platformEvent({
    id: 'evt_01J8K7L2MB',
    type: 'payment.succeeded',
    tenant_id: 'tenant_204',
    data: { amount: 4200, currency: 'eur', card_last4: '4242', attachment } as never,
  });
  const body = JSON.stringify(event);

  it('accepts a 2 MB body, keeps it in the payload bucket and delivers each consumer its view', async () => {
    expect(body.length).toBeGreaterThan(2_000_000);
    const res = await send(stack, event);
    expect(res).toEqual({ status: 202, body: { event_id: 'evt_01J8K7L2MB', deliveries: 3 } });
    await stack.drain();

    // The receipt names the payload item; the item names the object, and holds no body.
    const receipt = (
      await stack.handlers.ddb.send(
        new GetCommand({ TableName: stack.resources.tables.events, Key: { pk: 'evt#platform#evt_01J8K7L2MB' }, ConsistentRead: true }),
      )
    ).Item!;
    expect(receipt.payloadBytes).toBe(body.length);
    const item = (
      await stack.handlers.ddb.send(
        new GetCommand({
          TableName: stack.resources.tables.events,
          Key: { pk: payloadKey('platform', 'evt_01J8K7L2MB', receipt.payloadHmac as string) },
          ConsistentRead: true,
        }),
      )
    ).Item as PayloadItem;
    expect(item.s3Key).toBe(`payloads/platform/evt_01J8K7L2MB/${receipt.payloadHmac as string}`);
    expect(item.encoding).toBe('gzip');
    expect(item.body).toBeUndefined();
    expect(item.storedBytes).toBeGreaterThan(MAX_INLINE_PAYLOAD_BYTES);
    const s3 = localS3Client(stack.endpoints.s3);
    const object = await s3.send(new GetObjectCommand({ Bucket: stack.payloadBucket, Key: item.s3Key }));
    const stored = Buffer.from(await object.Body!.transformToByteArray());
    expect(stored.length).toBe(item.storedBytes);
    expect(gunzipSync(stored).toString('utf8')).toBe(body);

    // billing-meter and audit-writer get small views inline; risk-evaluator's view (all of `data`) is
    // over a queue message's 1 MiB and travels by claim check under its own prefix.
    const message = (consumerId: string) => received[consumerId]!.find((m) => m.eventId === 'evt_01J8K7L2MB')!;
    expect(message('billing-meter').payload).toEqual({
      id: 'evt_01J8K7L2MB',
      type: 'payment.succeeded',
      tenant_id: 'tenant_204',
      data: { amount: 4200, currency: 'eur' },
    });
    expect(message('audit-writer').payload).toEqual({
      id: 'evt_01J8K7L2MB',
      type: 'payment.succeeded',
      tenant_id: 'tenant_204',
      key_id: 'key_42',
      created: event.created,
    });
    const risk = message('risk-evaluator');
    expect(risk.payload).toBeUndefined();
    expect(risk.payloadUnavailable).toBeUndefined();
    expect(risk.payloadObject).toMatch(/^views\/risk-evaluator\/evt_01J8K7L2MB\/[0-9a-f]{64}$/);
    expect(Buffer.byteLength(JSON.stringify(risk))).toBeLessThan(2048);
    const view = await s3.send(new GetObjectCommand({ Bucket: stack.payloadBucket, Key: risk.payloadObject }));
    const viewBytes = Buffer.from(await view.Body!.transformToByteArray());
    expect(viewBytes.length).toBeGreaterThan(MAX_QUEUE_MESSAGE_BYTES);
    expect(JSON.parse(viewBytes.toString('utf8'))).toEqual({
      id: 'evt_01J8K7L2MB',
      type: 'payment.succeeded',
      tenant_id: 'tenant_204',
      key_id: 'key_42',
      data: event.data,
    });
    s3.destroy();

    expect(handled).toEqual({ 'billing-meter': [undefined], 'audit-writer': [undefined], 'risk-evaluator': [2_000_000] });
    const rows = (await ledgerRows(stack)).filter((r) => r.eventId === 'evt_01J8K7L2MB');
    expect(rows.map((r) => [r.consumerId, r.state, r.tenantId, r.units, r.reads.length]).sort()).toEqual([
      ['audit-writer', 'done', 'tenant_204', 1, 1],
      ['billing-meter', 'done', 'tenant_204', 1, 1],
      ['risk-evaluator', 'done', 'tenant_204', 1, 1],
    ]);
  }, 60_000);

  it('traces the 2 MB event: receipt, payload in the bucket, three done deliveries', async () => {
    const report = await trace({ ddb: stack.handlers.ddb, tables: stack.resources.tables, config }, 'evt_01J8K7L2MB');
    expect(report.receipt).toMatchObject({
      eventId: 'evt_01J8K7L2MB',
      tenantId: 'tenant_204',
      payload: 'present',
      payloadBytes: body.length,
    });
    expect(report.receipt.payloadObject).toMatch(/^payloads\/platform\/evt_01J8K7L2MB\/[0-9a-f]{64}$/);
    expect(report.deliveries.map((d) => [d.consumer, d.state, d.attempts]).sort()).toEqual([
      ['audit-writer', 'done', 1],
      ['billing-meter', 'done', 1],
      ['risk-evaluator', 'done', 1],
    ]);
  }, 20_000);

  it('refuses a body over the source maximum with 413 naming the limit, and stores nothing', async () => {
    const big = platformEvent({
      id: 'evt_01J8K7L5MB',
      data: { amount: 1, currency: 'eur', attachment: filler(MAX_BODY_BYTES_CEILING) } as never,
    });
    const res = await send(stack, big);
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
    expect(res.body.message).toBe(`body is ${JSON.stringify(big).length} bytes; source "platform" accepts at most 4194304`);
    const receipt = await stack.handlers.ddb.send(
      new GetCommand({ TableName: stack.resources.tables.events, Key: { pk: 'evt#platform#evt_01J8K7L5MB' }, ConsistentRead: true }),
    );
    expect(receipt.Item).toBeUndefined();
  }, 20_000);
});

/** Base64 of a hash chain: gzip keeps about three quarters of it, so each character adds under one stored byte. */
function base64Filler(chars: number): string {
  const parts: string[] = [];
  for (let i = 0, size = 0; size < chars; i++) {
    const chunk = createHash('sha256').update(`inline-${i}`).digest('base64');
    parts.push(chunk);
    size += chunk.length;
  }
  return parts.join('').slice(0, chars);
}

/**
 * The event with the longest attachment whose body gzips to at most `threshold` bytes, and the one
 * with the shortest attachment whose body gzips to more.
 */
function eventsAround(threshold: number, ids: { below: string; above: string }) {
  const eventOf = (id: string, chars: number) =>
    platformEvent({ id, data: { amount: 4200, currency: 'eur', card_last4: '4242', attachment: base64Filler(chars) } as never });
  const stored = (event: object) => gzipSync(JSON.stringify(event)).length;
  let chars = 1000;
  while (stored(eventOf(ids.above, chars + 1)) <= threshold) chars++;
  return { below: eventOf(ids.below, chars), above: eventOf(ids.above, chars + 1) };
}

describe('the inline threshold: payloads.inlineMaxBytes (default 7,000 stored bytes)', () => {
  const threshold = config.payloads.inlineMaxBytes;
  const { below, above } = eventsAround(threshold, { below: 'evt_01J8K7IN70', above: 'evt_01J8K7BK70' });

  const payloadItem = async (eventId: string) => {
    const receipt = (
      await stack.handlers.ddb.send(
        new GetCommand({ TableName: stack.resources.tables.events, Key: { pk: `evt#platform#${eventId}` }, ConsistentRead: true }),
      )
    ).Item!;
    return (
      await stack.handlers.ddb.send(
        new GetCommand({
          TableName: stack.resources.tables.events,
          Key: { pk: payloadKey('platform', eventId, receipt.payloadHmac as string) },
          ConsistentRead: true,
        }),
      )
    ).Item as PayloadItem;
  };

  it('keeps a body stored in just under the threshold in its payload item, and one just over in the bucket', async () => {
    expect(threshold).toBe(DEFAULT_INLINE_PAYLOAD_BYTES);
    expect(threshold).toBe(7000);
    const belowStored = gzipSync(JSON.stringify(below)).length;
    const aboveStored = gzipSync(JSON.stringify(above)).length;
    // One character of attachment apart, on either side of the threshold.
    expect(JSON.stringify(above).length - JSON.stringify(below).length).toBe(1);
    expect(belowStored).toBeLessThanOrEqual(7000);
    expect(belowStored).toBeGreaterThan(6990);
    expect(aboveStored).toBeGreaterThan(7000);
    expect(aboveStored).toBeLessThanOrEqual(7010);

    expect(await send(stack, below)).toEqual({ status: 202, body: { event_id: 'evt_01J8K7IN70', deliveries: 3 } });
    expect(await send(stack, above)).toEqual({ status: 202, body: { event_id: 'evt_01J8K7BK70', deliveries: 3 } });
    await stack.drain();

    const inItem = await payloadItem('evt_01J8K7IN70');
    expect(inItem.s3Key).toBeUndefined();
    expect(inItem.encoding).toBe('gzip');
    expect(inItem.body!.length).toBe(belowStored);
    expect(gunzipSync(inItem.body!).toString('utf8')).toBe(JSON.stringify(below));

    const inBucket = await payloadItem('evt_01J8K7BK70');
    expect(inBucket.body).toBeUndefined();
    expect(inBucket.storedBytes).toBe(aboveStored);
    expect(inBucket.s3Key).toMatch(/^payloads\/platform\/evt_01J8K7BK70\/[0-9a-f]{64}$/);
    const s3 = localS3Client(stack.endpoints.s3);
    const object = await s3.send(new GetObjectCommand({ Bucket: stack.payloadBucket, Key: inBucket.s3Key }));
    const objectBytes = Buffer.from(await object.Body!.transformToByteArray());
    s3.destroy();
    expect(objectBytes.length).toBe(aboveStored);
    expect(gunzipSync(objectBytes).toString('utf8')).toBe(JSON.stringify(above));
  }, 30_000);

  it('delivers both alike: the same views inline, each consumer done once', async () => {
    const message = (consumerId: string, eventId: string) => received[consumerId]!.find((m) => m.eventId === eventId)!;
    for (const event of [below, above]) {
      expect(message('billing-meter', event.id).payload).toEqual({
        id: event.id,
        type: 'payment.succeeded',
        tenant_id: 'tenant_204',
        data: { amount: 4200, currency: 'eur' },
      });
      expect(message('risk-evaluator', event.id).payloadObject).toBeUndefined();
      expect(message('risk-evaluator', event.id).payload).toEqual({
        id: event.id,
        type: 'payment.succeeded',
        tenant_id: 'tenant_204',
        key_id: 'key_42',
        data: event.data,
      });
    }
    const rows = (await ledgerRows(stack)).filter((r) => r.eventId === 'evt_01J8K7IN70' || r.eventId === 'evt_01J8K7BK70');
    expect(rows.map((r) => [r.eventId, r.consumerId, r.state, r.units]).sort()).toEqual([
      ['evt_01J8K7BK70', 'audit-writer', 'done', 1],
      ['evt_01J8K7BK70', 'billing-meter', 'done', 1],
      ['evt_01J8K7BK70', 'risk-evaluator', 'done', 1],
      ['evt_01J8K7IN70', 'audit-writer', 'done', 1],
      ['evt_01J8K7IN70', 'billing-meter', 'done', 1],
      ['evt_01J8K7IN70', 'risk-evaluator', 'done', 1],
    ]);
  }, 20_000);
});
