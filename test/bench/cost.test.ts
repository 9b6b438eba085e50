import { describe, expect, it } from 'vitest';
import { paymentEvent, TARGET_BYTES } from '../../bench/payload';
import { percentile } from '../../bench/stats';
import { loadPrices, usdPerMillion } from '../../ops/cost-model';

describe('bench cost model', () => {
  it('prices the unbatched path: 8 WRU, 3 RRU, 9 SQS requests, 5 invocations per webhook', () => {
    const { total, breakdown } = usdPerMillion(loadPrices(), {
      invocations: { ingest: 1, fanout: 1, consumers: 3 },
      deliveries: 3,
      sqsRequests: 9,
      writeUnits: 8,
      readUnits: 3,
      logBytes: 1000,
    });
    expect(breakdown.apiGateway).toBeCloseTo(1.0);
    expect(breakdown.lambdaRequests).toBeCloseTo(1.0);
    expect(breakdown.dynamodbWrites).toBeCloseTo(5.0);
    expect(breakdown.dynamodbReads).toBeCloseTo(0.375);
    expect(breakdown.sqs).toBeCloseTo(3.6);
    // 0.25 GB x (40 + 30 + 3 x 40) ms x $0.0000133334 per GB-s, per million
    expect(breakdown.lambdaCompute).toBeCloseTo(0.25 * 0.19 * 13.3334, 3);
    // 1,000 B of measured application lines + the access log line (250 B), per million webhooks at
    // $0.50 per GB; no platform lines at the default logs.platformLevel WARN.
    expect(breakdown.cloudwatchLogs).toBeCloseTo(((1000 + 250) * 1e6 * 0.5) / 2 ** 30, 4);
    expect(total).toBeCloseTo(Object.values(breakdown).reduce((s, v) => s + v, 0));
  });
});

describe('bench cost model: platform log lines', () => {
  it('adds START/END/REPORT (300 B) per invocation only when logs.platformLevel is INFO or DEBUG', () => {
    const w = {
      invocations: { ingest: 1, fanout: 1, consumers: 3 },
      deliveries: 3,
      sqsRequests: 9,
      writeUnits: 9,
      readUnits: 1,
      logBytes: 600,
    };
    const warn = usdPerMillion(loadPrices(), w).breakdown.cloudwatchLogs;
    const info = usdPerMillion(loadPrices(), w, { platformLogLevel: 'INFO' }).breakdown.cloudwatchLogs;
    expect(warn).toBeCloseTo(((600 + 250) * 1e6 * 0.5) / 2 ** 30, 4);
    expect(info - warn).toBeCloseTo((5 * 300 * 1e6 * 0.5) / 2 ** 30, 4);
  });
});

describe('bench cost model: intake endpoint', () => {
  const w = {
    invocations: { ingest: 1, fanout: 0.1, consumers: 0.3 },
    deliveries: 3,
    sqsRequests: 1,
    writeUnits: 9,
    readUnits: 1,
    logBytes: 336,
  };

  it('prices a function URL with no API Gateway request and no access-log line, the rest unchanged', () => {
    const api = usdPerMillion(loadPrices(), w).breakdown;
    const url = usdPerMillion(loadPrices(), w, { intakeEndpoint: 'function-url' }).breakdown;
    expect(api.apiGateway).toBeCloseTo(1.0, 6);
    expect(url.apiGateway).toBe(0);
    expect(api.cloudwatchLogs).toBeCloseTo(((336 + 250) * 1e6 * 0.5) / 2 ** 30, 4);
    expect(url.cloudwatchLogs).toBeCloseTo((336 * 1e6 * 0.5) / 2 ** 30, 4);
    expect(url.lambdaRequests).toBe(api.lambdaRequests);
    expect(url.dynamodbWrites).toBe(api.dynamodbWrites);
  });
});

describe('bench payloads', () => {
  it('builds distinct payment.succeeded events of exactly TARGET_BYTES', () => {
    const a = paymentEvent(1, 'run');
    const b = paymentEvent(2, 'run');
    expect(Buffer.byteLength(a.body)).toBe(TARGET_BYTES);
    expect(Buffer.byteLength(b.body)).toBe(TARGET_BYTES);
    expect(a.eventId).not.toBe(b.eventId);
    expect(JSON.parse(a.body)).toMatchObject({ id: a.eventId, type: 'payment.succeeded' });
  });
});

describe('percentile', () => {
  it('uses the nearest rank', () => {
    const samples = Array.from({ length: 40 }, (_, i) => i + 1);
    expect(percentile(samples, 50)).toBe(20);
    expect(percentile(samples, 99)).toBe(40);
  });
});
