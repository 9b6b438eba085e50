/**
 * A PermanentError of an ordered (FIFO) consumer on the local stack: its DLQ is FIFO too, so the
 * runtime's own send to it must carry the message's group and a deduplication id. Without them SQS
 * refuses the send, the handler (or an HTTP destination answering 410) runs again on every receive
 * until maxReceiveCount, and the key's group stays blocked meanwhile. Quarantined at once instead:
 * one attempt, one DLQ message in the key's group, and the next event of the same key delivered.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import defaultConfig from '../../hookledger.config';
import { PermanentError } from '../../lambdas/runtime/errors';
import type { DeliveryContext } from '../../lambdas/runtime/runtime';
import type { LocalStack } from '../../local/stack';
import { platformEvent } from '../support/factories';
import { ledgerRows, queueDepth, send, startTestStack } from '../support/stack';

const POISON = 'evt_01J8K7Q001';
const NEXT = 'evt_01J8K7Q002';
/** Calls of ledger-sync's handle per event id, in order. */
const handled: string[] = [];
/** POSTs the crm-ordered destination received per event id, in order. */
const posted: string[] = [];
let receiver: Server;
let stack: LocalStack;
let config: HookledgerConfig;

async function handle(delivery: DeliveryContext) {
  handled.push(delivery.attribution.eventId);
  if (delivery.attribution.eventId === POISON) throw new PermanentError('ledger entry refers to a closed account', 'account_closed');
  return { units: 1 };
}

/** The DLQ's messages, received (and left there: they come back after the short visibility). */
async function dlqMessages(url: string): Promise<Message[]> {
  const got = await stack.handlers.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 1,
      VisibilityTimeout: 1,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  return got.Messages ?? [];
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const eventId = String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown }).id);
      posted.push(eventId);
      res.writeHead(eventId === POISON ? 410 : 200, { 'hookledger-units': '2' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/hookledger`;
  const ordered = {
    subscribes: ['*'],
    fields: ['id', 'data.account', 'data.seq'],
    ordering: { key: { body: 'data.account' } },
    maxReceiveCount: 3,
    visibilityTimeoutSeconds: 6,
    timeoutSeconds: 1,
    batchSize: 10,
  };
  config = defineConfig({
    sources: defaultConfig.sources,
    consumers: [
      { id: 'ledger-sync', entry: 'lambdas/consumers/audit-writer.ts', ...ordered },
      { id: 'crm-ordered', kind: 'http', url, http: { timeoutMs: 900 }, ...ordered },
    ],
  });
  stack = await startTestStack({ config, handles: { 'ledger-sync': handle } });
  // The poison event, then the next event of the same key (acct_9).
  for (const [id, seq] of [
    [POISON, 1],
    [NEXT, 2],
  ] as const) {
    const res = await send(stack, platformEvent({ id, tenant_id: 'tenant_204', data: { account: 'acct_9', seq } }));
    expect(res.status).toBe(202);
  }
  await stack.drain({ timeoutMs: 60_000 });
});
afterAll(async () => {
  await stack?.stop();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

describe("an ordered consumer's PermanentError reaches its FIFO DLQ at once", () => {
  it('a handler throwing PermanentError runs once; the message is in the DLQ in its key group; the next event of the key is delivered', async () => {
    expect(handled).toEqual([POISON, NEXT]);
    const rows = (await ledgerRows(stack)).filter((r) => r.consumerId === 'ledger-sync');
    expect(rows.find((r) => r.eventId === POISON)).toMatchObject({
      state: 'quarantined',
      attempt: 1,
      lastErrorCategory: 'account_closed',
      tenantId: 'tenant_204',
    });
    expect(rows.find((r) => r.eventId === POISON)?.errors?.map((e) => [e.category, e.attempt])).toEqual([['account_closed', 1]]);
    expect(rows.find((r) => r.eventId === NEXT)).toMatchObject({ state: 'done', units: 1, ackAttempt: 1 });
    const dlqUrl = stack.resources.queues['ledger-sync']!.dlqUrl;
    expect(dlqUrl).toMatch(/\.fifo$/);
    expect(await queueDepth(stack, stack.resources.queues['ledger-sync']!.url)).toBe(0);
    const dlq = await dlqMessages(dlqUrl);
    expect(dlq).toHaveLength(1);
    expect(JSON.parse(dlq[0]!.Body!)).toMatchObject({ eventId: POISON, consumerId: 'ledger-sync', orderingKey: 'acct_9' });
    expect(dlq[0]!.Attributes?.MessageGroupId).toBe('acct_9');
    expect(dlq[0]!.MessageAttributes?.quarantineReason?.StringValue).toBe('account_closed');
    expect(dlq[0]!.MessageAttributes?.attempt?.StringValue).toBe('1');
  });

  it('an HTTP destination answering 410 is POSTed once; the DLQ holds it in its key group; the next event of the key is POSTed', async () => {
    expect(posted).toEqual([POISON, NEXT]);
    const rows = (await ledgerRows(stack)).filter((r) => r.consumerId === 'crm-ordered');
    expect(rows.find((r) => r.eventId === POISON)).toMatchObject({ state: 'quarantined', attempt: 1, lastErrorCategory: 'http_410' });
    expect(rows.find((r) => r.eventId === POISON)?.units).toBeUndefined();
    expect(rows.find((r) => r.eventId === NEXT)).toMatchObject({ state: 'done', units: 2, outcome: 'http_200', ackAttempt: 1 });
    const dlq = await dlqMessages(stack.resources.queues['crm-ordered']!.dlqUrl);
    expect(dlq.map((m) => [(JSON.parse(m.Body!) as { eventId: string }).eventId, m.Attributes?.MessageGroupId])).toEqual([
      [POISON, 'acct_9'],
    ]);
    expect(dlq[0]!.MessageAttributes?.quarantineReason?.StringValue).toBe('http_410');
  });
});
