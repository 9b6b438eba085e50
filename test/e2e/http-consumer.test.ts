/**
 * An HTTP destination consumer on the local stack: the shared worker POSTs each delivery to a local
 * receiver that verifies it with the `standardwebhooks` library, under the delivery protocol of
 * every consumer (claim with fencing, one ledger row, retries, quarantine, pause/resume).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminPauseControl, setPaused } from '../../cli/ops/pause';
import { defineConfig } from '../../core/config/schema';
import { breakerKey } from '../../core/model';
import defaultConfig from '../../hookledger.config';
import type { LocalStack } from '../../local/stack';
import { platformEvent } from '../support/factories';
import { ledgerRows, queueDepth, send, startTestStack } from '../support/stack';
import { GetCommand } from '@aws-sdk/lib-dynamodb';

interface Received {
  readonly eventId: string;
  readonly webhookId: string;
  readonly verified: boolean;
  readonly payload: Record<string, unknown>;
  readonly at: number;
  readonly attempt: string | undefined;
}

/** Statuses the receiver answers per event id, in order; then 200. `down` answers 503 to everything. */
const script = new Map<string, { status: number; headers?: Record<string, string> }[]>();
const received: Received[] = [];
let down = false;
let secret = '';
let receiver: Server;
let stack: LocalStack;

function header(headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = true;
      try {
        new Webhook(secret).verify(body, {
          'webhook-id': header(req.headers, 'webhook-id'),
          'webhook-timestamp': header(req.headers, 'webhook-timestamp'),
          'webhook-signature': header(req.headers, 'webhook-signature'),
        });
      } catch {
        verified = false;
      }
      const payload = JSON.parse(body) as Record<string, unknown>;
      const eventId = String(payload.id);
      received.push({ eventId, webhookId: header(req.headers, 'webhook-id'), verified, payload, at: Date.now(), attempt: req.headers['hookledger-attempt'] as string });
      if (!verified) {
        res.writeHead(401).end();
        return;
      }
      const next = down ? { status: 503 } : (script.get(eventId)?.shift() ?? { status: 200, headers: { 'hookledger-units': '3' } });
      res.writeHead(next.status, next.headers ?? {}).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/hookledger`;
  const config = defineConfig({
    sources: defaultConfig.sources,
    consumers: [
      {
        id: 'crm-sync',
        kind: 'http',
        url,
        subscribes: ['payment.*'],
        fields: ['id', 'type', 'tenant_id', 'data.amount'],
        maxReceiveCount: 5,
        visibilityTimeoutSeconds: 30,
        timeoutSeconds: 5,
        http: { timeoutMs: 2000, ratePerSecond: 100, permanentStatuses: [422], breakAfterFailures: 3 },
      },
    ],
  });
  stack = await startTestStack({ config });
  secret = (await stack.secrets.consumerSecrets().get('crm-sync')).current;
});
afterAll(async () => {
  await stack?.stop();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

const rowOf = async (eventId: string) => (await ledgerRows(stack)).find((r) => r.eventId === eventId && r.consumerId === 'crm-sync');

describe('http consumer crm-sync on the local stack', () => {
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

  it('opens the circuit breaker after 3 consecutive failures (pausing crm-sync); resume closes it and the backlog is delivered', async () => {
    down = true;
    const ids = ['evt_01J8K7CB01', 'evt_01J8K7CB02', 'evt_01J8K7CB03', 'evt_01J8K7CB04'];
    for (const id of ids) await send(stack, platformEvent({ id, tenant_id: 'tenant_204' }));
    const deadline = Date.now() + 20_000;
    while (!stack.paused().includes('crm-sync') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(stack.paused()).toEqual(['crm-sync']);
    const breaker = await stack.handlers.ddb.send(new GetCommand({ TableName: stack.resources.tables.ledger, Key: { pk: breakerKey('crm-sync') } }));
    expect(breaker.Item?.failures).toBeGreaterThanOrEqual(3);
    const failedRequests = received.filter((r) => ids.includes(r.eventId)).length;
    // Paused: nothing more is sent while the destination is down.
    await new Promise((r) => setTimeout(r, 2500));
    expect(received.filter((r) => ids.includes(r.eventId)).length).toBe(failedRequests);

    down = false;
    // The way `hookledger resume crm-sync` does it: through the local stack's admin endpoint.
    expect(await setPaused(adminPauseControl(stack.adminUrl), ['crm-sync'], 'crm-sync', false)).toEqual({ consumer: 'crm-sync', paused: false });
    await stack.drain({ timeoutMs: 30_000 });
    expect(stack.paused()).toEqual([]);
    for (const id of ids) expect(await rowOf(id)).toMatchObject({ state: 'done', units: 3 });
    const closed = await stack.handlers.ddb.send(new GetCommand({ TableName: stack.resources.tables.ledger, Key: { pk: breakerKey('crm-sync') } }));
    expect(closed.Item?.failures).toBe(0);
  });
});
