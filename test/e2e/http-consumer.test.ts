/**
 * An HTTP destination consumer on the local stack: the shared worker POSTs each delivery to a local
 * receiver that verifies it with the `standardwebhooks` library, under the delivery protocol of
 * every consumer (claim with fencing, one ledger row, retries, quarantine, pause/resume).
 */

import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import { breakerKey } from '../../core/model';
import defaultConfig from '../../hookledger.config';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { runCli } from '../support/cli';
import { platformEvent } from '../support/factories';
import { bodyOf, crmSyncConsumer, headerOf, verifiedWith } from '../support/receiver';
import { ledgerRows, queueDepth, send, startTestStack } from '../support/stack';
import { waitFor } from '../support/wait';

interface Received {
  readonly eventId: string;
  readonly webhookId: string;
  readonly verified: boolean;
  readonly payload: Record<string, unknown>;
  readonly at: number;
  readonly attempt: string | undefined;
  /** How many v1 signatures the webhook-signature header carried. */
  readonly signatures: number;
}

/** Statuses the receiver answers per event id, in order; then 200. `down` answers 503 to everything. */
const script = new Map<string, { status: number; headers?: Record<string, string> }[]>();
const received: Received[] = [];
let down = false;
let secret = '';
/** Secrets the receiver accepts (its own copy, as the team running it would keep it). */
let secrets: string[] = [];
let receiver: Server;
let stack: LocalStack;
let config: HookledgerConfig;
let statePath: string;

/** `npx hookledger <argv>` in-process against this stack's state file. */
function cli(argv: string[]) {
  return runCli(argv, config, { USER: 'e2e', HOOKLEDGER_STATE: statePath });
}

beforeAll(async () => {
  receiver = createServer(async (req, res) => {
    const body = await bodyOf(req);
    // Verified with any one of the receiver's secrets (during a rotation it may hold old or new).
    const verified = verifiedWith(secrets, body, req.headers);
    const payload = JSON.parse(body) as Record<string, unknown>;
    const eventId = String(payload.id);
    received.push({
      eventId,
      webhookId: headerOf(req.headers, 'webhook-id'),
      verified,
      payload,
      at: Date.now(),
      attempt: req.headers['hookledger-attempt'] as string,
      signatures: headerOf(req.headers, 'webhook-signature').split(' ').length,
    });
    if (!verified) {
      res.writeHead(401).end();
      return;
    }
    const next = down ? { status: 503 } : (script.get(eventId)?.shift() ?? { status: 200, headers: { 'hookledger-units': '3' } });
    res.writeHead(next.status, next.headers ?? {}).end('ok');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/hookledger`;
  config = defineConfig({
    sources: defaultConfig.sources,
    consumers: [crmSyncConsumer(url)],
  });
  stack = await startTestStack({ config });
  statePath = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-http-')), 'state.json');
  await writeState(statePath, stackState(stack, null));
  // What the team running the receiver does: `npx hookledger secrets get crm-sync --json`.
  const got = await cli(['secrets', 'get', 'crm-sync', '--json']);
  expect(got.code).toBe(0);
  secret = (JSON.parse(got.stdout) as { current: string }).current;
  secrets = [secret];
});
afterAll(async () => {
  await stack?.stop();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

const rowOf = async (eventId: string) => (await ledgerRows(stack)).find((r) => r.eventId === eventId && r.consumerId === 'crm-sync');

describe('http consumer crm-sync on the local stack', () => {
  it('prints the signing secret with `secrets get --json` as { current: whsec_... }, the same value the worker signs with', async () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(secret).toBe((await stack.secrets.consumerSecrets().get('crm-sync')).current);
    expect((await cli(['secrets', 'get', 'billing-meter', '--json'])).code).toBe(2);
  });

  it('POSTs the narrowed payload signed with its own secret; webhook-id is the ledger key; units from the response header', async () => {
    expect(secret).toMatch(/^whsec_/);
    const res = await send(stack, platformEvent({ id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204' }));
    expect(res).toEqual({ status: 202, body: { event_id: 'evt_01J8K7M2Q4', deliveries: 1 } });
    await stack.drain();
    const got = received.filter((r) => r.eventId === 'evt_01J8K7M2Q4');
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ verified: true, webhookId: 'platform:evt_01J8K7M2Q4#crm-sync', attempt: '1' });
    // Only the consumer's fields: card_last4 and currency never leave.
    expect(got[0]?.payload).toEqual({ id: 'evt_01J8K7M2Q4', type: 'payment.succeeded', tenant_id: 'tenant_204', data: { amount: 4200 } });
    const row = await rowOf('evt_01J8K7M2Q4');
    expect(row).toMatchObject({ state: 'done', units: 3, tenantId: 'tenant_204', outcome: 'http_200', ackAttempt: 1 });
    expect(row?.principal).toBe('arn:aws:iam::000000000000:role/hookledger-local-crm-sync');
  });

  it('retries a 500 and then a 429 (waiting out its Retry-After) and acknowledges once: one ledger row, 3 units', async () => {
    script.set('evt_01J8K7H500', [{ status: 500 }, { status: 429, headers: { 'retry-after': '3' } }]);
    await send(stack, platformEvent({ id: 'evt_01J8K7H500', tenant_id: 'tenant_311', key_id: 'key_77' }));
    await stack.drain({ timeoutMs: 30_000 });
    const got = received.filter((r) => r.eventId === 'evt_01J8K7H500');
    expect(got.map((r) => [r.webhookId, r.verified, r.attempt])).toEqual([
      ['platform:evt_01J8K7H500#crm-sync', true, '1'],
      ['platform:evt_01J8K7H500#crm-sync', true, '2'],
      ['platform:evt_01J8K7H500#crm-sync', true, '3'],
    ]);
    // The backoff after attempt 2 would be 2 s; the destination asked for 3 s.
    expect(got[2]!.at - got[1]!.at).toBeGreaterThanOrEqual(2900);
    const rows = (await ledgerRows(stack)).filter((r) => r.eventId === 'evt_01J8K7H500');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ state: 'done', units: 3, tenantId: 'tenant_311', attempt: 3, ackAttempt: 3 });
    expect(rows[0]?.errors?.map((e) => e.category)).toEqual(['http_500', 'http_429']);
  });

  it('quarantines a 410 at once: one request, quarantined row without units, the message in its DLQ', async () => {
    script.set('evt_01J8K7H410', [{ status: 410 }]);
    await send(stack, platformEvent({ id: 'evt_01J8K7H410', tenant_id: 'tenant_204' }));
    await stack.drain();
    expect(received.filter((r) => r.eventId === 'evt_01J8K7H410')).toHaveLength(1);
    const row = await rowOf('evt_01J8K7H410');
    expect(row).toMatchObject({ state: 'quarantined', lastErrorCategory: 'http_410', attempt: 1 });
    expect(row?.units).toBeUndefined();
    expect(await queueDepth(stack, stack.resources.queues['crm-sync']!.dlqUrl)).toBe(1);
  });

  it('after `secrets rotate crm-sync` signs with both secrets during the overlap: a receiver holding either verifies', async () => {
    const rotated = await cli(['secrets', 'rotate', 'crm-sync', '--overlap', '1h', '--json']);
    expect(rotated.code).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ source: 'crm-sync', where: 'local' });
    const fresh = (JSON.parse((await cli(['secrets', 'get', 'crm-sync', '--json'])).stdout) as { current: string }).current;
    expect(fresh).not.toBe(secret);
    for (const [id, holds] of [
      ['evt_01J8K7R0T1', [secret]],
      ['evt_01J8K7R0T2', [fresh]],
    ] as const) {
      secrets = [...holds];
      await send(stack, platformEvent({ id, tenant_id: 'tenant_204' }));
      await stack.drain();
      expect(received.filter((r) => r.eventId === id).map((r) => r.verified)).toEqual([true]);
      expect(await rowOf(id)).toMatchObject({ state: 'done', units: 3 });
    }
    // Retired: only the new secret signs; a receiver still on the old one refuses (401, retried).
    // Retired: only the new secret signs, so a receiver still holding only the old one refuses it.
    expect((await cli(['secrets', 'retire', 'crm-sync'])).code).toBe(0);
    secrets = [fresh];
    await send(stack, platformEvent({ id: 'evt_01J8K7R0T3', tenant_id: 'tenant_204' }));
    await stack.drain();
    expect(received.filter((r) => r.eventId === 'evt_01J8K7R0T3').map((r) => r.verified)).toEqual([true]);
    expect(received.find((r) => r.eventId === 'evt_01J8K7R0T3')?.signatures).toBe(1);
    expect(received.find((r) => r.eventId === 'evt_01J8K7R0T2')?.signatures).toBe(2);
    secret = fresh;
  });

  it('opens the circuit breaker after 3 consecutive failures (pausing crm-sync); resume closes it and the backlog is delivered', async () => {
    down = true;
    const ids = ['evt_01J8K7CB01', 'evt_01J8K7CB02', 'evt_01J8K7CB03', 'evt_01J8K7CB04'];
    for (const id of ids) await send(stack, platformEvent({ id, tenant_id: 'tenant_204' }));
    await waitFor('the breaker to pause crm-sync', () => (stack.paused().includes('crm-sync') ? true : undefined), 20_000);
    expect(stack.paused()).toEqual(['crm-sync']);
    const breaker = await stack.handlers.ddb.send(
      new GetCommand({ TableName: stack.resources.tables.ledger, Key: { pk: breakerKey('crm-sync') } }),
    );
    expect(breaker.Item?.failures).toBeGreaterThanOrEqual(3);
    // Pausing lets the batches already received finish (as disabling an event source mapping does):
    // pause again to wait for them (it resolves once no receive or batch is in flight).
    await stack.pause('crm-sync');
    const failedRequests = received.filter((r) => ids.includes(r.eventId)).length;
    expect(failedRequests).toBeGreaterThanOrEqual(3);
    // Then nothing more is sent while the destination is down: a sentinel event reaches crm-sync's
    // queue and waits there, and no request has gone out meanwhile.
    const sentinel = 'evt_01J8K7CB05';
    const queue = stack.resources.queues['crm-sync']!.url;
    const queued = await queueDepth(stack, queue);
    await send(stack, platformEvent({ id: sentinel, tenant_id: 'tenant_204' }));
    await waitFor(
      'the sentinel in the paused queue',
      async () => ((await queueDepth(stack, queue)) === queued + 1 ? true : undefined),
      20_000,
    );
    expect(received.filter((r) => ids.includes(r.eventId) || r.eventId === sentinel)).toHaveLength(failedRequests);

    down = false;
    expect(await cli(['resume', 'crm-sync'])).toMatchObject({ code: 0 });
    await stack.drain({ timeoutMs: 30_000 });
    expect(stack.paused()).toEqual([]);
    for (const id of [...ids, sentinel]) expect(await rowOf(id)).toMatchObject({ state: 'done', units: 3 });
    const closed = await stack.handlers.ddb.send(
      new GetCommand({ TableName: stack.resources.tables.ledger, Key: { pk: breakerKey('crm-sync') } }),
    );
    expect(closed.Item?.failures).toBe(0);
  });
});
