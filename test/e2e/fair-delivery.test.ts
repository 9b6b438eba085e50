/**
 * Fair delivery on the local stack: every send to a consumer's standard queue carries the event's
 * tenant as its MessageGroupId (the tenant key of an SQS fair queue), from the fan-out and from a
 * replay's re-queue. fauxqs accepts a MessageGroupId on a standard queue but neither stores nor
 * returns it (ReceiveMessage answers without it), so the sends are read where they leave the
 * stack's SQS client, on their way to the real emulator.
 */
import type { SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import config from '../../hookledger.config';
import type { LocalStack } from '../../local/stack';
import { replay } from '../../ops/replay';
import { platformEvent } from '../support/factories';
import { send, startTestStack } from '../support/stack';

interface SentEntry {
  readonly queue: string;
  readonly eventId: string;
  readonly tenantId: string | undefined;
  readonly replayId: string | undefined;
  readonly groupId: string | undefined;
}

let stack: LocalStack;
let t0: number;
const sent: SentEntry[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  stack.handlers.sqs.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as { QueueUrl?: string; Entries?: SendMessageBatchRequestEntry[] };
      for (const entry of input.Entries ?? []) {
        const body = JSON.parse(entry.MessageBody ?? '{}') as { eventId?: string; tenantId?: string; replayId?: string };
        sent.push({
          queue: (input.QueueUrl ?? '').split('/').pop() ?? '',
          eventId: body.eventId ?? '',
          tenantId: body.tenantId,
          replayId: body.replayId,
          groupId: entry.MessageGroupId,
        });
      }
      return next(args);
    },
    { step: 'initialize', name: 'fairDeliveryCapture' },
  );
  t0 = Date.now();
  for (const [id, tenant] of [
    ['evt_01J8K7F204', 'tenant_204'],
    ['evt_01J8K7F311', 'tenant_311'],
  ] as const) {
    expect(
      (await send(stack, platformEvent({ id, tenant_id: tenant, key_id: tenant === 'tenant_204' ? 'key_42' : 'key_77' }))).status,
    ).toBe(202);
  }
  await stack.drain();
});
afterAll(() => stack?.stop());

describe('fair delivery: the tenant is the message group of every standard-queue send', () => {
  it('the fan-out sends each consumer its delivery grouped by the event tenant', () => {
    const first = sent.filter((s) => s.replayId === undefined);
    expect(first.filter((s) => s.queue === 'hookledger-audit-writer').map((s) => [s.eventId, s.groupId])).toEqual(
      expect.arrayContaining([
        ['evt_01J8K7F204', 'tenant_204'],
        ['evt_01J8K7F311', 'tenant_311'],
      ]),
    );
    expect(first.length).toBeGreaterThanOrEqual(2);
    for (const s of first) expect(s.groupId).toBe(s.tenantId);
  });

  it('a replay re-queue reaches the queue grouped by the event tenant', async () => {
    const result = await replay(
      { ddb: stack.handlers.ddb, tables: stack.resources.tables, config, operator: 'e2e' },
      { consumer: 'audit-writer', window: { from: t0 - 60_000, to: Date.now() + 1 } },
    );
    expect(result).toMatchObject({ consumer: 'audit-writer', requeued: 2 });
    await stack.drain();
    const replayed = sent.filter((s) => s.replayId !== undefined);
    expect(replayed.map((s) => [s.queue, s.eventId, s.groupId]).sort()).toEqual([
      ['hookledger-audit-writer', 'evt_01J8K7F204', 'tenant_204'],
      ['hookledger-audit-writer', 'evt_01J8K7F311', 'tenant_311'],
    ]);
  });
});
