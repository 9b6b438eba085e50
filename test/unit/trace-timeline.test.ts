/**
 * The event's timeline (ops/trace.ts `timelineOf`) from ledger rows alone: the cases a running stack
 * rarely shows on demand: a replay of a done delivery, an attempt whose lease ran out with no outcome,
 * one still under way, a delivery `hookledger erase` quarantined, one never claimed, and HTTP statuses
 * read for an HTTP destination only.
 */
import { describe, expect, it } from 'vitest';
import type { LedgerItem } from '../../core/model';
import { TIMELINE_NOTES, timelineOf } from '../../ops/trace';

const RECEIVED = Date.parse('2026-11-29T12:00:00Z');
const PRINCIPAL = 'arn:aws:iam::000000000000:role/hookledger-local-crm-sync';

function row(consumerId: string, fields: Partial<LedgerItem>): LedgerItem {
  return {
    pk: `led#platform#evt_01J8K7M2Q4#${consumerId}`,
    consumerId,
    source: 'platform',
    eventId: 'evt_01J8K7M2Q4',
    eventType: 'payment.succeeded',
    tenantId: 'tenant_204',
    keyId: 'key_42',
    receivedAt: RECEIVED,
    state: 'done',
    attempt: 1,
    reads: [],
    ...fields,
  } as LedgerItem;
}

const consumers = [
  { id: 'crm-sync', kind: 'http' as const },
  { id: 'billing-meter', kind: 'lambda' as const },
  { id: 'audit-writer', kind: 'lambda' as const },
  { id: 'risk-evaluator', kind: 'lambda' as const },
];

describe('timelineOf', () => {
  it('shows a replay of a done delivery as its own claim and outcome, with the replay id and the HTTP status', () => {
    const crm = row('crm-sync', {
      attempt: 2,
      reads: [
        { principal: PRINCIPAL, at: RECEIVED + 40 },
        { principal: PRINCIPAL, at: RECEIVED + 90_000, replayId: 'rpl_01J8K7R9' },
      ],
      ackAt: RECEIVED + 75,
      ackAttempt: 1,
      outcome: 'http_202',
      replays: [{ replayId: 'rpl_01J8K7R9', at: RECEIVED + 90_120, policyVersion: 'v1', attempt: 2, outcome: 'http_200' }],
    });
    const steps = timelineOf({ receivedAt: RECEIVED }, [{ consumer: 'crm-sync', item: crm }], consumers);
    expect(steps.filter((s) => s.attempt !== undefined)).toEqual([
      { step: 'claimed', consumer: 'crm-sync', attempt: 1, at: RECEIVED + 40, sinceReceiptMs: 40 },
      {
        step: 'acknowledged',
        consumer: 'crm-sync',
        attempt: 1,
        at: RECEIVED + 75,
        sinceReceiptMs: 75,
        outcome: 'http_202',
        httpStatus: 202,
        durationMs: 35,
      },
      { step: 'claimed', consumer: 'crm-sync', attempt: 2, at: RECEIVED + 90_000, sinceReceiptMs: 90_000, replayId: 'rpl_01J8K7R9' },
      {
        step: 'acknowledged',
        consumer: 'crm-sync',
        attempt: 2,
        at: RECEIVED + 90_120,
        sinceReceiptMs: 90_120,
        outcome: 'http_200',
        replayId: 'rpl_01J8K7R9',
        httpStatus: 200,
        durationMs: 120,
      },
    ]);
  });

  it('says an attempt whose lease ran out had no outcome recorded, and leaves the attempt under way without a note', () => {
    const billing = row('billing-meter', {
      state: 'leased',
      attempt: 2,
      leaseUntil: RECEIVED + 200_000,
      reads: [
        { principal: 'worker-a', at: RECEIVED + 30 },
        { principal: 'worker-b', at: RECEIVED + 120_000 },
      ],
    });
    const steps = timelineOf({ receivedAt: RECEIVED }, [{ consumer: 'billing-meter', item: billing }], consumers);
    expect(steps.filter((s) => s.attempt !== undefined)).toEqual([
      { step: 'claimed', consumer: 'billing-meter', attempt: 1, at: RECEIVED + 30, sinceReceiptMs: 30, note: TIMELINE_NOTES.lost },
      { step: 'claimed', consumer: 'billing-meter', attempt: 2, at: RECEIVED + 120_000, sinceReceiptMs: 120_000 },
    ]);
  });

  it('reads no HTTP status for a Lambda consumer, shows an erased delivery quarantined payload_erased, and a never-claimed one queued only', () => {
    const risk = row('risk-evaluator', {
      state: 'quarantined',
      attempt: 1,
      reads: [{ principal: 'worker-r', at: RECEIVED + 50 }],
      errors: [{ attempt: 1, category: 'http_503', message: 'erased', at: RECEIVED + 60 }],
      erasedAt: RECEIVED + 5_000,
    });
    const steps = timelineOf(
      { receivedAt: RECEIVED },
      [{ consumer: 'risk-evaluator', item: risk }, { consumer: 'audit-writer' }],
      consumers,
    );
    expect(steps).toEqual([
      { step: 'received', at: RECEIVED, sinceReceiptMs: 0 },
      { step: 'recorded', note: TIMELINE_NOTES.recorded },
      { step: 'queued', consumer: 'risk-evaluator', note: TIMELINE_NOTES.queued },
      { step: 'queued', consumer: 'audit-writer', note: TIMELINE_NOTES.queued },
      { step: 'claimed', consumer: 'risk-evaluator', attempt: 1, at: RECEIVED + 50, sinceReceiptMs: 50 },
      {
        step: 'failed',
        consumer: 'risk-evaluator',
        attempt: 1,
        at: RECEIVED + 60,
        sinceReceiptMs: 60,
        category: 'http_503',
        durationMs: 10,
      },
      { step: 'erased', consumer: 'risk-evaluator', at: RECEIVED + 5_000, sinceReceiptMs: 5_000, category: 'payload_erased' },
    ]);
  });
});
