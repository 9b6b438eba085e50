/**
 * Intake's edges through HTTP on the local stack (issue #37 items 1, 4 and 5): a wildcard filter
 * against a hostile field is answered at once with the delivery set decided; a 300,000-character
 * ordering key is recorded and its delivery sent in the FIFO group that key always had (the hash
 * SQS's 128-character group ids need), not answered 503 forever; a body that repeats a key is
 * refused 400 naming it, and nothing is stored under either event id.
 */
import { createHash } from 'node:crypto';
import type { ReceiveMessageCommandOutput } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageGroupOf } from '../../core/config/consumers';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import { eventKey } from '../../core/model';
import defaultConfig from '../../hookledger.config';
import type { DeliveryContext } from '../../lambdas/runtime/runtime';
import type { LocalStack } from '../../local/stack';
import { platformEvent, signedHeaders } from '../support/factories';
import { ledgerRows, send, startTestStack } from '../support/stack';

let stack: LocalStack;
let config: HookledgerConfig;
/** Every FIFO message the pollers received: `consumer event-id` -> its MessageGroupId. */
const groups = new Map<string, string>();

const handled = (consumer: string) => async (delivery: DeliveryContext) => {
  expect(delivery.consumerId).toBe(consumer);
  return { units: 1 };
};

beforeAll(async () => {
  config = defineConfig({
    sources: defaultConfig.sources,
    consumers: [
      { id: 'everything', subscribes: ['payment.*'], fields: ['id'], entry: 'lambdas/consumers/audit-writer.ts' },
      {
        id: 'example-mail',
        subscribes: ['payment.*'],
        fields: ['id'],
        entry: 'lambdas/consumers/audit-writer.ts',
        filter: { body: { data: { email: [{ wildcard: '*@*.example.com' }] } } },
      },
      ...['account-sync', 'account-audit'].map((id) => ({
        id,
        subscribes: ['account.*'],
        fields: ['id'],
        entry: 'lambdas/consumers/audit-writer.ts',
        ordering: { key: { body: 'data.account' } },
      })),
    ],
  });
  stack = await startTestStack({
    config,
    handles: Object.fromEntries(['everything', 'example-mail', 'account-sync', 'account-audit'].map((id) => [id, handled(id)])),
  });
  // The group as SQS hands it to the poller: what the fan-out sent, not what a test recomputes.
  stack.pollerSqs.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName === 'ReceiveMessageCommand') {
        for (const m of (result.output as ReceiveMessageCommandOutput).Messages ?? []) {
          const group = m.Attributes?.MessageGroupId;
          const { consumerId, eventId } = JSON.parse(m.Body ?? '{}') as { consumerId: string; eventId: string };
          if (group !== undefined) groups.set(`${consumerId} ${eventId}`, group);
        }
      }
      return result;
    },
    { step: 'initialize', name: 'recordMessageGroups' },
  );
}, 60_000);
afterAll(() => stack?.stop());

const receipt = async (eventId: string) =>
  (await stack.handlers.ddb.send(new GetCommand({ TableName: stack.resources.tables.events, Key: { pk: eventKey('platform', eventId) } })))
    .Item;

async function sendRaw(text: string, msgId: string) {
  const secret = (await stack.secrets.get('platform')).current;
  const res = await fetch(stack.webhookUrl('platform'), {
    method: 'POST',
    headers: signedHeaders(text, { secret, at: Date.now(), msgId }),
    body: text,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const deliveredTo = async (eventId: string) =>
  (await ledgerRows(stack))
    .filter((r) => r.eventId === eventId && r.state === 'done')
    .map((r) => r.consumerId)
    .sort();

describe('a consumer filtered on body.data.email with the wildcard *@*.example.com', () => {
  it('answers a body whose data.email is 80,000 "@" with 202 in under 3 s (it took 12.75 s), and delivers it to everything alone', async () => {
    // The matching event first: the stack's first write warms DynamoDB Local, not part of the match.
    const matching = await send(stack, platformEvent({ id: 'evt_01J8K7W1OK', data: { email: 'ops@billing.example.com' } }));
    expect(matching).toEqual({ status: 202, body: { event_id: 'evt_01J8K7W1OK', deliveries: 2 } });
    const started = performance.now();
    const hostile = await send(stack, platformEvent({ id: 'evt_01J8K7W1AT', data: { email: '@'.repeat(80_000) } }));
    const elapsed = performance.now() - started;
    expect(hostile).toEqual({ status: 202, body: { event_id: 'evt_01J8K7W1AT', deliveries: 1 } });
    expect(elapsed).toBeLessThan(3000);
    await stack.drain();
    expect((await receipt('evt_01J8K7W1AT'))?.consumers).toEqual(['everything']);
    expect((await receipt('evt_01J8K7W1OK'))?.consumers).toEqual(['everything', 'example-mail']);
    expect(await deliveredTo('evt_01J8K7W1AT')).toEqual(['everything']);
    expect(await deliveredTo('evt_01J8K7W1OK')).toEqual(['everything', 'example-mail']);
  }, 60_000);
});

describe('two ordered consumers keyed on body.data.account', () => {
  const longKey = `acct_${'7'.repeat(300_000)}`;
  const hashedGroup = `h-${createHash('sha256').update(longKey).digest('hex')}`;
  const ordered = ['account-audit', 'account-sync'];

  it('record two events whose key is 300,005 characters (202, not 503) and send both in the FIFO group h-<sha256 of the key>', async () => {
    for (const id of ['evt_01J8K7W4K1', 'evt_01J8K7W4K2']) {
      const res = await send(stack, platformEvent({ id, type: 'account.updated', data: { account: longKey } }));
      expect(res).toEqual({ status: 202, body: { event_id: id, deliveries: 2 } });
    }
    const short = await send(stack, platformEvent({ id: 'evt_01J8K7W4K3', type: 'account.updated', data: { account: 'acct_204' } }));
    expect(short).toEqual({ status: 202, body: { event_id: 'evt_01J8K7W4K3', deliveries: 2 } });
    await stack.drain();
    // The group is the one the unbounded key always mapped to (core/config/consumers.ts messageGroupOf).
    expect(messageGroupOf(longKey)).toBe(hashedGroup);
    for (const consumer of ordered) {
      expect(groups.get(`${consumer} evt_01J8K7W4K1`)).toBe(hashedGroup);
      expect(groups.get(`${consumer} evt_01J8K7W4K2`)).toBe(hashedGroup);
      expect(groups.get(`${consumer} evt_01J8K7W4K3`)).toBe('acct_204');
    }
    // The receipt keeps the group, not 300 KB of key per ordered consumer.
    expect((await receipt('evt_01J8K7W4K1'))?.orderingKeys).toEqual({ 'account-sync': hashedGroup, 'account-audit': hashedGroup });
    expect((await receipt('evt_01J8K7W4K3'))?.orderingKeys).toEqual({ 'account-sync': 'acct_204', 'account-audit': 'acct_204' });
    for (const id of ['evt_01J8K7W4K1', 'evt_01J8K7W4K2', 'evt_01J8K7W4K3']) expect(await deliveredTo(id)).toEqual(ordered);
  }, 60_000);
});

describe('a JSON body that repeats a key', () => {
  it('is refused 400 duplicate_key naming "id", and neither evt_01J8K7W5D1 nor evt_01J8K7W5D2 is stored', async () => {
    const text =
      '{"id":"evt_01J8K7W5D1","type":"payment.succeeded","tenant_id":"tenant_204","key_id":"key_42","data":{"email":"a@b.example.com"},"id":"evt_01J8K7W5D2"}';
    const res = await sendRaw(text, 'msg_01J8K7W5D1');
    expect(res).toEqual({
      status: 400,
      body: {
        error: 'duplicate_key',
        message:
          'body repeats the key "id" (at body.id); each key may appear once in an object, so that every parser reads the same value from the signed bytes',
      },
    });
    const nested = await sendRaw(
      '{"id":"evt_01J8K7W5D3","type":"account.updated","tenant_id":"tenant_204","key_id":"key_42","data":{"account":"acct_1","account":"acct_2"}}',
      'msg_01J8K7W5D3',
    );
    expect(nested).toMatchObject({ status: 400, body: { error: 'duplicate_key' } });
    expect(String(nested.body.message)).toContain('"account" (at body.data.account)');
    expect(await receipt('evt_01J8K7W5D1')).toBeUndefined();
    expect(await receipt('evt_01J8K7W5D2')).toBeUndefined();
    expect(await receipt('evt_01J8K7W5D3')).toBeUndefined();
    expect(stack.intakeOutcomes().duplicate_key).toBe(2);
  });
});
