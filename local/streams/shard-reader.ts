/**
 * The reading half of the stream poller: finds the table's latest stream and its shards, keeps one
 * iterator per shard, reads records into the shard's buffer, and moves the shard's checkpoint (the
 * last sequence number done with) as records are handled, filtered out or skipped.
 *
 * It decides nothing about batches or the handler: the poller (poller.ts) takes records from
 * `shard.buffer` and reports back with `complete`.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import type { PollerLogger } from '../support';
import type { CheckpointStore } from './checkpoints';
import type { DynamoStreamsApi, WireShard, WireStreamRecord } from './dynamodb-streams';

export interface ShardState {
  readonly shardId: string;
  readonly parentShardId: string | undefined;
  iterator: string | undefined;
  /** Last sequence number read from the shard. */
  lastRead: string | undefined;
  /** Last sequence number done with (handled, filtered out or skipped): restarts go after it. */
  checkpoint: string | undefined;
  /** Records read and kept by the filters, not yet done. */
  buffer: DynamoDBRecord[];
  closed: boolean;
  finished: boolean;
  /** A batch is with the handler. */
  busy: boolean;
  /** Start time of the latest GetRecords that found nothing while the buffer was empty. */
  caughtUpAt: number;
  /** When the buffer's first record was read: a batching window is counted from it. */
  heldSince: number | undefined;
  /** The poller's read loop for the shard, while it runs. */
  loop: Promise<void> | undefined;
}

export interface ShardReaderOptions {
  readonly streams: DynamoStreamsApi;
  readonly tableName: string;
  /** Default: checkpoints live in memory only. */
  readonly checkpoints?: CheckpointStore;
  /** Where to start on shards without a checkpoint, at the poller's first start. */
  readonly startingPosition: 'TRIM_HORIZON' | 'LATEST';
  readonly logger: PollerLogger;
  /** The record the handler would get for a wire record, or undefined when the filters drop it. */
  readonly accept: (wire: WireStreamRecord, streamArn: string) => DynamoDBRecord | undefined;
}

export interface ShardReader {
  /** Every shard known on the current stream, in discovery order. */
  shards(): ShardState[];
  /**
   * Finds the table's latest stream and adds the shards not seen before; returns the stream's ARN,
   * or undefined when the table has no stream. A new stream (table re-created, stream re-enabled)
   * replaces the old one's shards, which are marked finished.
   */
  refresh(): Promise<string | undefined>;
  /** Shards to start reading now: no loop, not finished, and any known parent finished. */
  startable(): ShardState[];
  /** Gets an iterator after the last record read, else after the checkpoint, else at the start position. */
  openIterator(streamArn: string, shard: ShardState, initial: boolean): Promise<void>;
  /**
   * One GetRecords: buffers the records the filters keep, checkpoints the ones they drop while the
   * buffer is empty. Returns true when it found nothing and nothing is buffered (caught up).
   */
  read(streamArn: string, shard: ShardState): Promise<boolean>;
  /** Records the first `done` records of `batch` (the buffer's head) as done, and checkpoints. */
  complete(streamArn: string, shard: ShardState, batch: readonly DynamoDBRecord[], done: number): void;
  /**
   * Deals with the errors a stream read is expected to meet (expired iterator, trimmed records, a
   * shard gone); returns false for any other error, which the caller reports and retries.
   */
  recover(streamArn: string, shard: ShardState, error: unknown): Promise<boolean>;
  /** Forgets what was read but not done: the next read starts after the checkpoint. */
  release(shard: ShardState): void;
}

export function createShardReader(options: ShardReaderOptions): ShardReader {
  return new StreamShardReader(options);
}

/** GetRecords returns at most this many records a call (the service's own limit). */
const RECORDS_PER_READ = 1000;

class StreamShardReader implements ShardReader {
  private streamArn: string | undefined;
  private known = new Map<string, ShardState>();

  constructor(private readonly options: ShardReaderOptions) {}

  shards(): ShardState[] {
    return [...this.known.values()];
  }

  async refresh(): Promise<string | undefined> {
    const arn = await this.latestStreamArn();
    if (!arn) return undefined;
    if (arn !== this.streamArn) {
      // A new stream (table re-created or stream re-enabled): start it from the beginning.
      if (this.streamArn !== undefined) {
        this.options.logger.warn('stream changed; reading the new stream from TRIM_HORIZON', { from: this.streamArn, to: arn });
        for (const shard of this.known.values()) shard.finished = true;
        this.known = new Map();
      }
      this.streamArn = arn;
    }
    for (const wire of await this.listShards(arn)) {
      if (!this.known.has(wire.ShardId)) this.known.set(wire.ShardId, newShard(wire, this.options.checkpoints?.load(arn, wire.ShardId)));
    }
    return arn;
  }

  startable(): ShardState[] {
    return this.shards().filter((shard) => {
      if (shard.loop || shard.finished) return false;
      const parent = shard.parentShardId ? this.known.get(shard.parentShardId) : undefined;
      // Lambda reads a parent shard to its end before its children, so per-key order holds.
      return !parent || parent.finished;
    });
  }

  async openIterator(arn: string, shard: ShardState, initial: boolean): Promise<void> {
    const after = shard.lastRead ?? shard.checkpoint;
    const request = after
      ? { StreamArn: arn, ShardId: shard.shardId, ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: after }
      : {
          StreamArn: arn,
          ShardId: shard.shardId,
          ShardIteratorType: initial ? this.options.startingPosition : ('TRIM_HORIZON' as const),
        };
    const { ShardIterator } = await this.options.streams.getShardIterator(request);
    if (!ShardIterator) shard.closed = true;
    shard.iterator = ShardIterator;
  }

  async read(arn: string, shard: ShardState): Promise<boolean> {
    const startedAt = Date.now();
    const page = await this.options.streams.getRecords({ ShardIterator: shard.iterator as string, Limit: RECORDS_PER_READ });
    shard.iterator = page.NextShardIterator;
    if (!page.NextShardIterator) shard.closed = true;
    const records = page.Records ?? [];
    for (const wire of records) {
      shard.lastRead = wire.dynamodb.SequenceNumber;
      const record = this.options.accept(wire, arn);
      if (record) shard.buffer.push(record);
      else if (shard.buffer.length === 0) this.setCheckpoint(arn, shard, shard.lastRead); // Lambda drops it: done.
    }
    if (records.length === 0 && shard.buffer.length === 0) {
      shard.caughtUpAt = startedAt;
      return true;
    }
    return false;
  }

  complete(arn: string, shard: ShardState, batch: readonly DynamoDBRecord[], done: number): void {
    shard.buffer.splice(0, done);
    if (done > 0) this.setCheckpoint(arn, shard, batch[done - 1]?.dynamodb?.SequenceNumber);
    if (done === batch.length && shard.buffer.length === 0 && shard.lastRead) this.setCheckpoint(arn, shard, shard.lastRead);
  }

  async recover(arn: string, shard: ShardState, error: unknown): Promise<boolean> {
    const name = error instanceof Error ? error.name : undefined;
    if (name === 'ExpiredIteratorException') {
      await this.openIterator(arn, shard, false).catch(() => undefined);
      return true;
    }
    if (name === 'TrimmedDataAccessException') {
      this.options.logger.warn('records were trimmed before they were read; continuing from TRIM_HORIZON', { shardId: shard.shardId });
      shard.lastRead = undefined;
      this.setCheckpoint(arn, shard, undefined);
      await this.openIterator(arn, shard, false).catch(() => undefined);
      return true;
    }
    if (name === 'ResourceNotFoundException') {
      shard.finished = true;
      return true;
    }
    return false;
  }

  release(shard: ShardState): void {
    // On stop, what was read but not done is read again after the checkpoint at the next start.
    shard.buffer = [];
    shard.heldSince = undefined;
    shard.lastRead = undefined;
    shard.iterator = undefined;
  }

  private async latestStreamArn(): Promise<string | undefined> {
    let latest: { StreamArn: string; StreamLabel: string } | undefined;
    let start: string | undefined;
    do {
      const page = await this.options.streams.listStreams({ TableName: this.options.tableName, ExclusiveStartStreamArn: start });
      for (const stream of page.Streams ?? []) {
        if (!latest || stream.StreamLabel > latest.StreamLabel) latest = stream;
      }
      start = page.LastEvaluatedStreamArn;
    } while (start);
    return latest?.StreamArn;
  }

  private async listShards(arn: string): Promise<WireShard[]> {
    const all: WireShard[] = [];
    let start: string | undefined;
    do {
      const page = await this.options.streams.describeStream({ StreamArn: arn, ExclusiveStartShardId: start });
      all.push(...(page.StreamDescription.Shards ?? []));
      start = page.StreamDescription.LastEvaluatedShardId;
    } while (start);
    return all;
  }

  private setCheckpoint(arn: string, shard: ShardState, sequenceNumber: string | undefined): void {
    if (shard.checkpoint === sequenceNumber) return;
    shard.checkpoint = sequenceNumber;
    this.options.checkpoints?.save(arn, shard.shardId, sequenceNumber);
  }
}

function newShard(wire: WireShard, checkpoint: string | undefined): ShardState {
  return {
    shardId: wire.ShardId,
    parentShardId: wire.ParentShardId,
    iterator: undefined,
    lastRead: undefined,
    checkpoint,
    buffer: [],
    closed: false,
    finished: false,
    busy: false,
    caughtUpAt: -Infinity,
    heldSince: undefined,
    loop: undefined,
  };
}
