/**
 * The fan-out's send on the event's timeline, timed without a write of its own: the consumer's claim
 * records the claimed message's SQS SentTimestamp in its access-log entry, and `timelineOf` shows the
 * first claim's as the `queued` step of that consumer.
 */
import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClaimRequest } from '../../adapters/ledger';
import { findConsumer } from '../../core/config/routing';
import type { LedgerItem } from '../../core/model';
import config from '../../hookledger.config';
import { createConsumerHandler } from '../../lambdas/runtime/runtime';
import { TIMELINE_NOTES, timelineOf } from '../../ops/trace';
import { deliveryMessage, NOW, sqsRecord } from '../support/factories';
import { capturingLogger } from '../support/logs';

const sqsMock = mockClient(SQSClient);
afterEach(() => sqsMock.reset());

const RECEIVED = Date.parse('2026-11-29T12:00:00Z');
const PRINCIPAL = 'arn:aws:iam::000000000000:role/hookledger-local-billing-meter';

describe('the consumer runtime’s claim', () => {
  it('hands the ledger the SentTimestamp of the message it claims', async () => {
    const claims: ClaimRequest[] = [];
    sqsMock.on(ChangeMessageVisibilityCommand).resolves({}).on(SendMessageCommand).resolves({});
    const handler = createConsumerHandler(
      {
        consumer: findConsumer(config, 'billing-meter')!,
        ledger: {
          claim: async (request: ClaimRequest) => {
            claims.push(request);
            return { kind: 'claimed', attempt: 1, replay: false };
          },
          acknowledge: async () => true,
          recordFailure: async () => true,
        },
        events: { getKey: async () => undefined },
        sqs: new SQSClient({ region: 'us-east-1' }),
        queueUrl: 'http://sqs/q/billing-meter',
        dlqUrl: 'http://sqs/q/billing-meter-dlq',
        principal: PRINCIPAL,
        logger: capturingLogger().logger,
        clock: () => NOW + 250,
      },
      async () => ({ units: 1 }),
    );
    const record = sqsRecord(deliveryMessage());
    const res = await handler({ Records: [{ ...record, attributes: { ...record.attributes, SentTimestamp: String(NOW + 40) } }] });
    expect(res.batchItemFailures).toEqual([]);
    expect(claims.map((c) => [c.now, c.sentAt])).toEqual([[NOW + 250, NOW + 40]]);
  });
});

function row(consumerId: string, fields: Partial<LedgerItem>): LedgerItem {
  return {
    pk: `platform:evt_01J8K7M2Q4#${consumerId}`,
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

describe('timelineOf: queued', () => {
  const consumers = [
    { id: 'billing-meter', kind: 'lambda' as const },
    { id: 'audit-writer', kind: 'lambda' as const },
    { id: 'risk-evaluator', kind: 'lambda' as const },
  ];

  it('times each consumer’s queued step by its first claim’s message, and leaves a consumer never claimed, or claimed before claims kept it, untimed', () => {
    const billing = row('billing-meter', {
      attempt: 2,
      state: 'done',
      reads: [
        { principal: PRINCIPAL, at: RECEIVED + 60, sentAt: RECEIVED + 18 },
        { principal: PRINCIPAL, at: RECEIVED + 2_300, sentAt: RECEIVED + 18 },
      ],
      ackAt: RECEIVED + 2_340,
      ackAttempt: 2,
    });
    const audit = row('audit-writer', { reads: [{ principal: PRINCIPAL, at: RECEIVED + 70 }], ackAt: RECEIVED + 90, ackAttempt: 1 });
    const steps = timelineOf(
      { receivedAt: RECEIVED },
      [{ consumer: 'billing-meter', item: billing }, { consumer: 'audit-writer', item: audit }, { consumer: 'risk-evaluator' }],
      consumers,
    );
    expect(steps.filter((s) => s.step === 'queued' || s.step === 'recorded')).toEqual([
      { step: 'recorded', note: TIMELINE_NOTES.recorded },
      { step: 'queued', consumer: 'billing-meter', at: RECEIVED + 18, sinceReceiptMs: 18, note: TIMELINE_NOTES.sent },
      { step: 'queued', consumer: 'audit-writer', note: TIMELINE_NOTES.queued },
      { step: 'queued', consumer: 'risk-evaluator', note: TIMELINE_NOTES.queued },
    ]);
    expect(steps.find((s) => s.step === 'claimed' && s.consumer === 'billing-meter')?.sinceReceiptMs).toBe(60);
  });
  it('times the recorded step by the receipt’s recordedAt, and leaves a receipt written before receipts kept it untimed', () => {
    const recorded = (receipt: { receivedAt: number; recordedAt?: number }) =>
      timelineOf(receipt, [], consumers).find((s) => s.step === 'recorded');
    expect(recorded({ receivedAt: RECEIVED, recordedAt: RECEIVED + 7 })).toEqual({ step: 'recorded', at: RECEIVED + 7, sinceReceiptMs: 7 });
    expect(recorded({ receivedAt: RECEIVED })).toEqual({ step: 'recorded', note: TIMELINE_NOTES.recorded });
  });
});
