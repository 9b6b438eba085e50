/**
 * Fan-out: EventStore stream -> one message per (event, subscribed consumer) on that consumer's queue.
 *
 * Each stream record carries the attribution and the delivery set (the receipt's NewImage), so
 * records from one write are never assumed atomic or ordered. The fan-out is the only reader of
 * stored payloads: it reads each event's payload once and puts into each consumer's message only
 * the fields that consumer may see, so no consumer role needs (or has) access to payload items.
 * Sends are batched per queue across the whole stream batch. A record whose messages could not all
 * be sent is reported failed; Lambda then re-sends it and everything after it, so sends are
 * at-least-once and the consumer runtime's claim makes a second copy harmless.
 */
import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, type SQSClient } from '@aws-sdk/client-sqs';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { narrowPayload, readPath } from '../../adapters/dotted-path';
import type { PayloadBlobs } from '../../adapters/payload-blobs';
import type { Payloads } from '../../adapters/payloads';
import { retentionDaysOf, viewObjectKey } from '../../core/blobs';
import { type BodyFormat, BodyFormatError, readBody } from '../../core/body';
import { queueSendParameters } from '../../core/config/consumers';
import type { HookledgerConfig } from '../../core/config/schema';
import { HookledgerError } from '../../core/errors';
import { type DeliveryMessage, type EventItem, MAX_QUEUE_MESSAGE_BYTES, type RequeueItem } from '../../core/model';
import type { Logger } from '../shared/logger';

export interface FanoutDeps {
  readonly sqs: SQSClient;
  /** consumer id -> queue URL */
  readonly queueUrls: Readonly<Record<string, string>>;
  readonly logger: Logger;
  /**
   * Told, once per batch and consumer, how many deliveries were skipped because the record names a
   * consumer with no queue (removed from the config since the receipt or re-queue was written).
   * @default - counted in the log line only
   */
  readonly onSkipped?: (consumerId: string, count: number) => void;
  /** Where the stored payloads are read, once per event. */
  readonly payloads: Pick<Payloads, 'getPayload'>;
  /** consumer id -> the payload fields (dotted paths) it may see: its config's `fields`. */
  readonly views: Readonly<Record<string, readonly string[]>>;
  /**
   * source id -> its body format (`sourceBodyFormats`): a stored body is read as intake read it
   * (core/body.ts), JSON for a source no longer configured.
   */
  readonly bodyFormats: Readonly<Record<string, BodyFormat>>;
  /**
   * consumer id -> the body path of its `ordering.version`: the fan-out reads the version from the
   * full payload onto the message, so stale dropping works whatever fields the consumer may see.
   * @default none
   */
  readonly versionPaths?: Readonly<Record<string, string>>;
  /**
   * Claim check: where a narrowed view too large for a queue message is put (the payload bucket,
   * under `views/<consumerId>/`, which only that consumer's role may read).
   * @default - none: such a delivery is marked `payloadUnavailable: 'too_large'`
   */
  readonly viewObjects?: Pick<PayloadBlobs, 'put'>;
  /** @default Date.now */
  readonly clock?: () => number;
  /**
   * How long one invocation keeps retrying a failed payload read (exponential backoff from 100 ms)
   * before it reports the record failed. The fan-out is the only reader of payloads, so a short
   * storage outage or throttling must not use up the stream's retry budget and push acknowledged
   * events to the on-failure queue; beyond this, the record fails and is retried by the event source.
   * @default 0 (no in-process retry); the deployed and local handlers use FANOUT_READ_RETRY_MS
   */
  readonly readRetryMs?: number;
  /** @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** The deployed fan-out's payload-read retry window: well inside its 60 s timeout. */
export const FANOUT_READ_RETRY_MS = 25_000;

/** consumer id -> the body path of its ordering version, for ordered consumers that drop stale versions. */
export function consumerVersionPaths(config: Pick<HookledgerConfig, 'consumers'>): Record<string, string> {
  return Object.fromEntries(config.consumers.flatMap((c) => (c.ordering?.version ? [[c.id, c.ordering.version.body]] : [])));
}

/** source id -> how its bodies are read, from the configuration (resolved there from the scheme). */
export function sourceBodyFormats(config: Pick<HookledgerConfig, 'sources'>): Record<string, BodyFormat> {
  return Object.fromEntries(config.sources.map((s) => [s.id, s.bodyFormat]));
}

/** consumer id -> the payload fields it may see, from the configuration. */
export function consumerViews(config: Pick<HookledgerConfig, 'consumers'>): Record<string, readonly string[]> {
  return Object.fromEntries(config.consumers.map((c) => [c.id, c.fields]));
}

export type FanoutHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;

interface Outgoing {
  readonly recordIndex: number;
  readonly consumerId: string;
  message: DeliveryMessage;
  /** The receipt's or re-queue's X-Ray trace header (`tracing: 'xray'`), sent beside the message as its AWSTraceHeader. */
  readonly traceHeader?: string;
}

const messageBytes = (message: DeliveryMessage) => Buffer.byteLength(JSON.stringify(message), 'utf8');

function stripPayload(message: DeliveryMessage): DeliveryMessage {
  const { payload: _dropped, ...rest } = message;
  return rest;
}

/** SendMessageBatch takes at most 10 entries and MAX_QUEUE_MESSAGE_BYTES in all. */
export function sendBatches<T extends { readonly message: DeliveryMessage }>(items: readonly T[]): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = messageBytes(item.message);
    if (current.length > 0 && (current.length === 10 || bytes + size > MAX_QUEUE_MESSAGE_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

export class UnroutableRecordError extends HookledgerError {
  override readonly name = 'UnroutableRecordError';
}

/** The fan-out's dependencies with their defaults filled in, once per handler: what every step reads. */
interface FanoutContext extends FanoutDeps {
  readonly clock: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly readRetryMs: number;
}

/** One stream batch on its way out: every step adds to `failed`, and nothing more of a failed record is sent. */
interface FanoutBatch {
  readonly records: readonly DynamoDBRecord[];
  /** Indexes (in `records`) of the records reported failed. */
  readonly failed: Set<number>;
  /** Every message the batch stands for, in record order; a step may replace a message (its view). */
  readonly outgoing: Outgoing[];
}

/**
 * The handler composes the steps: route (records to messages) → assignQueues → attachViews (payload
 * read once per event, narrowed per consumer) → reportSkipped → sendToQueues → respond.
 */
export function createFanoutHandler(deps: FanoutDeps): FanoutHandler {
  const ctx: FanoutContext = {
    ...deps,
    clock: deps.clock ?? Date.now,
    sleep: deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    readRetryMs: deps.readRetryMs ?? 0,
  };
  return async (event) => {
    const batch: FanoutBatch = { records: event.Records, failed: new Set(), outgoing: [] };
    route(ctx, batch);
    const { byQueue, skipped } = assignQueues(ctx, batch);
    await attachViews(
      ctx,
      batch.outgoing.filter((out) => !batch.failed.has(out.recordIndex) && ctx.queueUrls[out.consumerId]),
      batch.failed,
    );
    reportSkipped(ctx, skipped);
    await sendToQueues(ctx, byQueue, batch.failed);
    return respond(ctx, batch);
  };
}

/** Each record's messages into `batch.outgoing`; a record that cannot be routed is failed. */
function route({ logger }: FanoutContext, batch: FanoutBatch): void {
  batch.records.forEach((record, recordIndex) => {
    try {
      // A receipt's or a re-queue's trace header (tracing: 'xray'); a bundle built for tracing off carries none.
      const traceHeader = process.env.HOOKLEDGER_BUNDLED_TRACING !== 'false' ? record.dynamodb?.NewImage?.traceHeader?.S : undefined;
      for (const message of messagesFor(record)) {
        batch.outgoing.push({ recordIndex, consumerId: message.consumerId, message, ...(traceHeader ? { traceHeader } : {}) });
      }
    } catch (error) {
      batch.failed.add(recordIndex);
      logger.error('stream record not routable', {
        sequence: record.dynamodb?.SequenceNumber,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  });
}

/** The messages of records not failed, by queue URL; and the event ids of those to consumers with no queue. */
function assignQueues(ctx: FanoutContext, batch: FanoutBatch): { byQueue: Map<string, Outgoing[]>; skipped: Map<string, string[]> } {
  const byQueue = new Map<string, Outgoing[]>();
  const skipped = new Map<string, string[]>();
  for (const out of batch.outgoing) {
    if (batch.failed.has(out.recordIndex)) continue;
    const url = ctx.queueUrls[out.consumerId];
    if (!url) {
      // A consumer removed from the config: retrying can never succeed, and failing the record
      // would hold back the whole shard, so its delivery is skipped (counted and logged) and the
      // record's other consumers still get theirs. Its retained DLQ and ledger rows stay.
      skipped.set(out.consumerId, [...(skipped.get(out.consumerId) ?? []), out.message.eventId]);
      continue;
    }
    byQueue.set(url, [...(byQueue.get(url) ?? []), out]);
  }
  return { byQueue, skipped };
}

function reportSkipped(ctx: FanoutContext, skipped: ReadonlyMap<string, readonly string[]>): void {
  for (const [consumerId, eventIds] of skipped) {
    ctx.logger.warn('skipped deliveries to a consumer that is no longer configured', {
      consumer_id: consumerId,
      skipped: eventIds.length,
      event_ids: eventIds.slice(0, 20),
    });
    ctx.onSkipped?.(consumerId, eventIds.length);
  }
}

/** Every queue's messages (of records not failed by now) in SendMessageBatch chunks; a record with a message not accepted is failed. */
async function sendToQueues(ctx: FanoutContext, byQueue: ReadonlyMap<string, Outgoing[]>, failed: Set<number>): Promise<void> {
  await Promise.all(
    [...byQueue].map(async ([queueUrl, items]) => {
      for (const chunk of sendBatches(items.filter((out) => !failed.has(out.recordIndex)))) {
        for (const index of await sendChunk(ctx, queueUrl, chunk)) failed.add(index);
      }
    }),
  );
}

function respond({ logger }: FanoutContext, batch: FanoutBatch): DynamoDBBatchResponse {
  for (const out of batch.outgoing) {
    if (!batch.failed.has(out.recordIndex)) {
      logger.debug('queued', { event_id: out.message.eventId, consumer_id: out.consumerId, tenant_id: out.message.tenantId });
    }
  }
  // Lambda checkpoints at the lowest failed sequence number; report every failed one anyway.
  return {
    batchItemFailures: [...batch.failed]
      .sort((a, b) => a - b)
      .map((i) => ({ itemIdentifier: batch.records[i]?.dynamodb?.SequenceNumber ?? '' })),
  };
}

/**
 * Reads each event's payload once (one strongly consistent GetItem per event, whatever its number
 * of consumers) and gives every message its consumer's narrowed view. A payload past retention,
 * or one that is not there, is said on the message (`payloadUnavailable`), so that delivery alone
 * is refused by the consumer runtime with that reason; a storage error fails the record (retried).
 * A view too large for a message travels by claim check (see claimCheck).
 */
async function attachViews(ctx: FanoutContext, outs: readonly Outgoing[], failed: Set<number>): Promise<void> {
  const byPayload = new Map<string, Outgoing[]>();
  for (const out of outs) {
    const m = out.message;
    const key = `${m.source}\n${m.eventId}\n${m.payloadHmac ?? ''}`;
    byPayload.set(key, [...(byPayload.get(key) ?? []), out]);
  }
  const now = ctx.clock();
  await Promise.all([...byPayload.values()].map((group) => attachGroupViews(ctx, group, failed, now)));
}

/** The stored payload of one event, as intake read it; or why its deliveries go without one. */
type StoredPayload =
  | { readonly kind: 'read'; readonly payload: Record<string, unknown> | undefined }
  | { readonly kind: 'unreadable' }
  | { readonly kind: 'read_failed' };

/** The views of one event's messages (`group`: same source, event id and payload hash). */
async function attachGroupViews(ctx: FanoutContext, group: readonly Outgoing[], failed: Set<number>, now: number): Promise<void> {
  const first = group[0]!.message;
  const stored = await readStoredPayload(ctx, first, now);
  if (stored.kind === 'read_failed') {
    for (const out of group) failed.add(out.recordIndex);
    return;
  }
  const payload = stored.kind === 'read' ? stored.payload : undefined;
  try {
    for (const out of group) {
      const versionPath = ctx.versionPaths?.[out.consumerId];
      const version = payload && versionPath ? readPath(payload, versionPath) : undefined;
      out.message = payload
        ? {
            ...out.message,
            payload: narrowPayload(payload, ctx.views[out.consumerId] ?? []),
            ...(typeof version === 'string' || typeof version === 'number' ? { orderingVersion: version } : {}),
          }
        : { ...out.message, payloadUnavailable: stored.kind === 'unreadable' ? 'unreadable' : 'expired' };
      if (messageBytes(out.message) > MAX_QUEUE_MESSAGE_BYTES) out.message = await claimCheck(ctx, out.message);
    }
  } catch (error) {
    for (const out of group) failed.add(out.recordIndex);
    ctx.logger.warn('view object write failed', { event_id: first.eventId, error: error instanceof Error ? error.name : 'unknown' });
  }
}

/**
 * The payload a message names, read (with retries) unless past its retention: `payload` undefined
 * when expired or not there. A storage error that outlasts the retries is `read_failed` (logged).
 */
async function readStoredPayload(ctx: FanoutContext, message: DeliveryMessage, now: number): Promise<StoredPayload> {
  if (message.payloadExpiresAt !== undefined && message.payloadExpiresAt <= now) return { kind: 'read', payload: undefined };
  let raw: Buffer | undefined;
  try {
    raw = await readWithRetry(ctx, () => ctx.payloads.getPayload(message.source, message.eventId, message.payloadHmac), message.eventId);
  } catch (error) {
    ctx.logger.warn('payload read failed', { event_id: message.eventId, error: error instanceof Error ? error.name : 'unknown' });
    return { kind: 'read_failed' };
  }
  try {
    // Read as intake read it, in the source's format (a form body: Twilio, Slack commands).
    return { kind: 'read', payload: raw ? readBody(raw, ctx.bodyFormats[message.source] ?? 'json') : undefined };
  } catch (error) {
    if (!(error instanceof BodyFormatError)) throw error;
    // Not retried, since reading again cannot help: a body stored before its source's format
    // was fixed, or under another one. Each delivery says so and is quarantined.
    ctx.logger.warn('stored payload unreadable', { event_id: message.eventId, source: message.source, reason: error.code });
    return { kind: 'unreadable' };
  }
}

/**
 * A view too large for a queue message goes to the payload bucket under its consumer's prefix,
 * named by its content's SHA-256 (a re-sent record writes the same object again, harmlessly), and
 * the message carries the key. Without a bucket the delivery is refused per message (`too_large`).
 */
async function claimCheck(ctx: FanoutContext, message: DeliveryMessage): Promise<DeliveryMessage> {
  const bytes = messageBytes(message);
  if (!ctx.viewObjects) {
    ctx.logger.error('narrowed view exceeds the queue message limit', {
      event_id: message.eventId,
      consumer_id: message.consumerId,
      bytes,
    });
    return { ...stripPayload(message), payloadUnavailable: 'too_large' };
  }
  const view = Buffer.from(JSON.stringify(message.payload ?? {}), 'utf8');
  const key = viewObjectKey(message.consumerId, message.eventId, createHash('sha256').update(view).digest('hex'));
  // Tagged with the event's retention (its source's), so the view expires with the body it came from.
  const retentionDays = message.payloadExpiresAt !== undefined ? retentionDaysOf(message.receivedAt, message.payloadExpiresAt) : undefined;
  await ctx.viewObjects.put(key, view, 'application/json', retentionDays);
  ctx.logger.info('narrowed view sent by claim check', { event_id: message.eventId, consumer_id: message.consumerId, bytes });
  return { ...stripPayload(message), payloadObject: key };
}

async function readWithRetry<T>(ctx: FanoutContext, read: () => Promise<T>, eventId: string): Promise<T> {
  // Time waited, not the injected event clock (tests fix that one).
  let waited = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      const waitMs = Math.min(100 * 2 ** attempt, 5_000);
      if (waited + waitMs > ctx.readRetryMs) throw error;
      waited += waitMs;
      ctx.logger.warn('payload read failed; retrying', {
        event_id: eventId,
        attempt: attempt + 1,
        error: error instanceof Error ? error.name : 'unknown',
      });
      await ctx.sleep(waitMs);
    }
  }
}

/** Returns the record indexes whose message in this chunk was not accepted. */
async function sendChunk(ctx: FanoutContext, queueUrl: string, chunk: readonly Outgoing[]): Promise<number[]> {
  const entries: SendMessageBatchRequestEntry[] = chunk.map((out, i) => ({
    Id: String(i),
    MessageBody: JSON.stringify(out.message),
    // Ordered consumers' queues are FIFO: group = ordering key, deduplication id = ledger key; a
    // standard queue's group is the tenant (fair queues).
    ...queueSendParameters(queueUrl, out.message),
    // The system attribute by which Lambda links the consumer's trace to intake's (lambdas/shared/tracing.ts).
    ...(out.traceHeader ? { MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: out.traceHeader } } } : {}),
  }));
  try {
    const result = await ctx.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    const failedIds = (result.Failed ?? []).map((f) => Number(f.Id));
    if (failedIds.length > 0) {
      ctx.logger.warn('some messages not sent', { queue: queueUrl.split('/').pop(), failed: failedIds.length });
    }
    return failedIds.map((id) => chunk[id]?.recordIndex ?? -1).filter((i) => i >= 0);
  } catch (error) {
    ctx.logger.warn('send to queue failed', {
      queue: queueUrl.split('/').pop(),
      error: error instanceof Error ? error.name : 'unknown',
    });
    return chunk.map((out) => out.recordIndex);
  }
}

/** The delivery messages one stream record stands for. */
export function messagesFor(record: DynamoDBRecord): DeliveryMessage[] {
  if (record.eventName !== 'INSERT') return [];
  const image = record.dynamodb?.NewImage;
  if (!image) throw new UnroutableRecordError('INSERT record without NewImage (stream view must be NEW_IMAGE)');
  const item = unmarshall(image as Record<string, AttributeValue>) as Record<string, unknown>;
  if (item.kind === 'event') {
    const event = item as unknown as EventItem;
    requireAttribution(event);
    if (!Array.isArray(event.consumers)) throw new UnroutableRecordError(`event ${event.eventId} has no delivery set`);
    return event.consumers.map((consumerId) => ({
      v: 2,
      source: event.source,
      eventId: event.eventId,
      eventType: event.eventType,
      tenantId: event.tenantId,
      keyId: event.keyId,
      receivedAt: event.receivedAt,
      consumerId,
      ...payloadRef(event),
      ...(event.orderingKeys?.[consumerId] !== undefined ? { orderingKey: event.orderingKeys[consumerId] } : {}),
    }));
  }
  if (item.kind === 'requeue') {
    const requeue = item as unknown as RequeueItem;
    requireAttribution(requeue);
    return [
      {
        v: 2,
        source: requeue.source,
        eventId: requeue.eventId,
        eventType: requeue.eventType,
        tenantId: requeue.tenantId,
        keyId: requeue.keyId,
        receivedAt: requeue.receivedAt,
        consumerId: requeue.consumerId,
        // A repair is an ordinary delivery again (a done one stays done); only a replay re-runs it.
        ...(requeue.replayId ? { replayId: requeue.replayId } : requeue.repairId ? { repairId: requeue.repairId } : {}),
        ...payloadRef(requeue),
        ...(requeue.orderingKey !== undefined ? { orderingKey: requeue.orderingKey } : {}),
      },
    ];
  }
  return [];
}

/** Which payload item the delivery reads and until when (absent on items from before keyed hashes). */
function payloadRef(item: { payloadHmac?: string; payloadExpiresAt?: number }): Pick<DeliveryMessage, 'payloadHmac' | 'payloadExpiresAt'> {
  return {
    ...(typeof item.payloadHmac === 'string' ? { payloadHmac: item.payloadHmac } : {}),
    ...(typeof item.payloadExpiresAt === 'number' ? { payloadExpiresAt: item.payloadExpiresAt } : {}),
  };
}

function requireAttribution(item: Partial<EventItem | RequeueItem>): void {
  for (const field of ['source', 'eventId', 'eventType', 'tenantId', 'keyId'] as const) {
    if (typeof item[field] !== 'string' || item[field] === '') {
      throw new UnroutableRecordError(`record is missing attribution field ${field}`);
    }
  }
}
