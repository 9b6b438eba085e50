import { HookledgerError } from '../../core/errors';
/** The stream poller's one error type: bad options, a table without a stream, a malformed response. */
export class StreamPollerError extends HookledgerError {
  override readonly name = 'StreamPollerError';
}
