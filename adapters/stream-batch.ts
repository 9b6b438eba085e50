/**
 * Reads back the stream records a fan-out on-failure record names. Lambda's on-failure record for a
 * DynamoDB stream carries no keys: only the stream, the shard, the first and last sequence numbers
 * and approximate arrival times. What it names is decodable by reading that shard from the first
 * sequence number to the last (GetShardIterator AT_SEQUENCE_NUMBER, then GetRecords), for as long as
 * the stream keeps the records: 24 hours from their write. Past that (TrimmedDataAccessException),
 * or with the stream gone (table re-created, stream re-enabled), the record can no longer be decoded.
 *
 * The answer is the NEW_IMAGE of every INSERT in the range (the only records the fan-out is given);
 * which of them were the fan-out's work (receipts, re-queues) is the caller's to decide.
 */

import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/** Where a stream batch was, as Lambda's on-failure record names it (`DDBStreamBatchInfo`). */
export interface StreamBatchRef {
  readonly streamArn: string;
  readonly shardId: string;
  readonly startSequenceNumber: string;
  readonly endSequenceNumber: string;
}

export type StreamBatchRead =
  | { readonly kind: 'read'; readonly images: readonly Record<string, unknown>[] }
  /** Why the range could not be read whole: the records are past the stream's retention, the stream is gone, an error. */
  | { readonly kind: 'unavailable'; readonly reason: string };

export interface StreamBatchPort {
  read(ref: StreamBatchRef): Promise<StreamBatchRead>;
}

/** GetRecords calls per range before giving up on reaching its last record (each reads up to 1,000 records). */
export const MAX_RANGE_CALLS = 100;

/** The StreamBatchPort over DynamoDB Streams (on AWS, or DynamoDB Local's endpoint). */
export function dynamoStreamBatches(client: DynamoDBStreamsClient, options: { readonly maxCalls?: number } = {}): StreamBatchPort {
  const maxCalls = options.maxCalls ?? MAX_RANGE_CALLS;
  return {
    async read(ref) {
      let start: bigint;
      let end: bigint;
      try {
        start = BigInt(ref.startSequenceNumber);
        end = BigInt(ref.endSequenceNumber);
      } catch {
        return { kind: 'unavailable', reason: 'sequence numbers are not numbers' };
      }
      const images: Record<string, unknown>[] = [];
      try {
        let iterator = (
          await client.send(
            new GetShardIteratorCommand({
              StreamArn: ref.streamArn,
              ShardId: ref.shardId,
              ShardIteratorType: 'AT_SEQUENCE_NUMBER',
              SequenceNumber: ref.startSequenceNumber,
            }),
          )
        ).ShardIterator;
        for (let call = 0; iterator && call < maxCalls; call++) {
          const page = await client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
          for (const record of page.Records ?? []) {
            const seq = sequenceOf(record);
            if (seq === undefined || seq < start) continue;
            if (seq > end) return { kind: 'read', images };
            const image = record.dynamodb?.NewImage;
            if (record.eventName === 'INSERT' && image) images.push(unmarshall(image as Record<string, AttributeValue>));
            if (seq === end) return { kind: 'read', images };
          }
          iterator = page.NextShardIterator;
        }
      } catch (error) {
        const name = error instanceof Error ? error.name : 'Error';
        return { kind: 'unavailable', reason: name === 'TrimmedDataAccessException' ? 'past the stream retention (24 h)' : name };
      }
      return { kind: 'unavailable', reason: 'the last sequence number was not reached' };
    },
  };
}

function sequenceOf(record: StreamRecord): bigint | undefined {
  const raw = record.dynamodb?.SequenceNumber;
  if (raw === undefined) return undefined;
  try {
    return BigInt(raw);
  } catch {
    return undefined;
  }
}
