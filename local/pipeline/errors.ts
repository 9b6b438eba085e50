/**
 * What the local pipeline raises itself: a drain that did not finish in time, a consumer it does
 * not run. `npm start` and the tests stop with the message.
 */
import { HookledgerError } from '../../core/errors';

export class PipelineError extends HookledgerError {
  override readonly name: string = 'PipelineError';
}

/** The stream or a running consumer's queue still had work when the drain's deadline passed. */
export class DrainTimeoutError extends PipelineError {
  override readonly name = 'DrainTimeoutError';
}

/** A pause or resume named a consumer the pipeline does not run. */
export class UnknownConsumerError extends PipelineError {
  override readonly name = 'UnknownConsumerError';
  constructor(consumerId: string, known: readonly string[]) {
    super(`unknown consumer "${consumerId}"; configured: ${known.join(', ')}`);
  }
}
