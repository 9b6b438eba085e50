/**
 * The Activity and Health operations' pure parts: which buckets a window gets, where a time falls,
 * the nearest-rank percentile, the tally of a window's receipts and ledger rows per bucket, and the
 * health rules computed from a status report, the breakers, the pause state, the intake's
 * verification failures per source and the last reconcile run.
 */
import { describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { DAY_MS, ledgerKey } from '../../core/model';
import baseConfig from '../../hookledger.config';
import { RECONCILE_CHECKPOINT_JOB } from '../../lambdas/reconcile/app';
import { activityPresetWindow, bucketIndex, bucketSizeFor, percentile, tallyActivity } from '../../ops/activity';
import { HEALTH_RECONCILE_JOB, healthRules } from '../../ops/health';
import type { StatusReport } from '../../ops/status';

const HOUR_MS = 3_600_000;
const T = Date.parse('2026-12-01T10:00:00Z');
const config = defineConfig(baseConfig);

describe('bucketSizeFor', () => {
  it('gives the last hour 1-minute buckets, 24 hours 30-minute buckets and 7 days 3-hour buckets', () => {
    expect(bucketSizeFor({ from: T - HOUR_MS, to: T })).toBe(60_000);
    expect(bucketSizeFor({ from: T - DAY_MS, to: T })).toBe(30 * 60_000);
    expect(bucketSizeFor({ from: T - 7 * DAY_MS, to: T })).toBe(3 * HOUR_MS);
  });

  it('gives a 90-second window 1-minute buckets, 30 days 12-hour buckets and 90 days 1-day buckets (more than 60 of them)', () => {
    expect(bucketSizeFor({ from: T, to: T + 90_000 })).toBe(60_000);
    expect(bucketSizeFor({ from: T - 30 * DAY_MS, to: T })).toBe(12 * HOUR_MS);
    expect(bucketSizeFor({ from: T - 90 * DAY_MS, to: T })).toBe(DAY_MS);
  });
});

describe('activityPresetWindow', () => {
  it('ends the presets at the end of now’s minute: 1h, 24h and 7d back, on whole minutes', () => {
    const now = T + 25_300;
    expect(activityPresetWindow('1h', now)).toEqual({ from: T + 60_000 - HOUR_MS, to: T + 60_000 });
    expect(activityPresetWindow('24h', now)).toEqual({ from: T + 60_000 - DAY_MS, to: T + 60_000 });
    expect(activityPresetWindow('7d', now)).toEqual({ from: T + 60_000 - 7 * DAY_MS, to: T + 60_000 });
    expect(activityPresetWindow('1h', T)).toEqual({ from: T + 60_000 - HOUR_MS, to: T + 60_000 });
  });
});

describe('bucketIndex', () => {
  const window = { from: T, to: T + 10 * 60_000 };
  it('puts the window start in bucket 0 and its last millisecond in the last bucket', () => {
    expect(bucketIndex(T, window, 60_000)).toBe(0);
    expect(bucketIndex(T + 59_999, window, 60_000)).toBe(0);
    expect(bucketIndex(T + 60_000, window, 60_000)).toBe(1);
    expect(bucketIndex(T + 10 * 60_000 - 1, window, 60_000)).toBe(9);
  });
  it('answers -1 outside [from, to)', () => {
    expect(bucketIndex(T - 1, window, 60_000)).toBe(-1);
    expect(bucketIndex(T + 10 * 60_000, window, 60_000)).toBe(-1);
  });
});

describe('percentile (nearest rank)', () => {
  it('takes p50 = 50 and p99 = 100 of 10, 20, ..., 100 given in any order', () => {
    const values = [100, 30, 10, 90, 20, 60, 40, 80, 50, 70];
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(100);
    expect(percentile(values, 90)).toBe(90);
  });
  it('takes the one value of one sample, and nothing of none', () => {
    expect(percentile([412], 50)).toBe(412);
    expect(percentile([412], 99)).toBe(412);
    expect(percentile([], 50)).toBeUndefined();
  });
  it('takes p99 of 200 samples as the 198th smallest', () => {
    const values = Array.from({ length: 200 }, (_, i) => i + 1);
    expect(percentile(values, 99)).toBe(198);
    expect(percentile(values, 50)).toBe(100);
  });
});

describe('tallyActivity', () => {
  const window = { from: T, to: T + 3 * 60_000 };
  const receipt = (eventId: string, at: number, consumers: string[]) => ({ source: 'platform', eventId, receivedAt: at, consumers });
  const receipts = [
    receipt('evt_01J8K7M2Q4', T + 5_000, ['billing-meter', 'risk-evaluator']),
    receipt('evt_01J8K7M2Q5', T + 65_000, ['billing-meter', 'risk-evaluator']),
    receipt('evt_01J8K7M2Q6', T + 125_000, ['billing-meter']),
  ];
  const row = (eventId: string, consumerId: string, state: string, ackAt?: number) => ({
    pk: ledgerKey('platform', eventId, consumerId),
    consumerId,
    state,
    ...(ackAt !== undefined ? { ackAt } : {}),
  });
  const rows = [
    row('evt_01J8K7M2Q4', 'billing-meter', 'done', T + 5_120),
    row('evt_01J8K7M2Q4', 'risk-evaluator', 'quarantined'),
    row('evt_01J8K7M2Q5', 'billing-meter', 'done', T + 65_480),
    row('evt_01J8K7M2Q5', 'risk-evaluator', 'retrying'),
    row('evt_01J8K7M2Q6', 'billing-meter', 'leased'),
  ];
  const tally = tallyActivity(
    { window, bucketMs: 60_000, sources: ['platform'], consumers: ['billing-meter', 'risk-evaluator'] },
    receipts,
    rows,
  );

  it('counts each source’s receipts per bucket by receivedAt', () => {
    expect(tally.sources).toEqual([
      { source: 'platform', received: [1, 1, 1], total: 1 + 1 + 1, duplicates: [0, 0, 0], duplicateTotal: 0 },
    ]);
  });

  it('counts each source’s duplicates in the bucket their minute starts in, and none of a minute outside the window or of another source', () => {
    const counted = tallyActivity(
      { window, bucketMs: 60_000, sources: ['platform', 'partner'], consumers: [] },
      receipts,
      [],
      [
        { source: 'platform', minute: T, count: 2 },
        { source: 'platform', minute: T + 120_000, count: 5 },
        { source: 'platform', minute: T - 60_000, count: 7 },
        { source: 'platform', minute: T + 180_000, count: 11 },
        { source: 'retired', minute: T, count: 13 },
      ],
    );
    expect(counted.sources).toEqual([
      { source: 'platform', received: [1, 1, 1], total: 3, duplicates: [2, 0, 5], duplicateTotal: 7 },
      { source: 'partner', received: [0, 0, 0], total: 0, duplicates: [0, 0, 0], duplicateTotal: 0 },
    ]);
  });

  it('counts a minute the window’s start cuts in bucket 0, and a minute its end cuts in the last bucket', () => {
    const cut = { from: T + 30_000, to: T + 150_000 };
    const counted = tallyActivity(
      { window: cut, bucketMs: 60_000, sources: ['platform'], consumers: [] },
      [],
      [],
      [
        { source: 'platform', minute: T, count: 3 },
        { source: 'platform', minute: T + 120_000, count: 4 },
        { source: 'platform', minute: T - 60_000, count: 9 },
      ],
    );
    expect(counted.sources[0]?.duplicates).toEqual([3, 4]);
  });

  it('sums a 30-minute bucket’s minutes of duplicates', () => {
    const day = { from: T, to: T + DAY_MS };
    const counted = tallyActivity(
      { window: day, bucketMs: 30 * 60_000, sources: ['platform'], consumers: [] },
      [],
      [],
      [
        { source: 'platform', minute: T, count: 1 },
        { source: 'platform', minute: T + 29 * 60_000, count: 2 },
        { source: 'platform', minute: T + 30 * 60_000, count: 4 },
      ],
    );
    expect(counted.sources[0]?.duplicates.slice(0, 3)).toEqual([3, 4, 0]);
    expect(counted.sources[0]?.duplicateTotal).toBe(7);
  });

  it('counts each consumer’s done, retrying and quarantined deliveries in the bucket of their event’s receipt', () => {
    const [billing, risk] = tally.consumers;
    expect(billing).toMatchObject({ consumer: 'billing-meter', done: [1, 1, 0], retrying: [0, 0, 0], quarantined: [0, 0, 0] });
    expect(billing?.totals).toEqual({ done: 2, retrying: 0, quarantined: 0 });
    expect(risk).toMatchObject({ consumer: 'risk-evaluator', done: [0, 0, 0], retrying: [0, 1, 0], quarantined: [1, 0, 0] });
  });

  it('measures latency received -> acknowledged of done deliveries: p50 and p99 per bucket and for the window', () => {
    const billing = tally.consumers[0];
    expect(billing?.latencyMs).toEqual({ p50: 120, p99: 480, samples: 2 });
    expect(billing?.p50).toEqual([120, 480, null]);
    expect(billing?.p99).toEqual([120, 480, null]);
    expect(tally.consumers[1]?.latencyMs).toEqual({ samples: 0 });
  });
});

const consumerStatus = (consumer: string, extra: object = {}) => ({
  consumer,
  paused: false,
  ready: 0,
  leased: 0,
  expiredLeases: 0,
  retrying: 0,
  quarantined: 0,
  done: 0,
  queue: { visible: 0, inFlight: 0 },
  dlq: { visible: 0, inFlight: 0 },
  ...extra,
});

describe('healthRules', () => {
  const status: StatusReport = {
    at: T,
    consumers: [
      consumerStatus('billing-meter'),
      consumerStatus('audit-writer', { oldestPendingAt: T - 901_000, oldestPendingAgeMs: 901_000 }),
      consumerStatus('risk-evaluator', { dlq: { visible: 1, inFlight: 0 } }),
    ],
    intake: { events: 3, byType: {}, bySecretVersion: {}, previousSecretLastVerified: {} },
    fanoutFailures: { visible: 0, inFlight: 0 },
  };
  const rows = healthRules(config, {
    status,
    circuits: {},
    paused: new Set(['billing-meter']),
    // platform: 10 verification failures in the current minute, the default threshold.
    signatureFailures: { at: T, bySource: { platform: [{ from: T, count: 10 }] } },
    reconcile: { at: T - 60_000, from: T - HOUR_MS, to: T, complete: true, violations: 2 },
  });
  const stateOf = (rule: string, subject: string) => rows.find((r) => r.rule === rule && r.subject === subject)?.state;

  it('alarms DeadLetters for the consumer with a DLQ message, and not for the others', () => {
    expect(stateOf('DeadLetters', 'risk-evaluator')).toBe('ALARM');
    expect(stateOf('DeadLetters', 'billing-meter')).toBe('OK');
    expect(stateOf('DeadLetters', 'audit-writer')).toBe('OK');
  });

  it('alarms OldestMessageAge past the consumer’s alarmAgeSeconds (900 s for audit-writer)', () => {
    expect(stateOf('OldestMessageAge', 'audit-writer')).toBe('ALARM');
    expect(stateOf('OldestMessageAge', 'risk-evaluator')).toBe('OK');
  });

  it('alarms Paused for a paused consumer', () => {
    expect(stateOf('Paused', 'billing-meter')).toBe('ALARM');
    expect(stateOf('Paused', 'audit-writer')).toBe('OK');
  });

  it('alarms SignatureFailures of platform at 10 failures within 15 min, FanOutFailures on an empty queue is OK, ReconcileViolations from the last run', () => {
    expect(stateOf('SignatureFailures', 'platform')).toBe('ALARM');
    expect(stateOf('FanOutFailures', 'fan-out')).toBe('OK');
    expect(stateOf('ReconcileViolations', 'reconcile')).toBe('ALARM');
  });

  it('shows SignatureFailures of platform OK with no failure counted, and no such row where the target keeps no counters (AWS)', () => {
    const quiet = healthRules(config, { status, circuits: {}, signatureFailures: { at: T, bySource: {} } });
    expect(quiet.filter((r) => r.rule === 'SignatureFailures')).toEqual([
      {
        rule: 'SignatureFailures',
        subject: 'platform',
        state: 'OK',
        detail: '0 verification failure(s) in the last 15 min',
        reason: '0 verification failure(s) in the last 15 min; alarms at 10 within 15 min',
      },
    ]);
    expect(healthRules(config, { status, circuits: {} }).some((r) => r.rule === 'SignatureFailures')).toBe(false);
  });

  it('alarms CircuitOpen for an HTTP consumer at its breakAfterFailures', () => {
    const open = healthRules(config, {
      status,
      circuits: { 'risk-evaluator': { failures: 20, breakAfter: 20 }, 'billing-meter': { failures: 3, breakAfter: 20 } },
    });
    expect(open.filter((r) => r.rule === 'CircuitOpen').map((r) => [r.subject, r.state])).toEqual([
      ['billing-meter', 'OK'],
      ['risk-evaluator', 'ALARM'],
    ]);
  });

  it('has no CircuitOpen row for a consumer that is not HTTP', () => {
    expect(rows.filter((r) => r.rule === 'CircuitOpen')).toEqual([]);
  });

  it('reads the scheduled reconcile’s own checkpoint job', () => {
    expect(HEALTH_RECONCILE_JOB).toBe(RECONCILE_CHECKPOINT_JOB);
  });
});
