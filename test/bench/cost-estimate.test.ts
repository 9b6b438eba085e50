/**
 * The cost estimate (`hookledger cost`, the bench's provisioned columns) as pure functions over a
 * bench/results.json-shaped fixture: every expected figure computed here from the price file's numbers.
 */
import { describe, expect, it } from 'vitest';
import { AWS_POLLERS, type BatchingShape, estimateBatching, fanoutFill, nonEmptyMean, queueFill, sendsPerBatch } from '../../ops/batching';
import {
  breakEvenRate,
  checkEstimate,
  estimateCost,
  type FullPriceTable,
  loadPrices,
  type MeasuredRun,
  perWebhookOf,
  type StackShape,
  usdPerMillion,
  usdPerMillionProvisioned,
} from '../../ops/cost-model';

const prices = loadPrices() as FullPriceTable;
const p = prices.prices;
const HOURS = prices.assumptions.hoursPerMonth;

const ops = (n: number) => ({
  putPayload: { calls: 1, writeUnits: 1, readUnits: 0 },
  putEvent: { calls: 1, writeUnits: 2, readUnits: 0 },
  getPayload: { calls: 1, writeUnits: 0, readUnits: 1 },
  claim: { calls: n, writeUnits: n, readUnits: 0 },
  acknowledge: { calls: n, writeUnits: n, readUnits: 0 },
});
/** A run as bench/results.json keeps it: N = 3, 1 KB bodies, three traffic columns, three large-body rows. */
const RUN: MeasuredRun = {
  consumers: ['billing-meter', 'audit-writer', 'risk-evaluator'],
  payloadBytes: 1024,
  logBytesPerWebhook: { low: 332, high: 336, backlog: 340 },
  bodyProtection: { intakeWriteUnits: { default: 3, body: 4 } },
  largeBodies: [
    { bytes: 65536, writeUnitsPerWebhook: 44, readUnitsPerWebhook: 9, stored: 'item' },
    { bytes: 524288, writeUnitsPerWebhook: 286, readUnitsPerWebhook: 70, stored: 'item' },
    { bytes: 2097152, writeUnitsPerWebhook: 9, readUnitsPerWebhook: 1, stored: 'bucket' },
  ],
  details: {
    low: { invocations: { ingest: 1, fanout: 1, consumers: 3 }, sqsRequests: 9, capacityByOperation: ops(3) },
    high: { invocations: { ingest: 1, fanout: 0.19, consumers: 0.6 }, sqsRequests: 1.8, capacityByOperation: ops(3) },
    backlog: { invocations: { ingest: 1, fanout: 0.01, consumers: 0.3 }, sqsRequests: 0.9, capacityByOperation: ops(3) },
  },
};
const SCALED = { minWrite: 5, maxWrite: 1000, minRead: 5, maxRead: 1000, targetUtilization: 70 };
const shape = (over: Partial<StackShape> = {}): StackShape => ({
  deliveries: 3,
  httpDeliveries: 0,
  bodyClaimShare: 0,
  bodyBytes: 1024,
  secrets: 2,
  platformLogLevel: 'WARN',
  traffic: 'low',
  provisioned: { eventStore: SCALED, byTenantDay: SCALED, ledger: SCALED },
  maxInlinePayloadBytes: 300_000,
  ...over,
});
const millionsPerMonth = (rate: number) => (rate * 3600 * HOURS) / 1e6;

describe('the estimate per webhook', () => {
  it('splits the measured 9 WRU into EventStore 2, its window index 1, Ledger 2 per delivery, and scales per delivery for N = 5', () => {
    const three = perWebhookOf(prices, RUN, shape());
    expect(three.units).toEqual({
      eventStore: { write: 2, read: 1 },
      byTenantDay: { write: 1, read: 0 },
      ledger: { write: 6, read: 0 },
    });
    expect([three.writeUnits, three.readUnits, three.sqsRequests]).toEqual([9, 1, 9]);
    const five = perWebhookOf(prices, RUN, shape({ deliveries: 5, traffic: 'high' }));
    expect(five.units.ledger.write).toBe(10);
    expect(five.writeUnits).toBe(13);
    expect(five.sqsRequests).toBeCloseTo((1.8 / 3) * 5, 10);
    expect(five.invocations).toEqual({ ingest: 1, fanout: 0.19, consumers: (0.6 / 3) * 5 });
  });

  it('adds the body claim for the share of webhooks from replayProtection: body sources', () => {
    expect(perWebhookOf(prices, RUN, shape({ bodyClaimShare: 0.5 })).units.eventStore.write).toBe(2.5);
  });

  it('moves the payload units along the large-body rows: 64 KiB as measured, 2 MiB kept in the bucket (S3 PUT + GET)', () => {
    const big = perWebhookOf(prices, RUN, shape({ bodyBytes: 65536 }));
    expect([big.writeUnits, big.readUnits, big.s3]).toEqual([44, 9, { puts: 0, gets: 0 }]);
    // 300 KiB: between the 64 KiB (36 payload WRU) and 512 KiB (278) rows, linearly.
    const mid = perWebhookOf(prices, RUN, shape({ bodyBytes: 307200 }));
    expect(mid.units.eventStore.write).toBeCloseTo(36 + ((307200 - 65536) / (524288 - 65536)) * (278 - 36) + 1, 6);
    const huge = perWebhookOf(prices, RUN, shape({ bodyBytes: 2097152 }));
    expect([huge.writeUnits, huge.readUnits, huge.s3]).toEqual([9, 1, { puts: 1, gets: 1 }]);
    const e = estimateCost(prices, RUN, shape({ bodyBytes: 2097152 }), 10);
    expect(e.onDemand.services.s3.perMillionUsd).toBeCloseTo(1000 * (p.s3PutPer1kRequests.usd + p.s3GetPer1kRequests.usd), 10);
  });

  it("charges an HTTP destination's wait on the POST as Lambda compute (100 ms at the consumer's memory per delivery)", () => {
    const lambda = shape({ httpDeliveries: 0 });
    const http = shape({ httpDeliveries: 1 });
    const diff =
      estimateCost(prices, RUN, http, 5).onDemand.services.lambdaCompute.perMillionUsd -
      estimateCost(prices, RUN, lambda, 5).onDemand.services.lambdaCompute.perMillionUsd;
    expect(diff).toBeCloseTo(1e6 * (256 / 1024) * 0.1 * p.lambdaArm64PerGbSecond.usd, 10);
  });
});

describe('provisioned capacity', () => {
  it('at burst traffic and 70% target, 50 webhooks/s: DynamoDB writes at most half the on-demand figure', () => {
    const w = perWebhookOf(prices, RUN, shape({ traffic: 'high' }));
    const bounds = shape().provisioned;
    const onDemand = usdPerMillion(prices, w).breakdown;
    const provisioned = usdPerMillionProvisioned(prices, w, w.units, bounds, 50).breakdown;
    // Ledger 6, EventStore 2, index 1 WRU per webhook at 50/s, provisioned at 1/0.7 of it, all month.
    const wcu = (50 * (6 + 2 + 1)) / 0.7;
    expect(provisioned.dynamodbWrites).toBeCloseTo((wcu * HOURS * p.dynamodbProvisionedPerWcuHour.usd) / millionsPerMonth(50), 10);
    expect(onDemand.dynamodbWrites).toBeCloseTo(9 * p.dynamodbOnDemandPerMillionWriteUnits.usd, 10);
    expect(provisioned.dynamodbWrites).toBeLessThanOrEqual(onDemand.dynamodbWrites / 2);
    // Reads: EventStore 1 RRU per webhook; the index and the Ledger sit at their 5 RCU floor.
    const rcu = 50 / 0.7 + 5 + 5;
    expect(provisioned.dynamodbReads).toBeCloseTo((rcu * HOURS * p.dynamodbProvisionedPerRcuHour.usd) / millionsPerMonth(50), 10);
    // Everything but DynamoDB is the same in both modes.
    expect(provisioned.sqs).toBe(onDemand.sqs);
    expect(provisioned.lambdaCompute).toBe(onDemand.lambdaCompute);
  });

  it('pays off above the rate where the floors (5 WCU + 5 RCU on each table and index) cost what on-demand units cost', () => {
    const w = perWebhookOf(prices, RUN, shape());
    const floorPerMonth = 3 * 5 * HOURS * (p.dynamodbProvisionedPerWcuHour.usd + p.dynamodbProvisionedPerRcuHour.usd);
    const onDemandPerRatePerMonth =
      millionsPerMonth(1) * (9 * p.dynamodbOnDemandPerMillionWriteUnits.usd + 1 * p.dynamodbOnDemandPerMillionReadUnits.usd);
    const expected = floorPerMonth / onDemandPerRatePerMonth;
    // At that rate the Ledger still needs less than its floor (6 WRU x rate / 0.7 < 5), so the floors alone are the cost.
    expect((6 * expected) / 0.7).toBeLessThan(5);
    expect(breakEvenRate(prices, w, shape())).toBeCloseTo(expected, 6);
    // Higher floors move it up in proportion.
    const tens = { ...SCALED, minWrite: 10, minRead: 10 };
    expect(breakEvenRate(prices, w, shape({ provisioned: { eventStore: tens, byTenantDay: tens, ledger: tens } }))).toBeGreaterThan(
      expected,
    );
  });

  it('flags a table whose load needs more than its maxWrite (the excess would be throttled)', () => {
    const small = { ...SCALED, maxWrite: 100 };
    const e = estimateCost(prices, RUN, shape({ provisioned: { eventStore: SCALED, byTenantDay: SCALED, ledger: small } }), 50);
    expect(e.provisioned.capacity.ledger).toEqual({ write: 100, read: 5, aboveMax: true });
    expect(e.provisioned.capacity.eventStore).toEqual({ write: 100 / 0.7, read: 50 / 0.7, aboveMax: false });
  });
});

describe("the bench's check of the estimate against its own run", () => {
  it('reproduces the measured per-million figure of each traffic within 5% at the run rate', () => {
    for (const traffic of ['low', 'high', 'backlog'] as const) {
      const d = RUN.details[traffic];
      const measured = usdPerMillion(prices, {
        invocations: d.invocations,
        deliveries: 3,
        sqsRequests: d.sqsRequests,
        writeUnits: 9,
        readUnits: 1,
        logBytes: RUN.logBytesPerWebhook[traffic],
      }).total;
      const check = checkEstimate(prices, RUN, shape({ traffic }), 53.8, measured);
      expect(check.within5Percent).toBe(true);
      expect(check.ratio).toBeCloseTo(1, 6);
    }
    // A wrong model (one delivery too many) is caught.
    const measured = usdPerMillion(prices, {
      invocations: RUN.details.low.invocations,
      deliveries: 3,
      sqsRequests: 9,
      writeUnits: 9,
      readUnits: 1,
      logBytes: 332,
    }).total;
    expect(checkEstimate(prices, RUN, shape({ deliveries: 4 }), 53.8, measured).within5Percent).toBe(false);
  });
});

describe('the batching model (ops/batching.ts): SQS requests and invocations per webhook at a rate', () => {
  // The shipped event sources on AWS: the fan-out's stream (batches of 100, parallelization factor 2,
  // no window) and three consumers (batches of 10, maxConcurrency 5, no window).
  const QUEUES = ['billing-meter', 'audit-writer', 'risk-evaluator'].map((id) => ({
    id,
    batchSize: 10,
    windowSeconds: 0,
    maxConcurrency: 5,
  }));
  const shipped = (shards: number, over: Partial<BatchingShape['stream']> = {}): BatchingShape => ({
    stream: { batchSize: 100, windowSeconds: 0, parallelizationFactor: 2, shards, ...over },
    queues: QUEUES,
  });
  const aws = { ...AWS_POLLERS, fanoutMs: 30, consumerMs: 40 };

  it('at 0.1 webhook/s batches nothing (9 requests that carry messages, 5 invocations) and the idle pollers add 1.5 empty receives per queue', () => {
    const e = estimateBatching(shipped(4), aws, 0.1);
    // 0.0035 records per batch and cycle: a batch that has any holds 1.002.
    expect(e.fanout.recordsPerInvocation).toBeCloseTo(1.002, 3);
    expect(e.sqsRequests).toBeCloseTo(9 / 1.002, 2);
    expect(e.invocations.ingest + e.invocations.fanout + e.invocations.consumers).toBeCloseTo(1 + 4 / 1.002, 2);
    // 5 pollers per queue each end a 20 s long poll empty (0.25/s) unless a message ends it (0.1/s here).
    expect(e.queues[0]!.emptyReceives).toBeCloseTo((5 / 20 - 0.1 / e.queues[0]!.messagesPerReceive) / 0.1, 10);
    expect(e.sqsEmptyReceives).toBeCloseTo(3 * 1.5, 1);
  });

  it('at 50/s on 4 shards: 6.25 records/s per batch stream, polls 0.25 s apart after an empty one and 0.28 s after a batch: 2.09 per batch', () => {
    // a: a poll after an empty one finds records; b: a poll after a batch does; pi: the share of polls that are batches.
    const a = 1 - Math.exp(-6.25 * 0.25);
    const b = 1 - Math.exp(-6.25 * 0.28);
    const pi = a / (1 - b + a);
    const k = (6.25 * ((1 - pi) * 0.25 + pi * 0.28)) / pi;
    expect(k).toBeCloseTo(2.0935, 4);
    const e = estimateBatching(shipped(4), aws, 50);
    expect(e.fanout.recordsPerInvocation).toBeCloseTo(k, 10);
    // A batch of more than 10 (a second SendMessageBatch) is about one poll in a million here.
    expect(e.fanout.messagesPerSend).toBeCloseTo(k, 4);
    for (const q of e.queues) {
      for (const per of [q.sends, q.receives, q.deletes]) expect(per).toBeCloseTo(1 / k, 5);
      expect(q.emptyReceives).toBe(0);
    }
    expect(e.sqsRequests).toBeCloseTo(4.299, 3);
    expect(e.invocations.fanout).toBeCloseTo(1 / k, 12);
    expect(e.invocations.consumers).toBeCloseTo(3 / k, 5);
  });

  it('at 50/s on 1 shard: 7.01 records per batch, one in ten polls over 10 (two sends), 1.41 SQS requests and 1.61 invocations per webhook', () => {
    const e = estimateBatching(shipped(1), aws, 50);
    expect(e.fanout.recordsPerInvocation).toBeCloseTo(7.006, 3);
    // x = 7: E[ceil(K / 10) | K >= 1] over Poisson(7) batch sizes.
    expect(sendsPerBatch(7, 100)).toBeCloseTo(1.0986, 4);
    expect(e.fanout.messagesPerSend).toBeCloseTo(7.006 / 1.0986, 3);
    expect(e.sqsRequests).toBeCloseTo(1.411, 3);
    expect(e.invocations.ingest + e.invocations.fanout + e.invocations.consumers).toBeCloseTo(1.613, 3);
  });

  it('splits a dense fan-out batch into SendMessageBatch calls of 10 at most, which consumers receive one send at a time', () => {
    // 1,000/s on 1 shard, no parallelization: 280 records per cycle, capped at the batch size of 100.
    const e = estimateBatching(shipped(1, { parallelizationFactor: 1 }), aws, 1000);
    expect(e.fanout.recordsPerInvocation).toBe(100);
    expect(e.fanout.messagesPerSend).toBe(10);
    expect(e.queues[0]).toMatchObject({ messagesPerReceive: 10, sends: 10 / 100, receives: 1 / 10, deletes: 1 / 10 });
    expect(e.sqsRequests).toBeCloseTo(3 * 0.3, 10);
  });

  it("fills a consumer's batches to R x window / pollers with a batching window (or R x its time per batch / pollers when all are busy), up to its batchSize", () => {
    const windowed = { ...shipped(4), queues: [{ id: 'audit-writer', batchSize: 50, windowSeconds: 2, maxConcurrency: 5 }] };
    // 20/s x 2 s over 5 pollers: 8 messages a batch, more than the fan-out's sends carry.
    expect(queueFill(windowed.queues[0]!, aws, 20, 1.2)).toBe(8);
    expect(queueFill(windowed.queues[0]!, aws, 200, 1.2)).toBe(50);
    // Without a window a receive returns what one send carried ...
    expect(queueFill(QUEUES[0]!, aws, 200, 3.5)).toBe(3.5);
    // ... unless every poller is busy: at 2 s a batch, 20/s gather 20 x 2 / 5 = 8 while they work.
    expect(queueFill(QUEUES[0]!, { ...aws, consumerMs: 2000 }, 20, 3.5)).toBe(8);
  });

  it('a batching window on the fan-out replaces the 250 ms poll: 2 s at 50/s on 4 shards fills 12.7 records a batch', () => {
    const k = fanoutFill({ batchSize: 100, windowSeconds: 2, parallelizationFactor: 2, shards: 4 }, aws, 50);
    // 6.25/s per batch stream over 2 s (2.03 s after a batch): dense, so about 6.25 x 2.03.
    expect(k).toBeCloseTo(12.69, 2);
    expect(nonEmptyMean(0)).toBe(1);
    // Dense batches are their mean: 280 a poll, capped at 100, in 10 sends.
    expect(sendsPerBatch(280, 100)).toBe(10);
  });

  it('after an empty poll waits the pause and a GetRecords that found nothing; after a batch, one that returned records and the fan-out', () => {
    // The local poller: read again at once after a batch, 50 ms after a read that found nothing; such a
    // read takes 6 ms, one that returns records 20 ms (it carries them back after DynamoDB took it).
    const local = {
      ...AWS_POLLERS,
      streamPauseMs: 0,
      streamIdlePauseMs: 50,
      streamReadMs: 20,
      streamEmptyReadMs: 6,
      fanoutMs: 70,
      consumerMs: 70,
    };
    const idle = 0.05 + 0.006;
    const busy = 0.02 + 0.07;
    const a = 1 - Math.exp(-50 * idle);
    const b = 1 - Math.exp(-50 * busy);
    const pi = a / (1 - b + a);
    const k = (50 * ((1 - pi) * idle + pi * busy)) / pi;
    expect(fanoutFill({ batchSize: 100, windowSeconds: 0, parallelizationFactor: 1, shards: 1 }, local, 50)).toBeCloseTo(k, 10);
    // Without the empty read's own time, every read takes the 20 ms of one that returns records.
    const { streamEmptyReadMs: _, ...oneRead } = local;
    const idleAsBusyRead = 1 - Math.exp(-50 * 0.07);
    const piOne = idleAsBusyRead / (1 - b + idleAsBusyRead);
    expect(fanoutFill({ batchSize: 100, windowSeconds: 0, parallelizationFactor: 1, shards: 1 }, oneRead, 50)).toBeCloseTo(
      (50 * ((1 - piOne) * 0.07 + piOne * busy)) / piOne,
      10,
    );
  });

  it("spreads a batch's size when the fan-out's time varies from batch to batch: at a spread equal to its mean, a poll after a batch finds a geometric count", () => {
    // 50/s on 1 shard, no pause after a batch, the fan-out 90 ms on average with a standard deviation of
    // 90 ms: the time to the next poll is exponential (a gamma of shape 1), so what that poll finds is
    // geometric, P(K = k) = (1 − q) q^k with q = 4.5 / 5.5, instead of Poisson(4.5).
    const spread = {
      ...AWS_POLLERS,
      streamPauseMs: 0,
      streamIdlePauseMs: 250,
      streamReadMs: 0,
      fanoutMs: 90,
      fanoutSdMs: 90,
      consumerMs: 40,
    };
    const stream = { batchSize: 100, windowSeconds: 0, parallelizationFactor: 1, shards: 1 };
    const q = 4.5 / 5.5;
    const a = 1 - Math.exp(-50 * 0.25);
    const b = q;
    const pi = a / (1 - b + a);
    const k = (50 * ((1 - pi) * 0.25 + pi * 0.09)) / pi;
    const e = estimateBatching({ stream, queues: QUEUES }, spread, 50);
    expect(e.fanout.recordsPerInvocation).toBeCloseTo(k, 10);
    // SendMessageBatch calls after a batch: E[ceil(min(K, 100) / 10); K >= 1] = sum over j < 10 of P(K > 10 j).
    let afterBatch = 0;
    for (let j = 0; j < 10; j++) afterBatch += q ** (10 * j + 1);
    const afterIdle = ((1 - pi) * a) / pi;
    const sends = afterIdle * sendsPerBatch(50 * 0.25, 100) + afterBatch;
    expect(e.fanout.messagesPerSend).toBeCloseTo(k / sends, 10);
    // The same per non-empty poll, from sendsPerBatch with the cycle's spread (sd / mean) of 1.
    expect(sendsPerBatch(4.5, 100, 1)).toBeCloseTo(afterBatch / q, 12);
    // More polls over 10 than Poisson(4.5) gives (two sends each), so fewer messages per send.
    expect(sendsPerBatch(4.5, 100, 1)).toBeGreaterThan(sendsPerBatch(4.5, 100) + 0.1);
    expect(sendsPerBatch(4.5, 100, 0)).toBe(sendsPerBatch(4.5, 100));
  });

  it("spreads only the fan-out's part of the cycle: the pause and the read after a batch take a fixed time", () => {
    // 50/s, a 20 ms read after a batch and the fan-out 90 ± 90 ms: what a poll after a batch finds is
    // Poisson(50 x 0.02 = 1) plus a geometric count with q = 4.5 / 5.5; it finds none with
    // e^−1 x (1 − q), fewer than a gamma spread over the whole 110 ms would leave empty.
    const timings = {
      ...AWS_POLLERS,
      streamPauseMs: 0,
      streamIdlePauseMs: 50,
      streamReadMs: 20,
      fanoutMs: 90,
      fanoutSdMs: 90,
      consumerMs: 40,
    };
    const stream = { batchSize: 100, windowSeconds: 0, parallelizationFactor: 1, shards: 1 };
    const q = 4.5 / 5.5;
    const idle = 0.05 + 0.02;
    const a = 1 - Math.exp(-50 * idle);
    const b = 1 - Math.exp(-1) * (1 - q);
    const pi = a / (1 - b + a);
    expect(fanoutFill(stream, timings, 50)).toBeCloseTo((50 * ((1 - pi) * idle + pi * 0.11)) / pi, 10);
    // With no spread, the Poisson model: b = 1 − e^(−50 x 0.11).
    const { fanoutSdMs: _, ...steady } = timings;
    const b0 = 1 - Math.exp(-50 * 0.11);
    const pi0 = a / (1 - b0 + a);
    expect(fanoutFill(stream, steady, 50)).toBeCloseTo((50 * ((1 - pi0) * idle + pi0 * 0.11)) / pi0, 10);
  });

  it('prices SQS and Lambda from the model when the shape carries one, the measured column otherwise', () => {
    const batching = estimateBatching(shipped(1), aws, 50);
    const w = perWebhookOf(prices, RUN, shape({ batching }));
    expect(w.sqsRequests).toBeCloseTo(batching.sqsRequests + batching.sqsEmptyReceives, 10);
    expect(w.invocations).toEqual({ ingest: 1, fanout: batching.invocations.fanout, consumers: batching.invocations.consumers });
    expect(perWebhookOf(prices, RUN, shape()).sqsRequests).toBe(9);
  });
});
