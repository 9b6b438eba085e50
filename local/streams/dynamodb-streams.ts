/**
 * The four DynamoDB Streams reads the stream poller needs, as a port whose records are in the wire
 * shape Lambda puts in its events (epoch-second timestamps, base64 binaries), and an adapter over
 * `@aws-sdk/client-dynamodb-streams` that converts the SDK's Dates and byte arrays back to it.
 * Tests can hand the poller an in-memory implementation instead.
 */
import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
  type AttributeValue as SdkAttributeValue,
  type _Record as SdkRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { AttributeValue } from 'aws-lambda';
import { localStreamsClient } from '../clients';
import { UnknownAttributeTypeError } from './errors';

export interface WireStreamRecord {
  readonly eventID: string;
  readonly eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  readonly eventVersion: string;
  readonly eventSource: string;
  readonly awsRegion: string;
  readonly dynamodb: {
    /** Epoch seconds (DynamoDB Local truncates it to the minute). */
    readonly ApproximateCreationDateTime?: number;
    readonly Keys?: Record<string, AttributeValue>;
    readonly NewImage?: Record<string, AttributeValue>;
    readonly OldImage?: Record<string, AttributeValue>;
    readonly SequenceNumber: string;
    readonly SizeBytes?: number;
    readonly StreamViewType?: 'KEYS_ONLY' | 'NEW_IMAGE' | 'OLD_IMAGE' | 'NEW_AND_OLD_IMAGES';
  };
  readonly userIdentity?: { readonly type: string; readonly principalId: string };
}

export interface WireShard {
  readonly ShardId: string;
  readonly ParentShardId?: string;
}

export type ShardIteratorType = 'TRIM_HORIZON' | 'LATEST' | 'AT_SEQUENCE_NUMBER' | 'AFTER_SEQUENCE_NUMBER';

/** Errors keep the service's names (`ExpiredIteratorException`, `TrimmedDataAccessException`, ...). */
export interface DynamoStreamsApi {
  listStreams(input: { TableName: string; ExclusiveStartStreamArn?: string }): Promise<{
    Streams?: { StreamArn: string; TableName: string; StreamLabel: string }[];
    LastEvaluatedStreamArn?: string;
  }>;
  describeStream(input: { StreamArn: string; ExclusiveStartShardId?: string }): Promise<{
    StreamDescription: { StreamArn: string; StreamStatus: string; Shards?: WireShard[]; LastEvaluatedShardId?: string };
  }>;
  getShardIterator(input: {
    StreamArn: string;
    ShardId: string;
    ShardIteratorType: ShardIteratorType;
    SequenceNumber?: string;
  }): Promise<{ ShardIterator?: string }>;
  getRecords(input: { ShardIterator: string; Limit?: number }): Promise<{
    Records?: WireStreamRecord[];
    /** Absent once a closed shard has been read to its end. */
    NextShardIterator?: string;
  }>;
}

/** The port over an SDK client (bring your own, e.g. with a custom endpoint or retry strategy). */
export function createSdkStreamsApi(client: DynamoDBStreamsClient): DynamoStreamsApi {
  return {
    async listStreams(input) {
      const out = await client.send(new ListStreamsCommand(input));
      return {
        Streams: (out.Streams ?? []).map((s) => ({
          StreamArn: s.StreamArn ?? '',
          TableName: s.TableName ?? '',
          StreamLabel: s.StreamLabel ?? '',
        })),
        ...(out.LastEvaluatedStreamArn ? { LastEvaluatedStreamArn: out.LastEvaluatedStreamArn } : {}),
      };
    },
    async describeStream(input) {
      const { StreamDescription: d } = await client.send(new DescribeStreamCommand(input));
      return {
        StreamDescription: {
          StreamArn: d?.StreamArn ?? input.StreamArn,
          StreamStatus: d?.StreamStatus ?? 'ENABLED',
          Shards: (d?.Shards ?? []).map((s) => ({
            ShardId: s.ShardId ?? '',
            ...(s.ParentShardId ? { ParentShardId: s.ParentShardId } : {}),
          })),
          ...(d?.LastEvaluatedShardId ? { LastEvaluatedShardId: d.LastEvaluatedShardId } : {}),
        },
      };
    },
    async getShardIterator(input) {
      const out = await client.send(new GetShardIteratorCommand(input));
      return out.ShardIterator ? { ShardIterator: out.ShardIterator } : {};
    },
    async getRecords(input) {
      const out = await client.send(new GetRecordsCommand(input));
      return {
        Records: (out.Records ?? []).map(toWire),
        ...(out.NextShardIterator ? { NextShardIterator: out.NextShardIterator } : {}),
      };
    },
  };
}

/** The port for DynamoDB Local at `endpoint`, signed with the local stack's per-start key (local/clients.ts). */
export function createLocalStreamsApi(options: { readonly endpoint: string }): DynamoStreamsApi {
  return createSdkStreamsApi(localStreamsClient(options.endpoint));
}

function toWire(record: SdkRecord): WireStreamRecord {
  const stream = record.dynamodb ?? {};
  const created = stream.ApproximateCreationDateTime;
  return {
    eventID: record.eventID ?? '',
    eventName: record.eventName as WireStreamRecord['eventName'],
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: record.eventSource ?? 'aws:dynamodb',
    awsRegion: record.awsRegion ?? '',
    dynamodb: {
      ...(created ? { ApproximateCreationDateTime: Math.floor(created.getTime() / 1000) } : {}),
      ...(stream.Keys ? { Keys: toWireImage(stream.Keys) } : {}),
      ...(stream.NewImage ? { NewImage: toWireImage(stream.NewImage) } : {}),
      ...(stream.OldImage ? { OldImage: toWireImage(stream.OldImage) } : {}),
      SequenceNumber: stream.SequenceNumber ?? '',
      ...(stream.SizeBytes !== undefined ? { SizeBytes: stream.SizeBytes } : {}),
      ...(stream.StreamViewType
        ? { StreamViewType: stream.StreamViewType as NonNullable<WireStreamRecord['dynamodb']['StreamViewType']> }
        : {}),
    },
    ...(record.userIdentity?.Type
      ? { userIdentity: { type: record.userIdentity.Type, principalId: record.userIdentity.PrincipalId ?? '' } }
      : {}),
  };
}

function toWireImage(image: Record<string, SdkAttributeValue>): Record<string, AttributeValue> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, toWireValue(value)]));
}

/** Binaries become base64 strings, as in the JSON Lambda receives; everything else is as is. */
function toWireValue(value: SdkAttributeValue): AttributeValue {
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString('base64') };
  if (value.BS !== undefined) return { BS: value.BS.map((b) => Buffer.from(b).toString('base64')) };
  if (value.L !== undefined) return { L: value.L.map(toWireValue) };
  if (value.M !== undefined) return { M: toWireImage(value.M) };
  if (value.S !== undefined) return { S: value.S };
  if (value.N !== undefined) return { N: value.N };
  if (value.BOOL !== undefined) return { BOOL: value.BOOL };
  if (value.NULL !== undefined) return { NULL: value.NULL };
  if (value.SS !== undefined) return { SS: value.SS };
  if (value.NS !== undefined) return { NS: value.NS };
  throw new UnknownAttributeTypeError(
    `a stream record holds an attribute value of an unknown type (${Object.keys(value).join(',') || 'none set'}), so it cannot be ` +
      'handed to the stream handler; add the type to toWireValue in local/streams/dynamodb-streams.ts ' +
      '(the @aws-sdk/client-dynamodb-streams release in package.json knows more types than it)',
  );
}
