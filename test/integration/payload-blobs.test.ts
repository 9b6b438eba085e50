/**
 * The payload bucket's adapter paths on DynamoDB Local and fauxqs's S3: Payloads keeps a body
 * whose stored size passes the inline threshold (`inlineMaxBytes`, default 7,000 bytes) in the bucket
 * (object first, then the item that references it) and reads it back transparently; smaller bodies
 * stay inline; a missing object reads as expired; S3 errors become StorageUnavailableError.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageUnavailableError } from '../../adapters/errors';
import { type EventStores, eventStores } from '../../adapters/event-stores';
import { S3PayloadBlobs } from '../../adapters/payload-blobs';
import { PayloadBucketMissingError } from '../../adapters/payloads';
import { MAX_INLINE_PAYLOAD_BYTES } from '../../core/blobs';
import { type EventItem, type PayloadItem, payloadKey } from '../../core/model';
import { createLocalPayloadBucket, localS3Client } from '../../local/clients';
import { freePort, type SqsEmulator, startSqsEmulator } from '../../local/emulators';
import { createTable, startTestDynamo } from '../support/dynamo';
import { NOW } from '../support/factories';

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let fauxqs: SqsEmulator;
let blobs: S3PayloadBlobs;
let store: EventStores;
const writes: [string, number][] = [];

beforeAll(async () => {
  [dynamo, fauxqs] = await Promise.all([startTestDynamo(), freePort().then((port) => startSqsEmulator({ port }))]);
  await createTable(dynamo.client, 'events', true);
  const s3 = localS3Client(fauxqs.endpoint);
  blobs = new S3PayloadBlobs({ client: s3, bucket: await createLocalPayloadBucket(s3, 'payloads-test') });
  store = eventStores({ client: dynamo.doc, tableName: 'events', blobs, clock: () => NOW, onCapacity: (op, w) => writes.push([op, w]) });
}, 60_000);
afterAll(async () => {
  await dynamo?.stop();
  await fauxqs?.stop();
});

/** Hex of a hash chain: gzip keeps about half of it. */
const incompressible = (bytes: number) =>
  Buffer.from(
    Array.from({ length: Math.ceil(bytes / 64) }, (_, i) => createHash('sha256').update(String(i)).digest('hex'))
      .join('')
      .slice(0, bytes),
  );

/** Raw SHA-256 digests: gzip makes them larger, so they are stored as they are (identity), byte for byte. */
const binary = (bytes: number, seed: string) =>
  Buffer.concat(Array.from({ length: Math.ceil(bytes / 32) }, (_, i) => createHash('sha256').update(`${seed}-${i}`).digest())).subarray(
    0,
    bytes,
  );

const event = (eventId: string, hmac: string, bytes: number): Omit<EventItem, 'pk' | 'kind'> => ({
  source: 'platform',
  eventId,
  eventType: 'payment.succeeded',
  tenantId: 'tenant_204',
  keyId: 'key_42',
  receivedAt: NOW,
  consumers: ['billing-meter'],
  payloadHmac: hmac,
  payloadBytes: bytes,
  secretVersion: 'current',
  payloadExpiresAt: NOW + 30 * 86_400_000,
});

const item = async (eventId: string, hmac: string) =>
  (await dynamo.doc.send(new GetCommand({ TableName: 'events', Key: { pk: payloadKey('platform', eventId, hmac) }, ConsistentRead: true })))
    .Item as PayloadItem | undefined;

describe('Receipts and Payloads with the payload bucket (DynamoDB Local + fauxqs S3)', () => {
  it('keeps a 1 MB body in the bucket, references it from a small payload item, and reads it back', async () => {
    const body = incompressible(1_000_000);
    writes.length = 0;
    expect(await store.receipts.recordEvent(event('evt_01J8K7M1MB', 'a1'.repeat(32), body.length), body)).toBe('recorded');
    const stored = (await item('evt_01J8K7M1MB', 'a1'.repeat(32)))!;
    expect(stored.s3Key).toBe(`payloads/platform/evt_01J8K7M1MB/${'a1'.repeat(32)}`);
    expect(stored.body).toBeUndefined();
    expect(stored.encoding).toBe('gzip');
    expect(stored.storedBytes).toBeGreaterThan(MAX_INLINE_PAYLOAD_BYTES);
    const object = (await blobs.get(stored.s3Key!))!;
    expect(object.length).toBe(stored.storedBytes);
    expect(gunzipSync(object).equals(body)).toBe(true);
    // The tenant-day registry (this store's first event of the day), a reference-sized item: one WRU,
    // then the receipt (this test table has no window index, so no index entry is written).
    expect(writes).toEqual([
      ['registerTenantDay', 1],
      ['putPayload', 1],
      ['putEvent', 1],
    ]);
    expect((await store.payloads.getPayload('platform', 'evt_01J8K7M1MB', 'a1'.repeat(32)))!.equals(body)).toBe(true);
    expect(await store.payloads.payloadState('platform', 'evt_01J8K7M1MB', 'a1'.repeat(32))).toEqual({
      present: true,
      s3Key: stored.s3Key,
    });
  });

  it('keeps a body under the threshold inline, with no object', async () => {
    const body = Buffer.from(JSON.stringify({ id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204' }));
    expect(await store.receipts.recordEvent(event('evt_01J8K7M2Q4', 'b2'.repeat(32), body.length), body)).toBe('recorded');
    const stored = (await item('evt_01J8K7M2Q4', 'b2'.repeat(32)))!;
    expect(stored.s3Key).toBeUndefined();
    expect(Buffer.from(stored.body!).equals(body)).toBe(true);
    expect(await blobs.get(`payloads/platform/evt_01J8K7M2Q4/${'b2'.repeat(32)}`)).toBeUndefined();
    expect((await store.payloads.getPayload('platform', 'evt_01J8K7M2Q4', 'b2'.repeat(32)))!.equals(body)).toBe(true);
  });

  it('keeps a body stored in exactly 7,000 bytes in its item (7 WRU) and one of 7,001 in the bucket (1 WRU)', async () => {
    const at = binary(7000, 'at');
    const over = binary(7001, 'over');
    writes.length = 0;
    expect(await store.receipts.recordEvent(event('evt_01J8K7T700', 'f6'.repeat(32), at.length), at)).toBe('recorded');
    expect(await store.receipts.recordEvent(event('evt_01J8K7T701', 'f7'.repeat(32), over.length), over)).toBe('recorded');
    const inItem = (await item('evt_01J8K7T700', 'f6'.repeat(32)))!;
    expect(inItem.encoding).toBe('identity');
    expect(inItem.s3Key).toBeUndefined();
    expect(Buffer.from(inItem.body!).equals(at)).toBe(true);
    expect(await blobs.get(`payloads/platform/evt_01J8K7T700/${'f6'.repeat(32)}`)).toBeUndefined();
    const inBucket = (await item('evt_01J8K7T701', 'f7'.repeat(32)))!;
    expect(inBucket).toMatchObject({
      encoding: 'identity',
      storedBytes: 7001,
      s3Key: `payloads/platform/evt_01J8K7T701/${'f7'.repeat(32)}`,
    });
    expect(inBucket.body).toBeUndefined();
    expect((await blobs.get(inBucket.s3Key!))!.equals(over)).toBe(true);
    expect(writes.filter(([op]) => op === 'putPayload')).toEqual([
      ['putPayload', 7],
      ['putPayload', 1],
    ]);
    expect((await store.payloads.getPayload('platform', 'evt_01J8K7T700', 'f6'.repeat(32)))!.equals(at)).toBe(true);
    expect((await store.payloads.getPayload('platform', 'evt_01J8K7T701', 'f7'.repeat(32)))!.equals(over)).toBe(true);
  });

  it('honours a configured inlineMaxBytes: 300,000 keeps a 64 KiB stored body in its item, 0 sends a 1-byte body to the bucket', async () => {
    const roomy = eventStores({ client: dynamo.doc, tableName: 'events', blobs, clock: () => NOW, inlineMaxBytes: 300_000 });
    const body = binary(65_536, 'roomy');
    expect(await roomy.receipts.recordEvent(event('evt_01J8K7T64K', 'a7'.repeat(32), body.length), body)).toBe('recorded');
    const kept = (await item('evt_01J8K7T64K', 'a7'.repeat(32)))!;
    expect(kept.s3Key).toBeUndefined();
    expect(kept.body!.length).toBe(65_536);
    const none = eventStores({ client: dynamo.doc, tableName: 'events', blobs, clock: () => NOW, inlineMaxBytes: 0 });
    expect(await none.receipts.recordEvent(event('evt_01J8K7T001', 'a8'.repeat(32), 1), Buffer.from('x'))).toBe('recorded');
    expect(await item('evt_01J8K7T001', 'a8'.repeat(32))).toMatchObject({
      storedBytes: 1,
      s3Key: `payloads/platform/evt_01J8K7T001/${'a8'.repeat(32)}`,
    });
  });

  it('answers a retry of the same large body duplicate, rewriting the same object', async () => {
    const body = incompressible(1_000_000);
    expect(await store.receipts.recordEvent(event('evt_01J8K7M1MB', 'a1'.repeat(32), body.length), body)).toBe('duplicate');
  });

  it('reads a payload whose object is gone (lifecycle) as expired', async () => {
    const s3Key = 'payloads/platform/evt_01J8K7GONE/c3';
    await dynamo.doc.send(
      new PutCommand({
        TableName: 'events',
        Item: {
          pk: payloadKey('platform', 'evt_01J8K7GONE', 'c3'),
          kind: 'payload',
          encoding: 'gzip',
          s3Key,
          storedBytes: 400_000,
          expiresAt: Math.floor(NOW / 1000) + 86_400,
        },
      }),
    );
    expect(await store.payloads.getPayload('platform', 'evt_01J8K7GONE', 'c3')).toBeUndefined();
  });

  it('refuses a large body when no bucket is wired, before writing anything', async () => {
    const bare = eventStores({ client: dynamo.doc, tableName: 'events', clock: () => NOW });
    const body = incompressible(1_000_000);
    await expect(bare.receipts.recordEvent(event('evt_01J8K7NOBK', 'd4'.repeat(32), body.length), body)).rejects.toThrow(
      PayloadBucketMissingError,
    );
    expect(await item('evt_01J8K7NOBK', 'd4'.repeat(32))).toBeUndefined();
  });

  it('turns an S3 failure into StorageUnavailableError (intake answers 503) and writes no item', async () => {
    const broken = eventStores({
      client: dynamo.doc,
      tableName: 'events',
      clock: () => NOW,
      blobs: new S3PayloadBlobs({ client: localS3Client(fauxqs.endpoint), bucket: 'no-such-bucket' }),
    });
    const body = incompressible(1_000_000);
    const attempt = broken.receipts.recordEvent(event('evt_01J8K7S3NO', 'e5'.repeat(32), body.length), body);
    await expect(attempt).rejects.toThrow(StorageUnavailableError);
    await expect(attempt).rejects.toThrow(/^payload bucket unavailable \(put: /);
    expect(await item('evt_01J8K7S3NO', 'e5'.repeat(32))).toBeUndefined();
  });
});
