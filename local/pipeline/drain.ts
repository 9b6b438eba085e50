/**
 * The drain: until, twice in a row, every stream is read to its end, no invocation is running, and
 * every running consumer's queue is empty, counting in-flight messages (being handled, backing off,
 * or whose delete was lost). Paused consumers' queues are left to fill.
 */
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { StreamPoller } from '../streams/poller';
import { sleep } from '../support';
import { DrainTimeoutError } from './errors';

/** Quiet twice, this far apart: a consumer retry can put work back after a first look. */
const QUIET_LOOK_MS = 200;
export const DEFAULT_DRAIN_TIMEOUT_MS = 60_000;

export interface DrainTarget {
  readonly streams: readonly StreamPoller[];
  /** The operator's client for the queue URLs. */
  readonly sqs: SQSClient;
  /** The queue URLs of the consumers running now. */
  runningQueues(): string[];
  invocationsInFlight(): number;
  /** What the timeout's message calls it ("local stack"). */
  readonly name: string;
}

/** Visible plus in-flight messages: anything there is still work (possibly waiting out a backoff). */
export async function queueDepth(sqs: SQSClient, queueUrl: string): Promise<number> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
}

export async function drain(target: DrainTarget, { timeoutMs = DEFAULT_DRAIN_TIMEOUT_MS }: { timeoutMs?: number } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let quiet = 0; quiet < 2; ) {
    if (Date.now() > deadline) throw new DrainTimeoutError(`${target.name} did not drain within ${timeoutMs} ms`);
    for (const stream of target.streams) await stream.drained({ timeoutMs: Math.max(1000, deadline - Date.now()) });
    let backlog = 0;
    for (const url of target.runningQueues()) backlog += await queueDepth(target.sqs, url);
    quiet = backlog === 0 && target.invocationsInFlight() === 0 ? quiet + 1 : 0;
    await sleep(QUIET_LOOK_MS);
  }
}
