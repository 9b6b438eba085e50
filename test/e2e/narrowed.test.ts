/**
 * The payload travels narrowed (`fields`, lambdas/fanout/app.ts): the fan-out reads each event's payload once and each
 * consumer's queue message carries only that consumer's fields; replays take the same path, a
 * duplicate copy of a re-queue message runs the handler once per replay id, and a delivery whose
 * payload has passed retention is refused with its reason while its siblings are untouched, and goes
 * to its DLQ without the payload.
 */
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryMessage } from '../../core/model';
import baseConfig from '../../hookledger.config';
import type { ConsumerHandle, ConsumerLambdaHandler } from '../../lambdas/runtime/runtime';
import type { LocalStack } from '../../local/stack';
import { replay } from '../../ops/replay';
import { platformEvent } from '../support/factories';
import { ledgerRows, send, startTestStack } from '../support/stack';

/** Every message body each consumer's worker was given, as received from its queue. */
const received: Record<string, DeliveryMessage[]> = {};
/** Every handler run of audit-writer, with the replay id it ran under. */
const auditRuns: { eventId: string; replayId?: string }[] = [];

const audit: ConsumerHandle = async (ctx) => {
  auditRuns.push({ eventId: ctx.attribution.eventId, ...(ctx.replayId ? { replayId: ctx.replayId } : {}) });
  return { units: 1 };
};

function capture(consumerId: string, inner: ConsumerLambdaHandler): ConsumerLambdaHandler {
  return async (event, context) => {
    const list = received[consumerId] ?? [];
    received[consumerId] = list;
    for (const record of event.Records) list.push(JSON.parse(record.body) as DeliveryMessage);
    return inner(event, context);
  };
}

let stack: LocalStack;
let reads: string[] = [];
beforeAll(async () => {
  stack = await startTestStack({
    config: baseConfig,
    handles: { 'audit-writer': audit },
    wrapConsumer: capture,
    onCapacity: (operation) => {
      if (operation === 'getPayload') reads.push(operation);
    },
  });
});
afterAll(() => stack?.stop());

const operatorDeps = () => ({ ddb: stack.handlers.ddb, tables: stack.resources.tables, config: baseConfig, operator: 'e2e' });

describe('narrowed delivery messages on the local stack', () => {
  it("puts into each message only that consumer's fields, from one payload read per event", async () => {
    reads = [];
    const event = platformEvent({ id: 'evt_01J8K7N001', type: 'payment.succeeded', tenant_id: 'tenant_204' });
    expect((await send(stack, event)).status).toBe(202);
    await stack.drain();
    const body = (consumerId: string) => received[consumerId]?.find((m) => m.eventId === 'evt_01J8K7N001');
    expect(body('billing-meter')?.payload).toEqual({
      id: 'evt_01J8K7N001',
      type: 'payment.succeeded',
      tenant_id: 'tenant_204',
      data: { amount: 4200, currency: 'eur' },
    });
    expect(body('audit-writer')?.payload).toEqual({
      id: 'evt_01J8K7N001',
      type: 'payment.succeeded',
      tenant_id: 'tenant_204',
      key_id: 'key_42',
      created: event.created,
    });
    expect(body('risk-evaluator')?.payload).toEqual({
      id: 'evt_01J8K7N001',
      type: 'payment.succeeded',
      tenant_id: 'tenant_204',
      key_id: 'key_42',
      data: event.data,
    });
    // card_last4 sits under data: only risk-evaluator lists `data` whole; billing-meter's message never carries it.
    // Matched as a JSON string and by its key: a bare 4242 can occur in a timestamp or a hash of the message.
    for (const consumer of ['billing-meter', 'audit-writer']) {
      const message = JSON.stringify(body(consumer));
      expect(message).not.toContain('card_last4');
      expect(message).not.toContain('"4242"');
    }
    expect(reads).toEqual(['getPayload']);
    const rows = (await ledgerRows(stack)).filter((r) => r.eventId === 'evt_01J8K7N001');
    expect(rows.map((r) => [r.consumerId, r.state, r.reads.length]).sort()).toEqual([
      ['audit-writer', 'done', 1],
      ['billing-meter', 'done', 1],
      ['risk-evaluator', 'done', 1],
    ]);
  }, 40_000);

  it('replays through the same path, and a duplicate copy of the re-queue message runs the handler once', async () => {
    const before = auditRuns.length;
    const result = await replay(operatorDeps(), { consumer: 'audit-writer', event: { eventId: 'evt_01J8K7N001' } });
    expect(result).toMatchObject({ requeued: 1, expired: 0 });
    await stack.drain();
    const replayed = received['audit-writer']!.filter((m) => m.replayId === result.replayId);
    expect(replayed).toHaveLength(1);
    expect(replayed[0]?.payload).toMatchObject({ id: 'evt_01J8K7N001', key_id: 'key_42' });
    // SQS delivers at least once: two more copies of the very same message arrive later.
    const queueUrl = stack.resources.queues['audit-writer']!.url;
    for (let i = 0; i < 2; i++)
      await stack.handlers.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(replayed[0]) }));
    await stack.drain();
    expect(received['audit-writer']!.filter((m) => m.replayId === result.replayId)).toHaveLength(3);
    expect(auditRuns.slice(before)).toEqual([{ eventId: 'evt_01J8K7N001', replayId: result.replayId }]);
    const row = (await ledgerRows(stack)).find((r) => r.eventId === 'evt_01J8K7N001' && r.consumerId === 'audit-writer');
    expect(row?.replays?.map((r) => r.replayId)).toEqual([result.replayId]);
    expect(row?.units).toBe(1);
  }, 40_000);

  it('refuses only the delivery whose message outlived the payload retention, naming the reason', async () => {
    expect((await send(stack, platformEvent({ id: 'evt_01J8K7N002', type: 'invoice.paid', tenant_id: 'tenant_311' }))).status).toBe(202);
    await stack.drain();
    // A copy of audit-writer's message that sat in the queue beyond retention (a backlog older than payloadDays).
    const message = received['audit-writer']!.find((m) => m.eventId === 'evt_01J8K7N002')!;
    const stale: DeliveryMessage = { ...message, eventId: 'evt_01J8K7N003', payloadExpiresAt: Date.now() - 1 };
    await stack.handlers.sqs.send(
      new SendMessageCommand({ QueueUrl: stack.resources.queues['audit-writer']!.url, MessageBody: JSON.stringify(stale) }),
    );
    await stack.drain();
    const rows = await ledgerRows(stack);
    expect(rows.find((r) => r.eventId === 'evt_01J8K7N003')).toMatchObject({
      consumerId: 'audit-writer',
      state: 'quarantined',
      lastErrorCategory: 'payload_expired',
    });
    expect(
      rows
        .filter((r) => r.eventId === 'evt_01J8K7N002')
        .map((r) => [r.consumerId, r.state])
        .sort(),
    ).toEqual([
      ['audit-writer', 'done'],
      ['billing-meter', 'done'],
    ]);
  }, 40_000);
  it("sends a delivery refused for retention to its DLQ with attribution only: none of the payload's values", async () => {
    const created = 1_234_567_891;
    expect(
      (await send(stack, platformEvent({ id: 'evt_01J8K7N004', type: 'invoice.paid', tenant_id: 'tenant_204', created }))).status,
    ).toBe(202);
    await stack.drain();
    // audit-writer's message for it, as it would be had it sat in the queue beyond retention.
    const message = received['audit-writer']!.find((m) => m.eventId === 'evt_01J8K7N004')!;
    expect(message.payload).toMatchObject({ id: 'evt_01J8K7N004', created });
    const stale: DeliveryMessage = { ...message, eventId: 'evt_01J8K7N005', payloadExpiresAt: Date.now() - 1 };
    const { url, dlqUrl } = stack.resources.queues['audit-writer']!;
    await stack.handlers.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(stale) }));
    await stack.drain();
    expect((await ledgerRows(stack)).find((r) => r.eventId === 'evt_01J8K7N005')).toMatchObject({
      consumerId: 'audit-writer',
      state: 'quarantined',
      lastErrorCategory: 'payload_expired',
    });

    const dlq = await stack.handlers.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'], VisibilityTimeout: 30 }),
    );
    const quarantined = (dlq.Messages ?? []).find((m) => (JSON.parse(m.Body ?? '{}') as DeliveryMessage).eventId === 'evt_01J8K7N005');
    expect(quarantined?.MessageAttributes?.quarantineReason?.StringValue).toBe('payload_expired');
    const body = JSON.parse(quarantined!.Body!) as DeliveryMessage;
    expect(body).toMatchObject({
      eventId: 'evt_01J8K7N005',
      tenantId: 'tenant_204',
      consumerId: 'audit-writer',
      payloadUnavailable: 'expired',
    });
    expect(body.payload).toBeUndefined();
    // The payload's own values: its id field and its created time.
    expect(quarantined!.Body).not.toContain('evt_01J8K7N004');
    expect(quarantined!.Body).not.toContain(String(created));
  }, 40_000);
});
