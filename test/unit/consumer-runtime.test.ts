import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AckRequest, ClaimResult, FailRequest } from '../../adapters/ledger';
import { findConsumer } from '../../core/config/routing';
import config from '../../hookledger.config';
import { PermanentError, RetryableError } from '../../lambdas/runtime/errors';
import { type ConsumerHandle, createConsumerHandler, type DeliveryContext } from '../../lambdas/runtime/runtime';
import { deliveryMessage, NOW, sqsRecord } from '../support/factories';
import { capturingLogger } from '../support/logs';

const sqsMock = mockClient(SQSClient);
afterEach(() => sqsMock.reset());

const billing = findConsumer(config, 'billing-meter')!;

function fakeLedger(claim: ClaimResult, ackResult = true) {
  return {
    claims: 0,
    acks: [] as AckRequest[],
    failures: [] as FailRequest[],
    async claim() {
      this.claims++;
      return claim;
    },
    async acknowledge(request: AckRequest) {
      this.acks.push(request);
      return ackResult;
    },
    async recordFailure(request: FailRequest) {
      this.failures.push(request);
      return true;
    },
  };
}

function run(ledger: ReturnType<typeof fakeLedger>, handle: ConsumerHandle, consumer = billing) {
  sqsMock.on(ChangeMessageVisibilityCommand).resolves({}).on(SendMessageCommand).resolves({});
  return createConsumerHandler(
    {
      consumer,
      ledger,
      events: { getKey: async () => undefined },
      sqs: new SQSClient({ region: 'us-east-1' }),
      queueUrl: 'http://sqs/q/billing-meter',
      dlqUrl: 'http://sqs/q/billing-meter-dlq',
      principal: 'arn:aws:iam::1:role/billing-meter',
      logger: capturingLogger().logger,
      clock: () => NOW,
    },
    handle,
  );
}

const visibilityCalls = () => sqsMock.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input.VisibilityTimeout);

describe('consumer runtime', () => {
  describe('claim', () => {
    it('finishes cleanly without running the handler when the delivery is already done', async () => {
      const handle = vi.fn();
      const ledger = fakeLedger({ kind: 'done' });
      const res = await run(ledger, handle)({ Records: [sqsRecord(deliveryMessage())] });
      expect(res.batchItemFailures).toEqual([]);
      expect(handle).not.toHaveBeenCalled();
      expect(ledger.acks).toHaveLength(0);
    });

    it('drops a message of an erased event unread: no handler, no acknowledgement (no units), no DLQ copy of its view', async () => {
      const handle = vi.fn();
      const ledger = fakeLedger({ kind: 'erased', erasedAt: NOW - 1000 });
      const res = await run(ledger, handle)({ Records: [sqsRecord(deliveryMessage(), { messageId: 'm-erased' })] });
      expect(res.batchItemFailures).toEqual([]);
      expect(handle).not.toHaveBeenCalled();
      expect(ledger.acks).toHaveLength(0);
      expect(ledger.failures).toHaveLength(0);
      expect(sqsMock.commandCalls(SendMessageCommand)).toHaveLength(0);
    });

    it('leaves the message for later, for the rest of the live lease, when another worker holds it', async () => {
      const handle = vi.fn();
      const res = await run(
        fakeLedger({ kind: 'busy', leaseUntil: NOW + 42_000 }),
        handle,
      )({
        Records: [sqsRecord(deliveryMessage(), { messageId: 'm-busy' })],
      });
      expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'm-busy' }]);
      expect(visibilityCalls()).toEqual([42]);
      expect(handle).not.toHaveBeenCalled();
    });
  });

  describe('handle and acknowledge', () => {
    it('gives the handler attribution, attempt, idempotency key and the narrowed payload its message carries', async () => {
      let seen: DeliveryContext | undefined;
      const ledger = fakeLedger({ kind: 'claimed', attempt: 2, replay: false });
      await run(ledger, async (ctx) => {
        seen = ctx;
        return { units: 5 };
      })({ Records: [sqsRecord(deliveryMessage())] });
      expect(seen?.attribution).toEqual({
        source: 'platform',
        eventId: 'evt_01J8K7M2Q4',
        eventType: 'payment.succeeded',
        tenantId: 'tenant_204',
        keyId: 'key_42',
      });
      expect(seen?.attempt).toBe(2);
      expect(seen?.idempotencyKey).toBe('platform:evt_01J8K7M2Q4#billing-meter');
      expect(seen?.payload).toEqual({
        id: 'evt_01J8K7M2Q4',
        type: 'payment.succeeded',
        tenant_id: 'tenant_204',
        data: { amount: 4200, currency: 'eur' },
      });
      expect(ledger.acks).toMatchObject([
        { attempt: 2, units: 5, principal: 'arn:aws:iam::1:role/billing-meter', policyVersion: 'units-2026-11' },
      ]);
    });

    it('reports the message failed without touching visibility when the acknowledgement is fenced', async () => {
      const ledger = fakeLedger({ kind: 'claimed', attempt: 1, replay: false }, false);
      const res = await run(ledger, async () => ({ units: 1 }))({ Records: [sqsRecord(deliveryMessage(), { messageId: 'm-late' })] });
      expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'm-late' }]);
      expect(visibilityCalls()).toEqual([]);
    });
  });

  describe('failures', () => {
    it('records the error category and backs off exponentially: 2 s after attempt 1, 8 s after attempt 3', async () => {
      const boom: ConsumerHandle = async () => {
        throw new TypeError('upstream said no');
      };
      const first = fakeLedger({ kind: 'claimed', attempt: 1, replay: false });
      const r1 = await run(first, boom)({ Records: [sqsRecord(deliveryMessage(), { messageId: 'm1', receiveCount: 1 })] });
      const third = fakeLedger({ kind: 'claimed', attempt: 3, replay: false });
      const r3 = await run(third, boom)({ Records: [sqsRecord(deliveryMessage(), { messageId: 'm3', receiveCount: 3 })] });
      expect(r1.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
      expect(r3.batchItemFailures).toEqual([{ itemIdentifier: 'm3' }]);
      expect(first.failures).toMatchObject([{ attempt: 1, category: 'TypeError', errorMessage: 'upstream said no', quarantine: false }]);
      expect(visibilityCalls()).toEqual([2, 8]);
    });

    it('holds a 12 h Retry-After of a 20-receive consumer to its share of the 7-day retention (25,920 s), so the retries cannot outlast it', async () => {
      const patient = { ...billing, maxReceiveCount: 20 };
      const limited: ConsumerHandle = async () => {
        throw new RetryableError('destination answered 429', 'http_429', 43_200_000);
      };
      const ledger = fakeLedger({ kind: 'claimed', attempt: 1, replay: false });
      const res = await run(ledger, limited, patient)({ Records: [sqsRecord(deliveryMessage(), { messageId: 'm-429', receiveCount: 1 })] });
      expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'm-429' }]);
      // (7 days - 1 day of headroom) / 20 receives; at the default 5 receives the whole 12 h is honoured.
      const defaults = fakeLedger({ kind: 'claimed', attempt: 1, replay: false });
      await run(defaults, limited)({ Records: [sqsRecord(deliveryMessage(), { messageId: 'm-429b', receiveCount: 1 })] });
      expect(visibilityCalls()).toEqual([25_920, 43_200]);
    });

    it('marks the delivery quarantined on the last allowed receive and lets SQS move it to the DLQ', async () => {
      const ledger = fakeLedger({ kind: 'claimed', attempt: 5, replay: false });
      const res = await run(ledger, async () => {
        throw new Error('still broken');
      })({ Records: [sqsRecord(deliveryMessage(), { messageId: 'm5', receiveCount: billing.maxReceiveCount })] });
      expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'm5' }]);
      expect(ledger.failures).toMatchObject([{ attempt: 5, quarantine: true }]);
      expect(visibilityCalls()).toEqual([]);
    });

    it('quarantines at once on a PermanentError: sends to the DLQ and deletes the source message', async () => {
      const ledger = fakeLedger({ kind: 'claimed', attempt: 1, replay: false });
      const res = await run(ledger, async () => {
        throw new PermanentError('amount is not a number', 'invalid_payload');
      })({ Records: [sqsRecord(deliveryMessage(), { messageId: 'm-poison' })] });
      expect(res.batchItemFailures).toEqual([]);
      expect(ledger.failures).toMatchObject([{ category: 'invalid_payload', quarantine: true }]);
      const sent = sqsMock.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
      expect(sent).toHaveLength(1);
      expect(sent[0]?.QueueUrl).toBe('http://sqs/q/billing-meter-dlq');
      expect(JSON.parse(sent[0]!.MessageBody!).eventId).toBe('evt_01J8K7M2Q4');
    });

    it('quarantines a delivery whose payload the fan-out found past retention', async () => {
      const ledger = fakeLedger({ kind: 'claimed', attempt: 1, replay: false });
      const handle = vi.fn();
      await run(ledger, handle)({ Records: [sqsRecord(deliveryMessage({ payload: undefined, payloadUnavailable: 'expired' }))] });
      expect(ledger.failures).toMatchObject([{ category: 'payload_expired', quarantine: true }]);
      expect(ledger.acks).toHaveLength(0);
      expect(handle).not.toHaveBeenCalled();
    });

    it("quarantines a delivery whose stored body the fan-out could not read in its source's format, without handling it", async () => {
      const ledger = fakeLedger({ kind: 'claimed', attempt: 1, replay: false });
      const handle = vi.fn();
      await run(ledger, handle)({ Records: [sqsRecord(deliveryMessage({ payload: undefined, payloadUnavailable: 'unreadable' }))] });
      expect(ledger.failures).toMatchObject([{ category: 'payload_unreadable', quarantine: true }]);
      expect(ledger.acks).toHaveLength(0);
      expect(handle).not.toHaveBeenCalled();
    });

    it('quarantines a message that sat in its queue past the payload retention', async () => {
      const ledger = fakeLedger({ kind: 'claimed', attempt: 1, replay: false });
      await run(ledger, async () => ({ units: 1 }))({ Records: [sqsRecord(deliveryMessage({ payloadExpiresAt: NOW - 1 }))] });
      expect(ledger.failures).toMatchObject([{ category: 'payload_expired', quarantine: true }]);
    });

    it('sends a message that sat past the payload retention to the DLQ without its payload: attribution and payloadUnavailable expired only', async () => {
      const ledger = fakeLedger({ kind: 'claimed', attempt: 1, replay: false });
      const stale = deliveryMessage({
        payloadExpiresAt: NOW - 1,
        payload: { id: 'evt_01J8K7M2Q4', data: { amount: 4200, currency: 'eur', holder: 'Zoë Quist' } },
        orderingKey: 'acct_zoe_quist',
        orderingVersion: 'v-77131',
      });
      const res = await run(ledger, async () => ({ units: 1 }))({ Records: [sqsRecord(stale, { messageId: 'm-expired' })] });
      expect(res.batchItemFailures).toEqual([]);
      const sent = sqsMock.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
      expect(sent).toHaveLength(1);
      expect(sent[0]?.MessageAttributes?.quarantineReason?.StringValue).toBe('payload_expired');
      expect(JSON.parse(sent[0]!.MessageBody!)).toEqual({
        v: 2,
        source: 'platform',
        eventId: 'evt_01J8K7M2Q4',
        eventType: 'payment.succeeded',
        tenantId: 'tenant_204',
        keyId: 'key_42',
        consumerId: 'billing-meter',
        receivedAt: NOW,
        payloadExpiresAt: NOW - 1,
        payloadUnavailable: 'expired',
      });
      for (const value of ['4200', 'eur', 'Zoë', 'acct_zoe_quist', 'v-77131']) expect(sent[0]!.MessageBody).not.toContain(value);
    });

    it('quarantines a view too large for a message and a message without payload, each with its reason', async () => {
      const tooLarge = fakeLedger({ kind: 'claimed', attempt: 1, replay: false });
      await run(tooLarge, async () => ({ units: 1 }))({
        Records: [sqsRecord(deliveryMessage({ payload: undefined, payloadUnavailable: 'too_large' }))],
      });
      expect(tooLarge.failures).toMatchObject([{ category: 'payload_too_large', quarantine: true }]);
      const legacy = fakeLedger({ kind: 'claimed', attempt: 1, replay: false });
      await run(legacy, async () => ({ units: 1 }))({ Records: [sqsRecord(deliveryMessage({ payload: undefined }))] });
      expect(legacy.failures).toMatchObject([{ category: 'payload_missing', quarantine: true }]);
    });

    it('refuses negative units as a permanent error instead of writing them to the ledger', async () => {
      const ledger = fakeLedger({ kind: 'claimed', attempt: 1, replay: false });
      await run(ledger, async () => ({ units: -3 }))({ Records: [sqsRecord(deliveryMessage())] });
      expect(ledger.acks).toHaveLength(0);
      expect(ledger.failures).toMatchObject([{ category: 'invalid_units', quarantine: true }]);
    });

    it('fails only the bad record of a batch of three', async () => {
      const ledger = fakeLedger({ kind: 'claimed', attempt: 1, replay: false });
      const res = await run(ledger, async ({ attribution }) => {
        if (attribution.eventId === 'evt_B') throw new Error('no');
        return { units: 1 };
      })({
        Records: ['evt_A', 'evt_B', 'evt_C'].map((id) => sqsRecord(deliveryMessage({ eventId: id }), { messageId: `m-${id}` })),
      });
      expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'm-evt_B' }]);
      expect(ledger.acks.map((a) => a.message.eventId).sort()).toEqual(['evt_A', 'evt_C']);
    });

    it('fails a message addressed to another consumer without running the handler', async () => {
      const handle = vi.fn();
      const res = await run(
        fakeLedger({ kind: 'claimed', attempt: 1, replay: false }),
        handle,
      )({
        Records: [sqsRecord(deliveryMessage({ consumerId: 'audit-writer' }), { messageId: 'm-x' })],
      });
      expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'm-x' }]);
      expect(handle).not.toHaveBeenCalled();
    });
  });
});
