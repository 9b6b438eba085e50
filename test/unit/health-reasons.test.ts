/**
 * The Health rows' `reason` (what was found and the threshold, with the numbers) and `since` (when an
 * ALARM row's condition began, where the data records it), as `hookledger alarms` prints them.
 */
import { describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import baseConfig from '../../hookledger.config';
import { healthRules } from '../../ops/health';
import type { StatusReport } from '../../ops/status';

const T = Date.parse('2026-12-01T10:00:00Z');
const config = defineConfig(baseConfig);

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

const status: StatusReport = {
  at: T,
  consumers: [
    consumerStatus('billing-meter', { oldestPendingAt: T - 30_000, oldestPendingAgeMs: 30_000 }),
    consumerStatus('audit-writer', { oldestPendingAt: T - 901_000, oldestPendingAgeMs: 901_000 }),
    consumerStatus('risk-evaluator', { dlq: { visible: 2, inFlight: 0 } }),
  ],
  intake: { events: 3, byType: {}, bySecretVersion: {}, previousSecretLastVerified: {} },
  fanoutFailures: { visible: 0, inFlight: 0 },
};

const rows = healthRules(config, {
  status,
  circuits: { 'risk-evaluator': { failures: 20, breakAfter: 20 } },
  reconcile: { at: T - 60_000, from: T - 3_600_000, to: T, complete: true, violations: 2 },
});
const rowOf = (rule: string, subject: string) => rows.find((r) => r.rule === rule && r.subject === subject);

describe('health rows for hookledger alarms', () => {
  it('give the reason with the numbers and the threshold', () => {
    expect(rowOf('DeadLetters', 'risk-evaluator')?.reason).toBe('2 message(s) in its DLQ; alarms at 1 or more');
    expect(rowOf('DeadLetters', 'billing-meter')?.reason).toBe('0 message(s) in its DLQ; alarms at 1 or more');
    expect(rowOf('CircuitOpen', 'risk-evaluator')?.reason).toBe('20 of 20 failures in a row; alarms (the breaker opens) at 20');
    expect(rowOf('FanOutFailures', 'fan-out')?.reason).toBe('0 record(s) on its on-failure queue; alarms at 1 or more');
  });

  it('date OldestMessageAge in ALARM from when its oldest pending delivery crossed alarmAgeSeconds (900 s for audit-writer)', () => {
    expect(rowOf('OldestMessageAge', 'audit-writer')).toMatchObject({ state: 'ALARM', since: T - 901_000 + 900_000 });
  });

  it('date ReconcileViolations in ALARM from the run that found them', () => {
    expect(rowOf('ReconcileViolations', 'reconcile')).toMatchObject({ state: 'ALARM', since: T - 60_000 });
  });

  it('give no since on OK rows, nor where the data keeps no start time (DLQ messages, the breaker)', () => {
    expect(rowOf('OldestMessageAge', 'billing-meter')).toMatchObject({ state: 'OK' });
    expect(rowOf('OldestMessageAge', 'billing-meter')).not.toHaveProperty('since');
    expect(rowOf('DeadLetters', 'risk-evaluator')).not.toHaveProperty('since');
    expect(rowOf('CircuitOpen', 'risk-evaluator')).toMatchObject({ state: 'ALARM' });
    expect(rowOf('CircuitOpen', 'risk-evaluator')).not.toHaveProperty('since');
  });
});
