/** The stream poller's one error type: bad options, a table without a stream, a malformed response. */
export class StreamPollerError extends Error {
  override readonly name = 'StreamPollerError';
}
