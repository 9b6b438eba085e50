/**
 * What Lambda's DynamoDB-stream event source mapping does with one batch, as pure decisions: which
 * records to invoke the handler with next, what a handler's response means, when to bisect, retry
 * or give up, and the metadata-only record the on-failure destination gets for skipped records.
 * No I/O here: the poller (poller.ts) carries the steps out and reports back.
 *
 * The rules, as Lambda applies them:
 *  - a thrown error fails the whole batch; so does a partial response naming an empty or unknown
 *    itemIdentifier;
 *  - a partial batch response makes everything before the lowest failed record done, and retries
 *    from that record on;
 *  - with bisectBatchOnFunctionError, a thrown error splits the segment in halves (the first half
 *    one record larger); a split is not a retry, and each half keeps the retries already counted;
 *  - after maxRetryAttempts retries, a segment is skipped; records older than maxRecordAgeSeconds
 *    are skipped before each invocation, without invoking the handler.
 */
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import { StreamPollerError } from './errors';

export interface BatchPolicy {
  /** Retries of a failing segment before it is skipped; -1 retries forever. */
  readonly maxRetryAttempts: number;
  /** Records older than this are skipped; -1 never. */
  readonly maxRecordAgeSeconds: number;
  readonly bisectBatchOnFunctionError: boolean;
}

export type SkipCondition = 'RetryAttemptsExhausted' | 'RecordAgeExceeded';

/** What one invocation of the handler came to. */
export type Outcome = { kind: 'ok' } | { kind: 'partial'; index: number } | { kind: 'error'; error: unknown };

/** Invoke the handler with the batch's records `start` to `end` (exclusive). */
export interface InvokeStep {
  readonly kind: 'invoke';
  readonly start: number;
  readonly end: number;
}

/** Skip the batch's records `start` to `end` (exclusive), reporting them to the on-failure destination. */
export interface SkipStep {
  readonly kind: 'skip';
  readonly condition: SkipCondition;
  readonly start: number;
  readonly end: number;
  /** Invocations of the segment the records are in: the on-failure record's approximateInvokeCount. */
  readonly invocations: number;
  /** Set when the segment's last invocation threw (or answered with a malformed partial response). */
  readonly functionError: 'Unhandled' | undefined;
}

/** After an invocation: go on with the next step, wait the retry delay first, or skip. */
export type AfterInvoke = { readonly kind: 'next' } | { readonly kind: 'retry' } | SkipStep;

export interface BatchRun {
  /** True once every record is done (handled or skipped). */
  readonly finished: boolean;
  /** How many leading records of the batch are done: the shard's checkpoint goes after the last. */
  readonly done: number;
  /**
   * The next step: skip the aged-out records at the head of the first segment, or invoke it. `now`
   * (epoch milliseconds) is read only when a maximum record age is set.
   */
  next(now: () => number): InvokeStep | SkipStep;
  /** Reports the outcome of the invocation `next` asked for. */
  invoked(outcome: Outcome): AfterInvoke;
  /** Reports that a skip step was carried out (its on-failure record delivered). */
  skipped(step: SkipStep): void;
}

interface Segment {
  start: number;
  end: number;
  retries: number;
  invocations: number;
  lastError: 'Unhandled' | undefined;
}

/** Starts the policy on one batch (the records are only read, for their ages). */
export function startBatch(batch: readonly DynamoDBRecord[], policy: BatchPolicy): BatchRun {
  const segments: Segment[] = batch.length > 0 ? [segment(0, batch.length, 0)] : [];
  let done = 0;

  const head = (): Segment => {
    const first = segments[0];
    if (!first) throw new StreamPollerError('the batch is finished; there is no next step');
    return first;
  };

  return {
    get finished() {
      return segments.length === 0;
    },
    get done() {
      return done;
    },

    next(now) {
      const current = head();
      const expired = countExpired(batch, policy, current, now);
      if (expired > 0) return skipStep(current, 'RecordAgeExceeded', current.start + expired);
      return { kind: 'invoke', start: current.start, end: current.end };
    },

    invoked(outcome) {
      const current = head();
      current.invocations += 1;
      if (outcome.kind === 'ok') {
        done = current.end;
        segments.shift();
        return { kind: 'next' };
      }
      if (outcome.kind === 'error') {
        current.lastError = 'Unhandled';
        const size = current.end - current.start;
        if (policy.bisectBatchOnFunctionError && size > 1) {
          const middle = current.start + Math.ceil(size / 2);
          segments.splice(0, 1, segment(current.start, middle, current.retries), segment(middle, current.end, current.retries));
          return { kind: 'next' };
        }
      } else {
        current.lastError = undefined;
        current.start += outcome.index;
        done = current.start;
      }
      current.retries += 1;
      if (policy.maxRetryAttempts >= 0 && current.retries > policy.maxRetryAttempts) {
        return skipStep(current, 'RetryAttemptsExhausted', current.end);
      }
      return { kind: 'retry' };
    },

    skipped(step) {
      const current = head();
      current.start = step.end;
      done = current.start;
      if (current.start >= current.end) segments.shift();
    },
  };
}

function segment(start: number, end: number, retries: number): Segment {
  return { start, end, retries, invocations: 0, lastError: undefined };
}

/** The step that skips the segment's records from its start to `end` (exclusive). */
function skipStep(current: Segment, condition: SkipCondition, end: number): SkipStep {
  return {
    kind: 'skip',
    condition,
    start: current.start,
    end,
    invocations: current.invocations,
    functionError: current.lastError,
  };
}

/** How many records at the head of the segment are older than the policy's maximum record age. */
function countExpired(batch: readonly DynamoDBRecord[], policy: BatchPolicy, current: Segment, now: () => number): number {
  if (policy.maxRecordAgeSeconds < 0) return 0;
  const oldest = now() / 1000 - policy.maxRecordAgeSeconds;
  let count = 0;
  for (let i = current.start; i < current.end; i += 1) {
    const created = batch[i]?.dynamodb?.ApproximateCreationDateTime ?? Infinity;
    if (created >= oldest) break;
    count += 1;
  }
  return count;
}

/**
 * What a handler's response means for the records it was given. `batchItemFailures` counts only when
 * `reportBatchItemFailures` is on; then the lowest failed record and everything after it are retried.
 */
export function outcomeOf(
  records: readonly DynamoDBRecord[],
  response: DynamoDBBatchResponse | void,
  reportBatchItemFailures: boolean,
): Outcome {
  if (!reportBatchItemFailures || !response || !Array.isArray(response.batchItemFailures)) return { kind: 'ok' };
  if (response.batchItemFailures.length === 0) return { kind: 'ok' };
  const positions = new Map(records.map((record, i) => [record.dynamodb?.SequenceNumber, i]));
  let lowest = Infinity;
  for (const failure of response.batchItemFailures) {
    const id: unknown = failure?.itemIdentifier;
    const position = typeof id === 'string' && id !== '' ? positions.get(id) : undefined;
    if (position === undefined) {
      // Lambda treats a malformed partial response as a failure of the whole batch.
      return { kind: 'error', error: new StreamPollerError(`batchItemFailures names an unknown itemIdentifier ${JSON.stringify(id)}`) };
    }
    lowest = Math.min(lowest, position);
  }
  return { kind: 'partial', index: lowest };
}

/** Lambda's on-failure invocation record for DynamoDB streams: metadata only, no item data. */
export interface OnFailureRecord {
  readonly requestContext: {
    readonly requestId: string;
    readonly functionArn: string;
    readonly condition: SkipCondition;
    readonly approximateInvokeCount: number;
  };
  readonly responseContext: { readonly statusCode: number; readonly executedVersion: string; readonly functionError?: 'Unhandled' };
  readonly version: '1.0';
  readonly timestamp: string;
  readonly DDBStreamBatchInfo: {
    readonly shardId: string;
    readonly startSequenceNumber: string | undefined;
    readonly endSequenceNumber: string | undefined;
    readonly approximateArrivalOfFirstRecord: string;
    readonly approximateArrivalOfLastRecord: string;
    readonly batchSize: number;
    readonly streamArn: string;
  };
}

export interface OnFailureContext {
  readonly requestId: string;
  readonly functionArn: string;
  readonly shardId: string;
  readonly streamArn: string;
  /** Epoch milliseconds: the record's timestamp. */
  readonly nowMs: number;
}

/** The on-failure record for the records a skip step names in `batch`. */
export function onFailureRecord(batch: readonly DynamoDBRecord[], step: SkipStep, context: OnFailureContext): OnFailureRecord {
  const first = batch[step.start];
  const last = batch[step.end - 1];
  const arrival = (record: DynamoDBRecord | undefined) =>
    new Date((record?.dynamodb?.ApproximateCreationDateTime ?? 0) * 1000).toISOString().replace('.000Z', 'Z');
  return {
    requestContext: {
      requestId: context.requestId,
      functionArn: context.functionArn,
      condition: step.condition,
      approximateInvokeCount: step.invocations,
    },
    responseContext: {
      statusCode: 200,
      executedVersion: '$LATEST',
      ...(step.functionError ? { functionError: step.functionError } : {}),
    },
    version: '1.0',
    timestamp: new Date(context.nowMs).toISOString(),
    DDBStreamBatchInfo: {
      shardId: context.shardId,
      startSequenceNumber: first?.dynamodb?.SequenceNumber,
      endSequenceNumber: last?.dynamodb?.SequenceNumber,
      approximateArrivalOfFirstRecord: arrival(first),
      approximateArrivalOfLastRecord: arrival(last),
      batchSize: step.end - step.start,
      streamArn: context.streamArn,
    },
  };
}
