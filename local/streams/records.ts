/**
 * The record Lambda hands a DynamoDB-stream handler, built from the wire record GetRecords returns.
 * Makes good what DynamoDB Local gets wrong: `awsRegion` (it says "ddblocal"), the minute-truncated
 * ApproximateCreationDateTime, and its TTL deletes.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import type { WireStreamRecord } from './dynamodb-streams';

/** The userIdentity of a stream record written by a TTL delete on AWS. */
export const TTL_IDENTITY = { type: 'Service', principalId: 'dynamodb.amazonaws.com' } as const;

export interface RecordContext {
  /** The record's eventSourceARN. */
  readonly streamArn: string;
  /** The record's awsRegion. */
  readonly region: string;
  /** When the poller first read the record, epoch milliseconds. */
  readonly readAt: number;
}

export function toLambdaRecord(wire: WireStreamRecord, context: RecordContext): DynamoDBRecord {
  const firstSeen = Math.floor(context.readAt / 1000);
  const truncated = wire.dynamodb.ApproximateCreationDateTime;
  // DynamoDB Local truncates the time to the minute; when the record is first read within that
  // minute, the read time is the better approximation (AWS gives whole seconds).
  const approximate = truncated === undefined ? firstSeen : firstSeen >= truncated && firstSeen < truncated + 60 ? firstSeen : truncated;
  // DynamoDB Local (3.3.0) runs TTL itself, about every 10 s, and writes those deletes to the
  // stream as eventName "UNKNOWN_TO_SDK_VERSION" without userIdentity. AWS writes a REMOVE
  // carrying the TTL service's identity, which is what the handler gets here.
  const ttlDelete = (wire.eventName as string) === 'UNKNOWN_TO_SDK_VERSION' && wire.dynamodb.NewImage === undefined;
  const userIdentity = ttlDelete ? TTL_IDENTITY : wire.userIdentity;
  return {
    eventID: wire.eventID,
    eventName: ttlDelete ? 'REMOVE' : wire.eventName,
    eventVersion: wire.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: context.region,
    dynamodb: { ...wire.dynamodb, ApproximateCreationDateTime: approximate },
    eventSourceARN: context.streamArn,
    ...(userIdentity ? { userIdentity: { ...userIdentity } } : {}),
  };
}
