import { HookledgerError } from '../../core/errors';
/** The stream poller's error type: bad options, a table without a stream, a malformed response. */
export class StreamPollerError extends HookledgerError {
  override readonly name: string = 'StreamPollerError';
}

/**
 * A stream record holds an attribute value of a type the wire conversion (dynamodb-streams.ts,
 * `toWireValue`) does not know: the DynamoDB Streams client speaks a type newer than this code.
 * The shard's loop logs it and reads the record again, so the fix is in the code, not the data.
 */
export class UnknownAttributeTypeError extends StreamPollerError {
  override readonly name = 'UnknownAttributeTypeError';
}
