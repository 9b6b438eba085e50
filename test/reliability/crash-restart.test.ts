/**
 * Crash and restart under load, on a file-backed pipeline: a provider sends a few hundred signed
 * events over loopback HTTP (8 at a time, about 10% of them again as duplicates, retrying every
 * non-2xx with bounded backoff). A third of the way in DynamoDB Local is SIGKILLed and started again
 * on the same port and dbPath while the gateway and the pollers keep running; two thirds of the way
 * in every poller is stopped and started again (a consumer restart). Then: nothing the provider was
 * told 2xx about is lost, nothing is billed twice, and the figures are printed.
 *
 * DynamoDB Local across a restart (observed with the bundled 3.x, file-backed): the table's stream
 * keeps its ARN, its shard and its records; sequence numbers continue where they stopped; a shard
 * iterator taken before the restart still reads after it. While the JVM is down every call fails
 * with ECONNREFUSED: intake answers 503, the stream poller retries GetRecords every second from its
 * in-memory checkpoint, and a consumer whose claim or acknowledgement fails leaves its message to
 * come back after the visibility timeout (its lease has ended by then). Consumers here use a 12 s
 * lease (visibilityTimeoutSeconds 12, timeoutSeconds 2) instead of 60-90 s so the test does not wait
 * a minute for those messages; the receive budget (4-5) covers an outage of more than 45 s.
 *
 * Size and time: HOOKLEDGER_CRASH_EVENTS (default 300).
 *
 * Then `npm start` itself (a child process in its own process group, as a terminal runs it): Ctrl-C
 * with a paused consumer's deliveries waiting, and 240 events with the whole process group SIGKILLed
 * at about 40% and started again on the same data while the sender retries. Both must end with every
 * acknowledged event's delivery set done exactly once and reconcile clean.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanAll } from '../../adapters/table-scan';
import { subscribedConsumers } from '../../core/config/routing';
import { defineConfig } from '../../core/config/schema';
import type { LedgerItem } from '../../core/model';
import baseConfig from '../../hookledger.config';
import { unitsFor } from '../../lambdas/consumers/billing-meter';
import type { ConsumerLambdaHandler } from '../../lambdas/runtime/runtime';
import { localSqsClient } from '../../local/clients';
import { freePort } from '../../local/emulators';
import type { LocalStack } from '../../local/stack';
import { readStackCredentials } from '../../local/state';
import { platformEvent, signedHeaders } from '../support/factories';
import { send, startTestStack } from '../support/stack';
import { hookledger, type NpmStart, npmStart, resumedCount, signingSecret, statePathOf } from './npm-start';
import { type FaultStack, ledgerItems, queueDepth, receipts, reconcileWindow, sleep, startFaultStack } from './support';

const EVENTS = Number(process.env.HOOKLEDGER_CRASH_EVENTS ?? 300);
const DUPLICATE_SHARE = 0.1;
const CONCURRENCY = 8;
const MAX_TRIES = 10;
const DOWNTIME_MS = 1500;

const config = defineConfig({
  ...baseConfig,
  consumers: baseConfig.consumers.map((c) => ({ ...c, visibilityTimeoutSeconds: 12, timeoutSeconds: 2 })),
});
const TYPES = ['payment.succeeded', 'payment.failed', 'scoped_key.revoked', 'invoice.paid', 'customer.updated'];
const TENANTS = [
  ['tenant_204', 'key_42'],
  ['tenant_311', 'key_77'],
] as const;

/** Deterministic pseudo-random numbers (mulberry32), so every run sends the same load. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Job {
  readonly eventId: string;
  readonly body: string;
  readonly msgId: string;
}

let stack: FaultStack;
let dataDir: string;
/** Messages each (event, consumer) delivery arrived in, by message id (fan-out copies, not receives). */
const messagesByDelivery = new Map<string, Set<string>>();
let redeliveries = 0;

const countingWrapper =
  (consumerId: string, inner: ConsumerLambdaHandler): ConsumerLambdaHandler =>
  async (event, context) => {
    for (const record of event.Records) {
      const { eventId } = JSON.parse(record.body) as { eventId: string };
      const key = `${eventId}#${consumerId}`;
      messagesByDelivery.set(key, (messagesByDelivery.get(key) ?? new Set()).add(record.messageId));
      if (Number(record.attributes.ApproximateReceiveCount) > 1) redeliveries++;
    }
    return inner(event, context);
  };

/** What the pollers logged, by message (ids stripped). */
function pollerKinds(): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const line of stack.pollerLog) {
    const kind = line.replace(/ \{.*$/, '');
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return kinds;
}

describe('crash and restart under load (file-backed)', () => {
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'hookledger-crash-'));
    stack = await startFaultStack({ config, dataDir, wrapConsumer: countingWrapper, backoffBaseMs: 500 });
  });
  afterAll(async () => {
    await stack?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses no acknowledged event and bills none twice across a storage kill and a consumer restart', async () => {
    const rand = random(204_311);
    const unique: (Job & { type: string; tenant: string })[] = Array.from({ length: EVENTS }, (_, n) => {
      const [tenant, key] = TENANTS[n % 2]!;
      const type = TYPES[Math.floor(rand() * TYPES.length)]!;
      const eventId = `evt_crash_${n}`;
      const body = JSON.stringify({
        id: eventId,
        type,
        tenant_id: tenant,
        key_id: key,
        created: Math.floor(Date.now() / 1000),
        data: { amount: 1000 + n, currency: 'eur', card_last4: '4242' },
      });
      return { eventId, body, msgId: `msg_crash_${n}`, type, tenant };
    });
    // Duplicates: the provider sends an event again (a new message id) some time after the first.
    const jobs: Job[] = [...unique];
    for (let d = 0; d < Math.round(EVENTS * DUPLICATE_SHARE); d++) {
      const original = unique[Math.floor(rand() * unique.length)]!;
      const at = Math.min(jobs.length, jobs.indexOf(original) + 1 + Math.floor(rand() * 40));
      jobs.splice(at, 0, { ...original, msgId: `${original.msgId}_dup${d}` });
    }

    const figures = { requests: 0, s2xx: 0, s202: 0, s200: 0, s4xx: 0, s5xx: 0, network: 0, retried: 0, gaveUp: 0 };
    const acknowledged = new Set<string>();
    const secret = (await stack.secrets.get('platform')).current;
    const url = stack.webhookUrl('platform');
    const from = Date.now();

    async function deliver(job: Job): Promise<void> {
      for (let tryNo = 1; tryNo <= MAX_TRIES; tryNo++) {
        if (tryNo > 1) {
          figures.retried++;
          await sleep(Math.min(2000, 100 * 2 ** (tryNo - 2)) + Math.floor(rand() * 50));
        }
        figures.requests++;
        let status: number;
        try {
          // A provider signs every attempt afresh (same message id, new timestamp).
          const res = await fetch(url, {
            method: 'POST',
            headers: signedHeaders(job.body, { secret, msgId: job.msgId, at: Date.now() }),
            body: job.body,
          });
          status = res.status;
          await res.arrayBuffer();
        } catch {
          figures.network++;
          continue;
        }
        if (status >= 200 && status < 300) {
          figures.s2xx++;
          if (status === 202) figures.s202++;
          if (status === 200) figures.s200++;
          acknowledged.add(job.eventId);
          return;
        }
        if (status >= 400 && status < 500) figures.s4xx++;
        if (status >= 500) figures.s5xx++;
      }
      figures.gaveUp++;
    }

    // The crashes, triggered by progress through the job list.
    let done = 0;
    const timeline: string[] = [];
    let outageMs = 0;
    let restartMs = 0;
    const storageKilled = new Promise<void>((resolve) => {
      const check = setInterval(async () => {
        if (done < jobs.length * 0.35) return;
        clearInterval(check);
        const t = Date.now();
        timeline.push(`storage killed at ${done}/${jobs.length}`);
        await stack.killDynamo();
        await sleep(DOWNTIME_MS);
        await stack.startDynamo();
        outageMs = Date.now() - t;
        timeline.push(`storage back after ${outageMs} ms at ${done}/${jobs.length}`);
        resolve();
      }, 20);
    });
    const consumersRestarted = storageKilled.then(
      () =>
        new Promise<void>((resolve) => {
          const check = setInterval(async () => {
            if (done < jobs.length * 0.65) return;
            clearInterval(check);
            const t = Date.now();
            const at = done;
            await stack.stopPipeline();
            await stack.startPipeline();
            restartMs = Date.now() - t;
            timeline.push(`pollers restarted at ${at}/${jobs.length} in ${restartMs} ms`);
            resolve();
          }, 20);
        }),
    );

    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < jobs.length) {
          const job = jobs[next++]!;
          await deliver(job);
          done++;
        }
      }),
    );
    const loadMs = Date.now() - from;
    await Promise.all([storageKilled, consumersRestarted]);
    const drainStarted = Date.now();
    await stack.drain({ timeoutMs: 180_000 });
    const drainMs = Date.now() - drainStarted;

    // --- what the provider was told versus what is there ---
    const receiptById = new Map((await receipts(stack)).map((r) => [r.eventId, r]));
    const rows = await ledgerItems(stack);
    const rowsByDelivery = new Map<string, typeof rows>();
    for (const r of rows)
      rowsByDelivery.set(`${r.eventId}#${r.consumerId}`, [...(rowsByDelivery.get(`${r.eventId}#${r.consumerId}`) ?? []), r]);
    const lost: string[] = [];
    for (const eventId of acknowledged) {
      const receipt = receiptById.get(eventId);
      if (!receipt) {
        lost.push(`${eventId}: no receipt`);
        continue;
      }
      for (const consumerId of receipt.consumers) {
        const found = rowsByDelivery.get(`${eventId}#${consumerId}`) ?? [];
        if (!found.some((r) => r.state === 'done'))
          lost.push(`${eventId}#${consumerId}: ${found.map((r) => r.state).join(',') || 'no ledger item'}`);
      }
    }
    const duplicateRows = [...rowsByDelivery.values()].filter((list) => list.length > 1).length;
    const strayRows = rows.filter((r) => !receiptById.get(r.eventId)?.consumers.includes(r.consumerId)).length;
    const expected: Record<string, number> = {};
    for (const e of unique) {
      if (!acknowledged.has(e.eventId)) continue;
      for (const consumerId of subscribedConsumers(config, e.type)) {
        expected[e.tenant] = (expected[e.tenant] ?? 0) + (consumerId === 'billing-meter' ? unitsFor(e.type) : 1);
      }
    }
    const billed: Record<string, number> = {};
    for (const r of rows) if (r.state === 'done') billed[r.tenantId] = (billed[r.tenantId] ?? 0) + (r.units ?? 0);
    const copies = [...messagesByDelivery.values()].map((s) => s.size);
    const report = await reconcileWindow(stack, { from, to: Date.now() + 1 });
    let dlq = 0;
    for (const consumer of config.consumers) dlq += await queueDepth(stack.handlers.sqs, stack.resources.queues[consumer.id]!.dlqUrl);
    const fanoutFailures = await queueDepth(stack.handlers.sqs, stack.resources.fanoutFailureQueue.url);

    console.log(
      `[crash-restart] events=${EVENTS} jobs=${jobs.length} requests=${figures.requests} 2xx=${figures.s2xx} (202=${figures.s202}, 200-duplicate=${figures.s200}) ` +
        `4xx=${figures.s4xx} 5xx=${figures.s5xx} network-errors=${figures.network} retries=${figures.retried} gave-up=${figures.gaveUp} ` +
        `acknowledged=${acknowledged.size} acknowledged-but-lost=${lost.length} duplicate-ledger-rows=${duplicateRows} stray-rows=${strayRows} ` +
        `ledger-items=${rows.length} redelivered-receives=${redeliveries} max-fanout-copies=${Math.max(0, ...copies)} dlq=${dlq} fanout-failures=${fanoutFailures} ` +
        `units=${JSON.stringify(billed)} outage=${outageMs}ms poller-restart=${restartMs}ms load=${loadMs}ms drain=${drainMs}ms ` +
        `poller-log=${JSON.stringify(pollerKinds())} | ${timeline.join('; ')}`,
    );
    if (lost.length > 0) console.log(`[crash-restart] lost: ${lost.slice(0, 20).join(' | ')}`);

    expect(timeline, 'both crashes happened during the load').toHaveLength(3);
    expect(figures.s5xx, 'the storage outage was visible to the provider').toBeGreaterThan(0);
    expect(figures.gaveUp, 'every event was acknowledged within the retry budget').toBe(0);
    expect(acknowledged.size).toBe(EVENTS);
    expect(figures.s202, 'one 202 per event').toBe(EVENTS);
    expect(figures.s4xx).toBe(0);
    expect(lost, 'acknowledged but lost').toEqual([]);
    expect(duplicateRows).toBe(0);
    expect(strayRows).toBe(0);
    expect(rows).toHaveLength([...receiptById.values()].reduce((n, r) => n + r.consumers.length, 0));
    expect(billed, 'units per tenant').toEqual(expected);
    expect(report.violations).toEqual([]);
    expect(report.receipts).toBe(EVENTS);
    expect(dlq).toBe(0);
    expect(fanoutFailures).toBe(0);
    // The stream survived the restart with its shard and sequence numbers, and the poller's iterator
    // kept working: nothing was fanned out twice, nothing skipped.
    expect(Math.max(...copies), 'fan-out copies per delivery').toBe(1);
    expect(copies).toHaveLength(rows.length);
  }, 300_000);
});

// A consumer restart of the local stack itself (local/stack.ts stopPipeline/startPipeline) must
// resume the fan-out after its checkpoint: a fresh stream poller would read the stream again from
// TRIM_HORIZON and fan every event out once more (harmless to billing, since claims find the
// deliveries done, but a quarantined delivery would be claimed and run again). Fixed in 4ed12fd.
describe('a consumer restart of the local stack (local/stack.ts)', () => {
  let local: LocalStack | undefined;
  afterAll(() => local?.stop());

  it('resumes the fan-out after its checkpoint: nothing already delivered is delivered again', async () => {
    const seen: string[] = [];
    local = await startTestStack({ onDelivery: (d) => seen.push(`${d.eventId}#${d.consumerId}`) });
    for (const id of ['evt_restart_1', 'evt_restart_2'])
      expect((await send(local, platformEvent({ id, type: 'invoice.paid' }))).status).toBe(202);
    await local.drain();
    expect(seen).toHaveLength(4);
    await local.stopPipeline();
    await local.startPipeline();
    expect((await send(local, platformEvent({ id: 'evt_restart_3', type: 'invoice.paid' }))).status).toBe(202);
    await local.drain();
    console.log(`[crash-restart] local stack pipeline restart: deliveries after restart=${seen.length - 4} (expected 2, the new event's)`);
    expect(seen.slice(4).sort()).toEqual(['evt_restart_3#audit-writer', 'evt_restart_3#billing-meter']);
  }, 60_000);
});

// --- `npm start` itself, restarted (bin/start.ts) ------------------------------------------------
// The SQS emulator keeps its messages in memory (fauxqs 1.9.2 has no persistence), so whatever
// waited in a queue is gone after Ctrl-C or a crash, while the tables remember every delivery not yet
// done. The start-up repair re-queues those; the consumers' claims make a copy that was not lost
// (a stream record fanned out again after its checkpoint) or a lease still live harmless.
describe('npm start restarted: nothing acknowledged is left undelivered', () => {
  let current: NpmStart | undefined;
  const homes: string[] = [];
  afterAll(async () => {
    current?.signal('SIGKILL');
    await current?.exited;
    current?.ddb.destroy();
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });
  const newHome = () => {
    const home = mkdtempSync(path.join(tmpdir(), 'hookledger-npm-start-'));
    homes.push(home);
    return home;
  };

  async function post(port: number, secret: string, event: { id: string; body: string }, msgId: string): Promise<number | 'network'> {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/hooks/platform`, {
        method: 'POST',
        headers: signedHeaders(event.body, { secret, msgId, at: Date.now() }),
        body: event.body,
      });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 'network';
    }
  }

  async function ledgerOf(run: NpmStart): Promise<LedgerItem[]> {
    return scanAll<LedgerItem>(run.ddb, { TableName: run.state.tables.ledger, ConsistentRead: true });
  }

  async function waitUntil(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await sleep(500);
    }
  }

  function perConsumer(rows: readonly LedgerItem[]): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of rows) if (r.state === 'done') out[r.consumerId] = (out[r.consumerId] ?? 0) + 1;
    return out;
  }

  it("a paused consumer's 5 deliveries survive Ctrl-C: after the restart and resume each is done once, reconcile clean", async () => {
    const home = newHome();
    const port = await freePort();
    current = await npmStart(home, port);
    expect((await hookledger(home, ['pause', 'risk-evaluator'])).code).toBe(0);
    const secret = await signingSecret(home);
    const ids = ['evt_01J8K7PC01', 'evt_01J8K7PC02', 'evt_01J8K7PC03', 'evt_01J8K7PC04', 'evt_01J8K7PC05'];
    for (const [n, id] of ids.entries()) {
      const body = JSON.stringify({
        id,
        type: 'payment.succeeded',
        tenant_id: 'tenant_204',
        key_id: 'key_42',
        data: { amount: 1200 + n, currency: 'eur' },
      });
      expect(await post(port, secret, { id, body }, `msg_${id}`)).toBe(202);
    }
    const first = current;
    await waitUntil('billing-meter and audit-writer done', 60_000, async () => {
      const c = perConsumer(await ledgerOf(first));
      return c['billing-meter'] === 5 && c['audit-writer'] === 5;
    });
    expect(perConsumer(await ledgerOf(first))['risk-evaluator']).toBeUndefined();

    // Ctrl-C: SIGINT to the foreground process group.
    first.signal('SIGINT');
    expect(await first.exited).toBe(0);
    first.ddb.destroy();

    const t = Date.now();
    current = await npmStart(home, port);
    const resumed = resumedCount(current.output());
    expect((await hookledger(home, ['resume', 'risk-evaluator'])).code).toBe(0);
    const second = current;
    await waitUntil(
      'all 15 deliveries done',
      120_000,
      async () => (await ledgerOf(second)).filter((r) => r.state === 'done').length === 15,
    );
    const drainMs = Date.now() - t - second.startMs;
    const rows = await ledgerOf(second);
    const check = await hookledger(home, ['reconcile', '--grace', '0s', '--from', '-1h']);
    console.log(
      `[crash-restart] npm start Ctrl-C with risk-evaluator paused: events=5 deliveries expected=15 done=${rows.filter((r) => r.state === 'done').length} ` +
        `per-consumer=${JSON.stringify(perConsumer(rows))} resumed-at-start=${resumed} restart=${second.startMs}ms drain=${drainMs}ms`,
    );
    expect(resumed).toBe(5);
    expect(perConsumer(rows)).toEqual({ 'billing-meter': 5, 'audit-writer': 5, 'risk-evaluator': 5 });
    expect(rows).toHaveLength(15);
    expect(rows.filter((r) => r.consumerId === 'risk-evaluator').map((r) => [r.eventId, r.attempt, r.units])).toEqual(
      expect.arrayContaining(ids.map((id) => [id, 1, 1])),
    );
    expect(check.stdout).toContain('ok: no violations');
    expect(check.code).toBe(0);
    second.signal('SIGINT');
    expect(await second.exited).toBe(0);
    second.ddb.destroy();
    current = undefined;
  }, 240_000);

  it('240 events, the whole process group killed at ~40% and started again, the sender retrying: every delivery done exactly once', async () => {
    const EVENTS_SENT = 240;
    const home = newHome();
    const port = await freePort();
    current = await npmStart(home, port);
    const secret = await signingSecret(home);
    const rand = random(10_240);
    const events = Array.from({ length: EVENTS_SENT }, (_, n) => {
      const [tenant, key] = TENANTS[n % 2]!;
      const type = TYPES[Math.floor(rand() * TYPES.length)]!;
      const id = `evt_01J8K7K${String(n).padStart(3, '0')}`;
      return {
        id,
        type,
        tenant,
        body: JSON.stringify({ id, type, tenant_id: tenant, key_id: key, data: { amount: 500 + n, currency: 'eur' } }),
      };
    });
    const figures = { requests: 0, s202: 0, s200: 0, s4xx: 0, s5xx: 0, network: 0, gaveUp: 0 };
    const acknowledged = new Set<string>();
    let done = 0;
    let restarted: Promise<void> | undefined;
    let killedAt = 0;
    let restartReadyAt = 0;

    const crash = async () => {
      const victim = current!;
      killedAt = done;
      victim.signal('SIGKILL');
      await victim.exited;
      victim.ddb.destroy();
      current = await npmStart(home, port);
      restartReadyAt = Date.now();
    };

    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < events.length) {
          const event = events[next++]!;
          for (let tryNo = 1; ; tryNo++) {
            if (tryNo > 30) {
              figures.gaveUp++;
              break;
            }
            if (tryNo > 1) await sleep(Math.min(2000, 100 * 2 ** (tryNo - 2)));
            figures.requests++;
            const status = await post(port, secret, event, `msg_${event.id}`);
            if (status === 'network') figures.network++;
            else if (status === 202 || status === 200) {
              figures[status === 202 ? 's202' : 's200']++;
              acknowledged.add(event.id);
              break;
            } else if (status >= 500) figures.s5xx++;
            else figures.s4xx++;
          }
          done++;
          if (!restarted && done >= EVENTS_SENT * 0.4) restarted = crash();
        }
      }),
    );
    await restarted;
    const run = current!;
    const expectedPerConsumer: Record<string, number> = {};
    const expectedUnits: Record<string, number> = {};
    for (const e of events) {
      for (const consumerId of subscribedConsumers(baseConfig, e.type)) {
        expectedPerConsumer[consumerId] = (expectedPerConsumer[consumerId] ?? 0) + 1;
        expectedUnits[e.tenant] = (expectedUnits[e.tenant] ?? 0) + (consumerId === 'billing-meter' ? unitsFor(e.type) : 1);
      }
    }
    const expectedDeliveries = Object.values(expectedPerConsumer).reduce((a, b) => a + b, 0);
    // Bounded by the consumers' leases: a delivery leased when the group died waits out its lease.
    const maxLeaseMs = Math.max(...baseConfig.consumers.map((c) => c.visibilityTimeoutSeconds)) * 1000;
    await waitUntil(
      `${expectedDeliveries} deliveries done`,
      maxLeaseMs + 120_000,
      async () => (await ledgerOf(run)).filter((r) => r.state === 'done').length >= expectedDeliveries,
    );
    const drainMs = Date.now() - restartReadyAt;
    // Counted once the stack is quiet: every consumer's queue empty, nothing in flight (a copy the
    // start-up repair re-queued, or a record fanned out again, has found its delivery done by now).
    const sqs = localSqsClient(run.state.sqs.endpoint, await readStackCredentials(statePathOf(home), run.state));
    await waitUntil('every consumer queue empty', maxLeaseMs + 60_000, async () => {
      for (const queue of Object.values(run.state.queues)) if ((await queueDepth(sqs, queue.url)) > 0) return false;
      return true;
    });
    sqs.destroy();
    const rows = await ledgerOf(run);
    const units: Record<string, number> = {};
    for (const r of rows) if (r.state === 'done') units[r.tenantId] = (units[r.tenantId] ?? 0) + (r.units ?? 0);
    const check = await hookledger(home, ['reconcile', '--grace', '0s', '--from', '-1h', '--json']);
    const report = JSON.parse(check.stdout) as { violations: unknown[]; receipts: number; expectedDeliveries: number };
    const resumed = resumedCount(run.output());
    console.log(
      `[crash-restart] npm start process group SIGKILLed at ${killedAt}/${EVENTS_SENT}: requests=${figures.requests} 202=${figures.s202} ` +
        `200-duplicate=${figures.s200} 4xx=${figures.s4xx} 5xx=${figures.s5xx} network-errors=${figures.network} gave-up=${figures.gaveUp} ` +
        `acknowledged=${acknowledged.size} deliveries expected=${expectedDeliveries} done=${rows.filter((r) => r.state === 'done').length} ` +
        `ledger-rows=${rows.length} per-consumer=${JSON.stringify(perConsumer(rows))} units=${JSON.stringify(units)} ` +
        `resumed-at-start=${resumed} restart=${run.startMs}ms drain=${drainMs}ms reconcile-violations=${report.violations.length}`,
    );
    expect(killedAt).toBeGreaterThanOrEqual(EVENTS_SENT * 0.4);
    expect(killedAt).toBeLessThan(EVENTS_SENT * 0.6);
    expect(figures.gaveUp).toBe(0);
    expect(acknowledged.size).toBe(EVENTS_SENT);
    expect(figures.network, 'the crash was visible to the sender').toBeGreaterThan(0);
    expect(resumed, 'the start-up repair had unfinished deliveries to re-queue').toBeGreaterThan(0);
    expect(perConsumer(rows)).toEqual(expectedPerConsumer);
    expect(rows, 'one ledger row per delivery, none extra').toHaveLength(expectedDeliveries);
    expect(rows.every((r) => r.state === 'done' && typeof r.ackAttempt === 'number')).toBe(true);
    expect(units).toEqual(expectedUnits);
    expect(report).toMatchObject({ receipts: EVENTS_SENT, expectedDeliveries, violations: [] });
    expect(check.code).toBe(0);
    expect(drainMs, 'drain bounded by the longest lease').toBeLessThan(maxLeaseMs + 90_000);
  }, 420_000);
});
