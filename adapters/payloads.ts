/**
 * Payloads in the EventStore table (`pay#` items): the bytes of each received body, gzipped when that
 * is smaller, kept in the item or, past the inline threshold (`payloads.inlineMaxBytes`), in the
 * payload bucket with the item holding the object key. Written by intake (through Receipts.recordEvent), read by the fan-out and
 * the operator paths. Expired means expired: an item TTL has not deleted yet is never served.
 * PayloadWrites is intake's part (write, and discard on a conflict); Payloads adds the reads and
 * erasure, so intake's bundle holds none of them.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_INLINE_PAYLOAD_BYTES, payloadObjectKey, payloadStoreFor, retentionDaysOf } from '../core/blobs';
import { HookledgerError } from '../core/errors';
import { type EventItem, type PayloadItem, payloadKey } from '../core/model';
import type { BlobWrites, PayloadBlobs } from './payload-blobs';
import { EventTable, type TableOptions, translate } from './table';

export interface PayloadsOptions extends TableOptions {
  /** Epoch ms; decides whether a payload is past its retention. Default Date.now. */
  readonly clock?: () => number;
  /**
   * The payload bucket: bodies whose stored size passes `inlineMaxBytes` are kept there and their
   * payload item holds the object key. Needed by intake and by whoever reads payloads.
   * @default - none: such a body cannot be recorded (PayloadBucketMissingError)
   */
  readonly blobs?: PayloadBlobs;
  /**
   * The configuration's `payloads.inlineMaxBytes`: the largest stored body kept in its payload item.
   * @default DEFAULT_INLINE_PAYLOAD_BYTES
   */
  readonly inlineMaxBytes?: number;
}

/** A body too large for its payload item, and no payload bucket to put it in: a wiring bug. */
export class PayloadBucketMissingError extends HookledgerError {
  override readonly name = 'PayloadBucketMissingError';
}

/** What intake does with payloads: writes each body, and discards one its event id turned out to be held by other bytes. */
export class PayloadWrites extends EventTable {
  private readonly blobs?: BlobWrites;
  private readonly inlineMaxBytes: number;

  constructor(options: Omit<PayloadsOptions, 'clock' | 'blobs'> & { readonly blobs?: BlobWrites }) {
    super(options);
    this.blobs = options.blobs;
    this.inlineMaxBytes = options.inlineMaxBytes ?? DEFAULT_INLINE_PAYLOAD_BYTES;
  }

  /**
   * Stores one event's body; returns the payload item as written. Idempotent: a payload item that
   * exists already (an earlier request with these very bytes) is left as it is. SDK errors are
   * translated (intake's path).
   *
   * A body whose stored size passes `inlineMaxBytes` is written to the payload bucket first
   * and the item keeps its key. Object before item, so an item never names a missing object; an
   * object whose item or receipt never lands (a failed write, a duplicate_conflict) is referenced by
   * nothing and the bucket's lifecycle deletes it after the retention days.
   */
  async write(
    event: Pick<EventItem, 'source' | 'eventId' | 'payloadHmac' | 'payloadExpiresAt'> & Partial<Pick<EventItem, 'receivedAt'>>,
    rawBody: Buffer,
  ): Promise<PayloadItem> {
    const zipped = gzipSync(rawBody);
    const useGzip = zipped.length < rawBody.length;
    const stored = useGzip ? zipped : rawBody;
    const common = {
      pk: payloadKey(event.source, event.eventId, event.payloadHmac),
      kind: 'payload' as const,
      // The hash is in the key only: every byte of this item counts toward its write units.
      encoding: useGzip ? ('gzip' as const) : ('identity' as const),
      expiresAt: Math.floor(event.payloadExpiresAt / 1000),
    };
    let payload: PayloadItem;
    if (payloadStoreFor(stored.length, this.inlineMaxBytes) === 'bucket') {
      if (!this.blobs) {
        throw new PayloadBucketMissingError(
          `a body stored as ${stored.length} bytes needs the payload bucket, and this event store has none`,
        );
      }
      const s3Key = payloadObjectKey(event.source, event.eventId, event.payloadHmac);
      // Tagged with the source's retention: the bucket's lifecycle rule for that value expires it.
      const retentionDays = event.receivedAt !== undefined ? retentionDaysOf(event.receivedAt, event.payloadExpiresAt) : undefined;
      await this.blobs.put(s3Key, stored, useGzip ? 'application/gzip' : 'application/octet-stream', retentionDays);
      payload = { ...common, s3Key, storedBytes: stored.length };
    } else {
      payload = { ...common, body: stored };
    }
    try {
      await this.put('putPayload', payload, 'attribute_not_exists(pk)');
    } catch (error) {
      // Already stored: an earlier request with these very bytes got this far. The receipt's own
      // condition decides what this request is.
      if (!(error instanceof ConditionalCheckFailedException)) throw translate(error);
    }
    return payload;
  }

  /** Deletes a payload item no receipt references (its event id is held by other bytes). Untranslated. */
  async discard(pk: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: { pk } }));
    this.onCapacity?.('deleteConflictPayload', 1, 0);
  }
}

/** Payloads as their readers (fan-out, HTTP workers, operators) and erasure see them; writes as intake's. */
export class Payloads extends PayloadWrites {
  private readonly clock: () => number;
  private readonly readBlobs?: PayloadBlobs;

  constructor(options: PayloadsOptions) {
    super(options);
    this.clock = options.clock ?? Date.now;
    this.readBlobs = options.blobs;
  }

  /**
   * Erasure (`hookledger erase`): deletes the event's payload item, whatever its expiry; true when
   * there was one. A dry run only reads whether there is one, so it counts what the real run deletes.
   * The bucket objects it may name are deleted by prefix (ErasableBlobs), not through the item.
   */
  async erase(source: string, eventId: string, payloadHmac: string | undefined, dryRun = false): Promise<boolean> {
    const pk = payloadKey(source, eventId, payloadHmac);
    if (dryRun) return (await this.read('getPayloadExpiry', pk, 'pk')) !== undefined;
    try {
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: { pk }, ConditionExpression: 'attribute_exists(pk)' }));
      this.onCapacity?.('erasePayload', 1, 0);
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      // The operator's path: other SDK errors reach the CLI as they are.
      throw error;
    }
  }

  /**
   * The raw payload bytes, or undefined once past retention: an item TTL has not deleted yet (TTL
   * may lag by days) is never served. `payloadHmac` names the item (absent for old receipts).
   */
  async getPayload(source: string, eventId: string, payloadHmac?: string): Promise<Buffer | undefined> {
    const item = (await this.get('getPayload', payloadKey(source, eventId, payloadHmac))) as PayloadItem | undefined;
    if (!item) return undefined;
    if (item.expiresAt * 1000 <= this.clock()) return undefined;
    let body: Buffer | undefined;
    if (item.s3Key !== undefined) {
      if (!this.readBlobs)
        throw new PayloadBucketMissingError(`payload ${item.pk} is in the payload bucket, and this event store has none`);
      // Missing: the lifecycle expired it (its day count is the retention) before TTL removed the item.
      body = await this.readBlobs.get(item.s3Key);
      if (!body) return undefined;
    } else {
      body = Buffer.from(item.body ?? new Uint8Array());
    }
    return item.encoding === 'gzip' ? gunzipSync(body) : body;
  }

  /** Whether the payload item is still stored and within retention; reads its expiry, not its bytes. */
  async hasPayload(source: string, eventId: string, payloadHmac?: string): Promise<boolean> {
    return (await this.payloadState(source, eventId, payloadHmac)).present;
  }

  /**
   * `hasPayload`, and where the bytes are: `s3Key` names the payload bucket's object when the body
   * was too large for its item. Reads the item's expiry and key, not its bytes.
   */
  async payloadState(
    source: string,
    eventId: string,
    payloadHmac?: string,
  ): Promise<{ readonly present: boolean; readonly s3Key?: string }> {
    const item = await this.read('getPayloadExpiry', payloadKey(source, eventId, payloadHmac), 'pk, expiresAt, s3Key');
    if (!item) return { present: false };
    // TTL deletes lag expiry (by up to days on AWS; never on DynamoDB Local): expired means expired.
    const expiresAt = item.expiresAt as number | undefined;
    const present = expiresAt === undefined || expiresAt * 1000 > this.clock();
    return { present, ...(typeof item.s3Key === 'string' ? { s3Key: item.s3Key } : {}) };
  }
}
