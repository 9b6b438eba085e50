import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { type BatchPolicy, type Outcome, onFailureRecord, outcomeOf, type SkipStep, startBatch } from '../../../local/streams/batch-policy';
import { StreamPollerError } from '../../../local/streams/errors';

/** 2026-11-30T10:00:00Z, in epoch seconds: when the test records were written. */
const WRITTEN_AT = 1_796_032_800;
const NOW_MS = (WRITTEN_AT + 30) * 1000;

/** Record n (1-based) of a batch: sequence number 1000 + n. */
function record(n: number, createdAt = WRITTEN_AT): DynamoDBRecord {
  return {
    eventID: `event-${n}`,
    eventName: 'INSERT',
    eventSource: 'aws:dynamodb',
    dynamodb: { SequenceNumber: String(1000 + n), ApproximateCreationDateTime: createdAt, Keys: { pk: { S: `evt#${n}` } } },
  };
}

function batchOf(size: number, createdAt?: (n: number) => number): DynamoDBRecord[] {
  return Array.from({ length: size }, (_, i) => record(i + 1, createdAt?.(i + 1)));
}

const numbers = (records: readonly DynamoDBRecord[]) => records.map((r) => Number(r.dynamodb?.SequenceNumber) - 1000);

interface Trace {
  /** Each invocation's records, as record numbers [first, last]. */
  invocations: [number, number][];
  failedInvocations: number;
  /** Retry delays the poller would wait. */
  retryWaits: number;
  skips: SkipStep[];
  done: number;
}

/** Runs the policy as the poller does, without waiting, with `handle` standing in for the handler. */
function drive(
  batch: DynamoDBRecord[],
  policy: BatchPolicy,
  handle: (records: DynamoDBRecord[]) => Outcome,
  clock: () => number = () => NOW_MS,
): Trace {
  const trace: Trace = { invocations: [], failedInvocations: 0, retryWaits: 0, skips: [], done: 0 };
  const run = startBatch(batch, policy);
  for (let steps = 0; !run.finished; steps += 1) {
    if (steps > 10_000) throw new Error('the batch never finished');
    const step = run.next(clock);
    if (step.kind === 'skip') {
      trace.skips.push(step);
      run.skipped(step);
      continue;
    }
    const records = batch.slice(step.start, step.end);
    const got = numbers(records);
    trace.invocations.push([got[0]!, got[got.length - 1]!]);
    const outcome = handle(records);
    if (outcome.kind === 'error') trace.failedInvocations += 1;
    const after = run.invoked(outcome);
    if (after.kind === 'skip') {
      trace.skips.push(after);
      run.skipped(after);
    } else if (after.kind === 'retry') trace.retryWaits += 1;
  }
  trace.done = run.done;
  return trace;
}

const poisonedBy =
  (...poison: number[]) =>
  (records: DynamoDBRecord[]): Outcome =>
    numbers(records).some((n) => poison.includes(n)) ? { kind: 'error', error: new Error('poison') } : { kind: 'ok' };

/** The fan-out's event source: bisect, 5 retries, 6 h maximum age. */
const FANOUT_POLICY: BatchPolicy = { maxRetryAttempts: 5, maxRecordAgeSeconds: 6 * 3600, bisectBatchOnFunctionError: true };

const failureContext = {
  requestId: 'req-1',
  functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:hookledger-fanout',
  shardId: 'shardId-00001',
  streamArn: 'arn:aws:dynamodb:us-east-1:000000000000:table/events/stream/2026-11-30T10:00:00.000',
  nowMs: NOW_MS,
};

describe('batch policy', () => {
  describe('when record 37 of a batch of 100 poisons it, with bisect on', () => {
    const batch = batchOf(100);
    const trace = drive(batch, FANOUT_POLICY, poisonedBy(37));

    it('bisects down to record 37 alone, the first half one record larger at each split', () => {
      expect(trace.invocations).toEqual([
        [1, 100],
        [1, 50],
        [1, 25],
        [26, 50],
        [26, 38],
        [26, 32],
        [33, 38],
        [33, 35],
        [36, 38],
        [36, 37],
        [36, 36],
        [37, 37],
        [37, 37],
        [37, 37],
        [37, 37],
        [37, 37],
        [37, 37],
        [38, 38],
        [39, 50],
        [51, 100],
      ]);
    });

    it('counts retries only for record 37 alone: 6 invocations (1 + 5 retries), 5 retry waits, splits free', () => {
      expect(trace.invocations.filter(([a, b]) => a === 37 && b === 37)).toHaveLength(6);
      expect(trace.retryWaits).toBe(5);
      expect(trace.failedInvocations).toBe(13);
    });

    it('delivers the other 99 records and skips only record 37', () => {
      const delivered = trace.invocations.filter(([a, b]) => !(a <= 37 && 37 <= b)).reduce((sum, [a, b]) => sum + b - a + 1, 0);
      expect(delivered).toBe(99);
      expect(trace.skips).toEqual([
        { kind: 'skip', condition: 'RetryAttemptsExhausted', start: 36, end: 37, invocations: 6, functionError: 'Unhandled' },
      ]);
      expect(trace.done).toBe(100);
    });

    it('sends an on-failure record naming the shard and the sequence range of record 37 alone, without item data', () => {
      const sent = onFailureRecord(batch, trace.skips[0]!, failureContext);
      expect(sent).toEqual({
        requestContext: {
          requestId: 'req-1',
          functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:hookledger-fanout',
          condition: 'RetryAttemptsExhausted',
          approximateInvokeCount: 6,
        },
        responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
        version: '1.0',
        timestamp: '2026-11-30T10:00:30.000Z',
        DDBStreamBatchInfo: {
          shardId: 'shardId-00001',
          startSequenceNumber: '1037',
          endSequenceNumber: '1037',
          approximateArrivalOfFirstRecord: '2026-11-30T10:00:00Z',
          approximateArrivalOfLastRecord: '2026-11-30T10:00:00Z',
          batchSize: 1,
          streamArn: failureContext.streamArn,
        },
      });
      expect(JSON.stringify(sent)).not.toContain('evt#37');
    });
  });

  describe('when the handler keeps throwing and bisect is off', () => {
    const batch = batchOf(100);
    const trace = drive(batch, { maxRetryAttempts: 2, maxRecordAgeSeconds: -1, bisectBatchOnFunctionError: false }, poisonedBy(37));

    it('invokes the whole batch 3 times (1 + 2 retries), then skips all 100 records as RetryAttemptsExhausted', () => {
      expect(trace.invocations).toEqual([
        [1, 100],
        [1, 100],
        [1, 100],
      ]);
      expect(trace.retryWaits).toBe(2);
      expect(trace.skips).toEqual([
        { kind: 'skip', condition: 'RetryAttemptsExhausted', start: 0, end: 100, invocations: 3, functionError: 'Unhandled' },
      ]);
      const info = onFailureRecord(batch, trace.skips[0]!, failureContext).DDBStreamBatchInfo;
      expect([info.startSequenceNumber, info.endSequenceNumber, info.batchSize]).toEqual(['1001', '1100', 100]);
      expect(trace.done).toBe(100);
    });

    it('skips on the first failure when maxRetryAttempts is 0', () => {
      const once = drive(batchOf(10), { maxRetryAttempts: 0, maxRecordAgeSeconds: -1, bisectBatchOnFunctionError: false }, poisonedBy(3));
      expect(once.invocations).toEqual([[1, 10]]);
      expect(once.retryWaits).toBe(0);
      expect(once.skips.map((s) => [s.start, s.end, s.invocations])).toEqual([[0, 10, 1]]);
    });

    it('retries forever when maxRetryAttempts is -1 (Lambda default)', () => {
      const run = startBatch(batchOf(5), { maxRetryAttempts: -1, maxRecordAgeSeconds: -1, bisectBatchOnFunctionError: false });
      for (let i = 0; i < 1000; i += 1) {
        expect(run.next(() => NOW_MS)).toEqual({ kind: 'invoke', start: 0, end: 5 });
        expect(run.invoked({ kind: 'error', error: new Error('down') })).toEqual({ kind: 'retry' });
      }
      expect(run.finished).toBe(false);
      expect(run.done).toBe(0);
    });
  });

  describe('with a partial batch response', () => {
    it('makes the records before the lowest failure done and retries from it, counting a retry', () => {
      const batch = batchOf(100);
      const run = startBatch(batch, { maxRetryAttempts: 1, maxRecordAgeSeconds: -1, bisectBatchOnFunctionError: true });
      expect(run.next(() => NOW_MS)).toEqual({ kind: 'invoke', start: 0, end: 100 });
      const outcome = outcomeOf(batch, { batchItemFailures: [{ itemIdentifier: '1090' }, { itemIdentifier: '1037' }] }, true);
      expect(outcome).toEqual({ kind: 'partial', index: 36 });
      expect(run.invoked(outcome)).toEqual({ kind: 'retry' });
      expect(run.done).toBe(36);
      expect(run.next(() => NOW_MS)).toEqual({ kind: 'invoke', start: 36, end: 100 });
      // The second partial failure exhausts the one retry: records 37..100 are skipped, no functionError.
      expect(run.invoked({ kind: 'partial', index: 0 })).toEqual({
        kind: 'skip',
        condition: 'RetryAttemptsExhausted',
        start: 36,
        end: 100,
        invocations: 2,
        functionError: undefined,
      });
    });

    it('lets the halves of a later split keep the retries already counted', () => {
      const trace = drive(batchOf(4), { maxRetryAttempts: 1, maxRecordAgeSeconds: -1, bisectBatchOnFunctionError: true }, (records) =>
        records.length === 4 ? { kind: 'partial', index: 2 } : poisonedBy(3)(records),
      );
      // [1..4] partial at record 3 (retry 1), [3..4] throws and splits, [3] throws: retry 2 > 1, skipped at once.
      expect(trace.invocations).toEqual([
        [1, 4],
        [3, 4],
        [3, 3],
        [4, 4],
      ]);
      expect(trace.skips.map((s) => [s.condition, s.start, s.end, s.invocations])).toEqual([['RetryAttemptsExhausted', 2, 3, 1]]);
      expect(trace.retryWaits).toBe(1);
    });

    it('fails the whole batch when an itemIdentifier is unknown or empty', () => {
      const batch = batchOf(3);
      for (const itemIdentifier of ['9999', '']) {
        const outcome = outcomeOf(batch, { batchItemFailures: [{ itemIdentifier }] }, true);
        expect(outcome.kind).toBe('error');
        expect(outcome.kind === 'error' && outcome.error).toBeInstanceOf(StreamPollerError);
      }
    });

    it('ignores batchItemFailures when ReportBatchItemFailures is off, and treats an empty list as success', () => {
      const batch = batchOf(3);
      expect(outcomeOf(batch, { batchItemFailures: [{ itemIdentifier: '1002' }] }, false)).toEqual({ kind: 'ok' });
      expect(outcomeOf(batch, { batchItemFailures: [] }, true)).toEqual({ kind: 'ok' });
      expect(outcomeOf(batch, undefined, true)).toEqual({ kind: 'ok' });
    });
  });

  describe('with maxRecordAgeSeconds', () => {
    const policy: BatchPolicy = { maxRetryAttempts: -1, maxRecordAgeSeconds: 60, bisectBatchOnFunctionError: false };

    it('skips the records older than 60 s at the head of the batch as RecordAgeExceeded, without invoking the handler', () => {
      // Records 1-4 were written 10 minutes before NOW_MS, records 5-10 30 s before.
      const batch = batchOf(10, (n) => (n <= 4 ? WRITTEN_AT - 570 : WRITTEN_AT));
      const trace = drive(batch, policy, () => ({ kind: 'ok' }));
      expect(trace.skips).toEqual([
        { kind: 'skip', condition: 'RecordAgeExceeded', start: 0, end: 4, invocations: 0, functionError: undefined },
      ]);
      expect(trace.invocations).toEqual([[5, 10]]);
      expect(trace.done).toBe(10);
      const sent = onFailureRecord(batch, trace.skips[0]!, failureContext);
      expect(sent.requestContext).toMatchObject({ condition: 'RecordAgeExceeded', approximateInvokeCount: 0 });
      expect(sent.responseContext).toEqual({ statusCode: 200, executedVersion: '$LATEST' });
      expect(sent.DDBStreamBatchInfo).toMatchObject({
        startSequenceNumber: '1001',
        endSequenceNumber: '1004',
        batchSize: 4,
        approximateArrivalOfFirstRecord: '2026-11-30T09:50:30Z',
      });
    });

    it('skips a retried segment once its records age out, reporting its invocations and the handler error', () => {
      let nowMs = NOW_MS;
      const trace = drive(
        batchOf(5),
        policy,
        (records) => {
          nowMs += 20_000; // each failing invocation (and its retry wait) takes 20 s
          return poisonedBy(1)(records);
        },
        () => nowMs,
      );
      // Written 30 s before the first attempt: 50 s old at the second, 70 s old when a third would start.
      expect(trace.invocations).toHaveLength(2);
      expect(trace.skips).toEqual([
        { kind: 'skip', condition: 'RecordAgeExceeded', start: 0, end: 5, invocations: 2, functionError: 'Unhandled' },
      ]);
    });

    it('only skips from the head: an old record behind a recent one is delivered', () => {
      const batch = batchOf(3, (n) => (n === 2 ? WRITTEN_AT - 3600 : WRITTEN_AT));
      const trace = drive(batch, policy, () => ({ kind: 'ok' }));
      expect(trace.skips).toEqual([]);
      expect(trace.invocations).toEqual([[1, 3]]);
    });

    it('never reads the clock when no maximum age is set', () => {
      const trace = drive(
        batchOf(3),
        { ...policy, maxRecordAgeSeconds: -1 },
        () => ({ kind: 'ok' }),
        () => {
          throw new Error('clock read');
        },
      );
      expect(trace.done).toBe(3);
    });
  });
});
