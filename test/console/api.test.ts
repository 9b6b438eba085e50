/**
 * The console's server and JSON API on a running local stack (one per file), over HTTP as the page
 * calls it: the security model (token, cookie, Origin, Host, no secret in any answer) and each view's
 * API backed by the CLI's operations, compared with what those operations answer themselves.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../bin/cli';
import { cookieName, TOKEN_HEADER } from '../../console/server';
import { formatUsageCsv, usage } from '../../ops/usage';
import { queueDepth, send } from '../support/stack';
import { type ConsoleStack, call, config, poisoned, sendAndLose, sendPoisoned, startConsoleStack, waitFor } from './support';

let env: ConsoleStack;
let t0: number;
const POISONED = 'evt_01J8K7C501';

beforeAll(async () => {
  env = await startConsoleStack();
  t0 = Date.now() - 1000;
  for (const [id, tenant] of [
    ['evt_01J8K7C101', 'tenant_204'],
    ['evt_01J8K7C102', 'tenant_311'],
    ['evt_01J8K7C103', 'tenant_204'],
  ] as const) {
    const sent = await send(env.stack, {
      id,
      type: 'payment.succeeded',
      tenant_id: tenant,
      key_id: tenant === 'tenant_204' ? 'key_42' : 'key_77',
      created: Math.floor(Date.now() / 1000),
      // A tenant may put anything in a payload, even text shaped like a signing secret.
      data: {
        amount: 4200,
        currency: 'eur',
        card_last4: '4242',
        note: id === 'evt_01J8K7C103' ? 'whsec_c2VjcmV0IGluIGEgcGF5bG9hZA' : 'ok',
      },
    });
    expect(sent.status).toBe(202);
  }
  await env.stack.drain();
  await sendPoisoned(env.stack, POISONED);
}, 60_000);
afterAll(() => env?.stop());

describe('console security model', () => {
  it('refuses every request without the token (403), page, bundle and API alike, and reads nothing', async () => {
    for (const path of ['/', '/app.js', '/api/overview', '/api/events?eventId=evt_01J8K7C101']) {
      const res = await call(env, path, { token: null });
      expect(res.status, path).toBe(403);
      expect(res.json.error).toBe('forbidden');
      expect(res.text).not.toContain('evt_01J8K7C101"');
    }
  });

  it('refuses a wrong token (403) and a token of the right length but other bytes', async () => {
    expect((await call(env, '/api/overview', { token: 'nope' })).status).toBe(403);
    const flipped = env.console.token.slice(0, -1) + (env.console.token.endsWith('A') ? 'B' : 'A');
    const res = await call(env, '/api/overview', { token: flipped });
    expect(res.status).toBe(403);
    expect(res.json.message).toMatch(/wrong console token/);
  });

  it('exchanges the printed one-time ?code= for an HttpOnly SameSite=Strict cookie, once: the same link again is refused (403, says how to get a new one), the cookie keeps working', async () => {
    // The printed link carries a one-time code, never the session token a cookie or a script presents.
    expect(env.console.url).toMatch(new RegExp(`^${env.console.origin}/\\?code=[A-Za-z0-9_-]{43}$`));
    expect(env.console.url).not.toContain(env.console.token);
    const first = await fetch(env.console.url, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/');
    const cookie = first.headers.get('set-cookie') ?? '';
    const COOKIE = cookieName(env.console.port);
    expect(COOKIE).toBe(`hookledger_console_${env.console.port}`);
    expect(cookie).toBe(`${COOKIE}=${env.console.token}; HttpOnly; SameSite=Strict; Path=/`);

    // The link from the terminal's scroll-back or the browser's history, opened again without the cookie.
    const again = await fetch(env.console.url, { redirect: 'manual' });
    expect(again.status).toBe(403);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(again.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(again.headers.get('content-security-policy')).toContain("default-src 'none'");
    const text = await again.text();
    expect(text).toContain('This console link was already used');
    expect(text).toContain('npx hookledger console');
    expect(text).not.toContain(env.console.token);

    // Another console's cookie (cookies are not scoped by port) is not this one's token.
    const other = await fetch(`${env.console.origin}/`, { headers: { cookie: `hookledger_console_1=${env.console.token}` } });
    expect(other.status).toBe(403);
    const page = await fetch(`${env.console.origin}/`, { headers: { cookie: `${COOKIE}=${env.console.token}` } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="/app.js"></script>');
    const api = await fetch(`${env.console.origin}/api/events?eventId=evt_01J8K7C101`, {
      headers: { cookie: `${COOKIE}=${env.console.token}` },
    });
    expect(api.status).toBe(200);
  });

  it('takes a used link opened again in the browser that holds its cookie straight to the console (303, no new cookie)', async () => {
    const link = env.console.newLink();
    const COOKIE = cookieName(env.console.port);
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(303);
    const again = await fetch(`${link}`, { redirect: 'manual', headers: { cookie: `${COOKIE}=${env.console.token}` } });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('/');
    expect(again.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a code this console never printed (403), and a session token put in the address bar as ?token=', async () => {
    const unknown = await fetch(`${env.console.origin}/?code=${'A'.repeat(43)}`, { redirect: 'manual' });
    expect(unknown.status).toBe(403);
    expect(await unknown.text()).toContain('This link is not one this console printed');
    const token = await fetch(`${env.console.origin}/?token=${env.console.token}`, { redirect: 'manual' });
    expect(token.status).toBe(403);
    expect(token.headers.get('set-cookie')).toBeNull();
  });

  it('hookledger console, run again on the running stack, prints a fresh one-time link: it signs in once, then is refused', async () => {
    const out: string[] = [];
    let interrupt = () => undefined as void;
    const io = {
      stdout: { write: (s: string) => out.push(String(s)) > 0 } as unknown as NodeJS.WritableStream,
      stderr: { write: () => true } as unknown as NodeJS.WritableStream,
      stdin: process.stdin,
      env: { USER: 'ops', HOOKLEDGER_STATE: env.stateFile },
      interrupted: new Promise<void>((resolve) => {
        interrupt = resolve;
      }),
    };
    const served = main(['console'], io, config);
    await waitFor('hookledger console to print its URL', async () => out.join('').includes('console URL'));
    const link = /console URL\s+(\S+)/.exec(out.join(''))![1]!;
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?code=[A-Za-z0-9_-]{43}$/);
    expect(link).not.toBe(env.console.url);
    const origin = new URL(link).origin;
    const first = await fetch(link, { redirect: 'manual' });
    expect(first.status).toBe(303);
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(cookie).toMatch(/^hookledger_console_\d+=[A-Za-z0-9_-]{43}$/);
    const again = await fetch(link, { redirect: 'manual' });
    expect(again.status).toBe(403);
    expect(await again.text()).toContain('This console link was already used');
    const overview = await fetch(`${origin}/api/events?eventId=evt_01J8K7C102`, { headers: { cookie } });
    expect(overview.status).toBe(200);
    expect(((await overview.json()) as { rows: unknown[] }).rows[0]).toMatchObject({ eventId: 'evt_01J8K7C102', tenantId: 'tenant_311' });
    interrupt();
    expect(await served).toBe(0);
  });

  it('refuses a state-changing POST from another Origin, or with none, even with the token (403): audit-writer stays running', async () => {
    const foreign = await call(env, '/api/consumers/pause', { body: { consumer: 'audit-writer' }, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.json.error).toBe('forbidden_origin');
    const none = await call(env, '/api/consumers/pause', { body: { consumer: 'audit-writer' }, origin: null });
    expect(none.status).toBe(403);
    const noToken = await call(env, '/api/consumers/pause', { body: { consumer: 'audit-writer' }, token: null });
    expect(noToken.status).toBe(403);
    expect(env.stack.paused()).toEqual([]);
  });

  it('refuses a request naming another Host (DNS rebinding) with the right token (403)', async () => {
    // fetch never lets a page choose Host; a rebinding attack's request names the attacker's host.
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: env.console.port,
          path: '/api/overview',
          headers: { host: `rebind.example:${env.console.port}`, [TOKEN_HEADER]: env.console.token },
        },
        (r) => {
          let body = '';
          r.on('data', (c) => (body += c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error).toBe('forbidden_host');
  });

  it('withholds a payload value shaped like a signing secret from the Event API', async () => {
    const res = await call(env, '/api/event?eventId=evt_01J8K7C103');
    expect(res.status).toBe(200);
    expect(res.json.payload.json.data.note).toBe('[withheld]');
    expect(res.text).not.toContain('whsec_');
  });
});

describe('console API on the local stack', () => {
  it("Events: finds one event by id, a tenant's events in a window, and the quarantined ones, paged", async () => {
    const byId = await call(env, '/api/events?eventId=evt_01J8K7C102');
    expect(byId.json).toMatchObject({
      total: 1,
      rows: [{ eventId: 'evt_01J8K7C102', tenantId: 'tenant_311', source: 'platform', eventType: 'payment.succeeded' }],
    });
    expect(byId.json.rows[0].deliveries).toEqual({ 'billing-meter': 'done', 'audit-writer': 'done', 'risk-evaluator': 'done' });

    const tenant = await call(env, `/api/events?tenant=tenant_204&from=${new Date(t0).toISOString()}&limit=2`);
    expect(tenant.json.total).toBe(3);
    expect(tenant.json.rows.map((r: { eventId: string }) => r.eventId)).toEqual([POISONED, 'evt_01J8K7C103']);
    expect(tenant.json.next).toBe(2);
    const second = await call(env, `/api/events?tenant=tenant_204&from=${new Date(t0).toISOString()}&limit=2&cursor=2`);
    expect(second.json.rows.map((r: { eventId: string }) => r.eventId)).toEqual(['evt_01J8K7C101']);
    expect(second.json.next).toBeUndefined();

    const quarantined = await call(env, '/api/events?state=quarantined&consumer=risk-evaluator');
    expect(quarantined.json.rows.map((r: { eventId: string }) => r.eventId)).toEqual([POISONED]);
    expect((await call(env, '/api/events?state=lost')).status).toBe(400);
  });

  it('Events: finds by intake outcome the event whose id a second request reused with other bytes (duplicate_conflict)', async () => {
    const resent = await send(env.stack, {
      id: 'evt_01J8K7C102',
      type: 'payment.succeeded',
      tenant_id: 'tenant_311',
      key_id: 'key_77',
      created: Math.floor(Date.now() / 1000),
      data: { amount: 9999, currency: 'eur' },
    });
    expect(resent).toEqual({ status: 200, body: { status: 'duplicate_conflict', event_id: 'evt_01J8K7C102' } });
    const conflicted = await call(env, `/api/events?outcome=duplicate_conflict&from=${new Date(t0).toISOString()}`);
    expect(conflicted.json.rows.map((r: { eventId: string }) => r.eventId)).toEqual(['evt_01J8K7C102']);
    expect(conflicted.json.total).toBe(1);
    expect((await call(env, `/api/events?outcome=recorded&from=${new Date(t0).toISOString()}`)).json.total).toBe(4);
    expect((await call(env, '/api/events?outcome=refused')).status).toBe(400);
  });

  it('Event: the trace says why risk-evaluator quarantined the poisoned event, which secret verified it, and its payload', async () => {
    const res = await call(env, `/api/event?eventId=${POISONED}`);
    expect(res.status).toBe(200);
    expect(res.json.receipt).toMatchObject({ eventId: POISONED, tenantId: 'tenant_204', secretVersion: 'current', payload: 'present' });
    expect(res.json.receipt.payloadHash).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    const risk = res.json.deliveries.find((d: { consumer: string }) => d.consumer === 'risk-evaluator');
    expect(risk).toMatchObject({ state: 'quarantined', attempts: 1, lastErrorCategory: 'model_input_invalid' });
    expect(risk.errors[0].message).toBe(`risk model v7 cannot score ${POISONED}: card_last4 missing`);
    const billing = res.json.deliveries.find((d: { consumer: string }) => d.consumer === 'billing-meter');
    expect(billing).toMatchObject({ state: 'done', units: 5, tenantId: 'tenant_204' });
    expect(billing.principal).toBeTruthy();
    expect(res.json.payload.json).toMatchObject({ id: POISONED, data: { amount: 4200 } });
    expect((await call(env, '/api/event?eventId=evt_01J8K7NOPE')).status).toBe(404);
  });

  it('Event: Replay audit-writer counts one delivery on a dry run, then requeues it once', async () => {
    const plan = await call(env, '/api/event/replay', { body: { eventId: 'evt_01J8K7C101', consumer: 'audit-writer', dryRun: true } });
    expect(plan.json).toMatchObject({ matched: 1, dryRun: true, requeued: 0, byState: { done: 1 } });
    const done = await call(env, '/api/event/replay', { body: { eventId: 'evt_01J8K7C101', consumer: 'audit-writer' } });
    expect(done.json).toMatchObject({ matched: 1, dryRun: false, requeued: 1 });
    expect(done.json.replayId).toMatch(/^rpl_/);
    await env.stack.drain();
    const trace = await call(env, '/api/event?eventId=evt_01J8K7C101');
    const audit = trace.json.deliveries.find((d: { consumer: string }) => d.consumer === 'audit-writer');
    expect(audit.replays.map((r: { replayId: string }) => r.replayId)).toEqual([done.json.replayId]);
  });

  it('Consumers: counts per state and DLQ depth; Redrive risk-evaluator counts 1, moves 1, and the event completes', async () => {
    const before = await call(env, '/api/consumers');
    const risk = before.json.consumers.find((c: { consumer: string }) => c.consumer === 'risk-evaluator');
    expect(risk).toMatchObject({ quarantined: 1, done: 3, paused: false, dlq: { visible: 1, inFlight: 0 } });

    const plan = await call(env, '/api/consumers/redrive', { body: { consumer: 'risk-evaluator', dryRun: true } });
    expect(plan.json).toEqual({ consumer: 'risk-evaluator', dryRun: true, toMove: 1, inFlight: 0 });
    poisoned.delete(POISONED); // the fix ships
    const moved = await call(env, '/api/consumers/redrive', { body: { consumer: 'risk-evaluator' } });
    expect(moved.json).toMatchObject({ consumer: 'risk-evaluator', moved: 1, toMove: 1, method: 'receive-send-delete' });
    await env.stack.drain();
    expect(await queueDepth(env.stack, env.stack.resources.queues['risk-evaluator']!.dlqUrl)).toBe(0);
    const after = await call(env, '/api/consumers');
    expect(after.json.consumers.find((c: { consumer: string }) => c.consumer === 'risk-evaluator')).toMatchObject({
      quarantined: 0,
      done: 4,
    });
  });

  it('Consumers: Pause audit-writer and Resume audit-writer flip the running stack and show in the counts', async () => {
    const paused = await call(env, '/api/consumers/pause', { body: { consumer: 'audit-writer' } });
    expect(paused.json).toEqual({ consumer: 'audit-writer', paused: true });
    expect(env.stack.paused()).toEqual(['audit-writer']);
    const shown = await call(env, '/api/consumers');
    expect(shown.json.consumers.find((c: { consumer: string }) => c.consumer === 'audit-writer').paused).toBe(true);
    expect((await call(env, '/api/consumers/resume', { body: { consumer: 'audit-writer' } })).json).toEqual({
      consumer: 'audit-writer',
      paused: false,
    });
    expect(env.stack.paused()).toEqual([]);
    expect((await call(env, '/api/consumers/pause', { body: { consumer: 'nobody' } })).status).toBe(400);
  });

  it("Usage: tenant × consumer for a window, and Download CSV is the CLI's CSV byte for byte", async () => {
    const from = new Date(t0).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const json = await call(env, `/api/usage?from=${from}&to=${to}&tenant=tenant_204`);
    expect(json.json.rows).toEqual([
      { tenantId: 'tenant_204', consumerId: 'audit-writer', units: 3, deliveries: 3 },
      { tenantId: 'tenant_204', consumerId: 'billing-meter', units: 15, deliveries: 3 },
      { tenantId: 'tenant_204', consumerId: 'risk-evaluator', units: 3, deliveries: 3 },
    ]);
    const csv = await call(env, `/api/usage.csv?from=${from}&to=${to}&tenant=tenant_204`);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="usage-tenant_204-\d{4}-\d{2}-\d{2}\.csv"$/);
    const cli = formatUsageCsv(
      await usage(
        { ddb: env.stack.handlers.ddb, tables: env.stack.resources.tables },
        { from: Date.parse(from), to: Date.parse(to), tenant: 'tenant_204' },
      ),
    );
    expect(csv.text).toBe(cli);
    expect(csv.text.split('\r\n')[0]).toBe('window_from,window_to,tenant_id,consumer_id,units,deliveries');
  });

  it('Reconcile: lists the lost deliveries by id; Repair counts 2 on a dry run, re-queues 2, and the window is clean', async () => {
    const from = new Date(Date.now() - 1000).toISOString();
    await sendAndLose(env.stack, 'audit-writer', [
      { id: 'evt_01J8K7C701', type: 'customer.updated', tenant: 'tenant_311' },
      { id: 'evt_01J8K7C702', type: 'customer.updated', tenant: 'tenant_311' },
    ]);
    const found = await call(env, `/api/reconcile?from=${from}&grace=0`);
    expect(
      found.json.violations.map((v: { kind: string; eventId: string; consumerId: string }) => [v.kind, v.eventId, v.consumerId]),
    ).toEqual([
      ['missing_delivery', 'evt_01J8K7C701', 'audit-writer'],
      ['missing_delivery', 'evt_01J8K7C702', 'audit-writer'],
    ]);
    const plan = await call(env, '/api/reconcile/repair', { body: { from, grace: '0', dryRun: true } });
    expect(plan.json).toMatchObject({ dryRun: true, repaired: 2, unrepaired: 0 });
    const done = await call(env, '/api/reconcile/repair', { body: { from, grace: '0' } });
    expect(done.json).toMatchObject({ dryRun: false, repaired: 2 });
    expect(done.json.repairId).toBeTruthy();
    await env.stack.drain();
    expect((await call(env, `/api/reconcile?from=${from}&grace=0`)).json.violations).toEqual([]);
  }, 30_000);

  it('Sources: events by the secret that verified them, rotation state and intake outcomes, never a value', async () => {
    const before = await call(env, '/api/sources');
    expect(before.json.sources[0]).toMatchObject({
      source: 'platform',
      scheme: 'standard-webhooks',
      bySecretVersion: { current: 6 },
      rotation: { source: 'platform', hasPrevious: false },
    });
    expect(before.json.outcomes).toMatchObject({ recorded: 6 });
    await env.stack.secrets.rotate('platform', 3_600_000);
    const after = await call(env, '/api/sources');
    const rotation = after.json.sources[0].rotation;
    expect(rotation.hasPrevious).toBe(true);
    expect(rotation.previousUntil).toBeGreaterThan(Date.now() + 3_500_000);
    expect(after.text).not.toMatch(/whsec_/);
  });

  it('never sends a signing secret: no response of this file held whsec_', () => {
    expect(env.seen.length).toBeGreaterThan(25);
    expect(env.seen.filter((text) => text.includes('whsec_'))).toEqual([]);
  });
});
