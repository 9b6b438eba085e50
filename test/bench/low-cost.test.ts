/**
 * Section 2d's pricing (bench/low-cost.ts priceLowCost): a run's totals on the lower-cost
 * configuration priced per million webhooks with provisioned tables at 50/s, every figure computed
 * here from bench/prices.json.
 */
import { describe, expect, it } from 'vitest';
import { type LowCostCounts, priceLowCost } from '../../bench/low-cost';
import { lowCost } from '../../core/config/low-cost';
import shipped from '../../hookledger.config';
import { type FullPriceTable, loadPrices } from '../../ops/cost-model';

const prices = loadPrices() as FullPriceTable;
const P = prices.prices;
const N = 1000;
const counts: LowCostCounts = {
  byOperation: new Map([
    ['putPayload', { calls: N, writeUnits: N, readUnits: 0 }],
    // The receipt and its window-index entry.
    ['putEvent', { calls: N, writeUnits: 2 * N, readUnits: 0 }],
    ['getPayload', { calls: N, writeUnits: 0, readUnits: N }],
    ['claim', { calls: 3 * N, writeUnits: 3 * N, readUnits: 0 }],
    ['acknowledge', { calls: 3 * N, writeUnits: 3 * N, readUnits: 0 }],
    ['registerTenantDay', { calls: 650, writeUnits: 650, readUnits: 0 }],
  ]),
  sqsRequests: 1010,
  fanoutInvocations: 15,
  fanoutRecords: N,
  consumerInvocations: 306,
  consumerRecords: 3 * N,
  logBytes: 342 * N,
};
const run = { webhooks: N, seconds: 20, rate: 50, latenciesMs: Array.from({ length: N }, (_, i) => i + 1) };
const consumers = ['billing-meter', 'audit-writer', 'risk-evaluator'];

describe('bench low-cost: pricing a run of the lower-cost configuration at 50/s', () => {
  const r = priceLowCost(lowCost(shipped), consumers, counts, run);
  const millions = (50 * 3600 * prices.assumptions.hoursPerMonth) / 1e6;
  const hours = prices.assumptions.hoursPerMonth;

  it('counts 9 WRU and 1 RRU per webhook, the tenant-day registry (0.65) apart', () => {
    expect(r.perWebhook.writeUnits).toBeCloseTo(9, 10);
    expect(r.perWebhook.readUnits).toBeCloseTo(1, 10);
    expect(r.perWebhook.registryWriteUnits).toBeCloseTo(0.65, 10);
    expect(r.perWebhook.invocations).toEqual({ ingest: 1, fanout: 0.015, consumers: 0.306 });
    expect(r.perWebhook.fanoutRecordsPerInvocation).toBeCloseTo(1000 / 15, 10);
    expect(r.perWebhook.consumerRecordsPerInvocation).toBeCloseTo(3000 / 306, 10);
  });

  it('prices writes as capacity at 80%: EventStore 2, its index 1 and the Ledger 6 WRU per webhook at 50/s', () => {
    // 50/s x (2 + 1 + 6) WRU / 0.8 = 562.5 WCU, every one above the floor of 5.
    const wcu = (50 * (2 + 1 + 6)) / 0.8;
    expect(r.usdPerMillion.breakdown.dynamodbWrites).toBeCloseTo((wcu * hours * P.dynamodbProvisionedPerWcuHour.usd) / millions, 10);
    // Reads: the EventStore's 1 RRU per webhook / 0.8 = 62.5 RCU; the index and the Ledger at their floor of 5.
    const rcu = 50 / 0.8 + 5 + 5;
    expect(r.usdPerMillion.breakdown.dynamodbReads).toBeCloseTo((rcu * hours * P.dynamodbProvisionedPerRcuHour.usd) / millions, 10);
  });

  it('charges no API Gateway request or access-log line, the measured invocations, SQS requests and log bytes', () => {
    const b = r.usdPerMillion.breakdown;
    expect(b.apiGateway).toBe(0);
    expect(b.lambdaRequests).toBeCloseTo((1 + 0.015 + 0.306) * P.lambdaPerMillionRequests.usd, 10);
    expect(r.perWebhook.sqsRequests).toBeCloseTo(1.01 + r.perWebhook.sqsEmptyReceivesModelled, 10);
    expect(b.sqs).toBeCloseTo(r.perWebhook.sqsRequests * P.sqsStandardPerMillionRequests.usd, 10);
    expect(b.cloudwatchLogs).toBeCloseTo(((342 * 1e6) / prices.assumptions.bytesPerGb) * P.cloudwatchLogsPerGbIngested.usd, 10);
    expect(r.usdPerMillion.total).toBeCloseTo(
      Object.values(b).reduce((s, v) => s + v, 0),
      10,
    );
    expect(r.met).toBe(r.usdPerMillion.total <= 3.3);
    expect(r.latencyMs).toEqual({ p50: 500, p99: 990 });
    expect(r.settings).toEqual({
      intakeEndpoint: 'function-url',
      fanoutBatchingWindowSeconds: 1,
      consumerBatchingWindowSeconds: 1,
      targetUtilization: 80,
    });
  });
});
