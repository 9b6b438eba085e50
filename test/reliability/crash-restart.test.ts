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
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import baseConfig from '../../hookledger.config';
import { unitsFor } from '../../lambdas/consumers/billing-meter';
import type { ConsumerLambdaHandler } from '../../lambdas/consumers/runtime';
import { defineConfig, subscribedConsumers } from '../../lib/config/schema';
import type { LocalStack } from '../../local/stack';
import { platformEvent, signedHeaders } from '../support/factories';
import { send, startTestStack } from '../support/stack';
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

const countingWrapper = (consumerId: string, inner: ConsumerLambdaHandler): ConsumerLambdaHandler => async (event, context) => {
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

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'hookledger-crash-'));
  stack = await startFaultStack({ config, dataDir, wrapConsumer: countingWrapper, backoffBaseMs: 500 });
});
afterAll(async () => {
  await stack?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('crash and restart under load (file-backed)', () => {
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
          const res = await fetch(url, { method: 'POST', headers: signedHeaders(job.body, { secret, msgId: job.msgId, at: Date.now() }), body: job.body });
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
    for (const r of rows) rowsByDelivery.set(`${r.eventId}#${r.consumerId}`, [...(rowsByDelivery.get(`${r.eventId}#${r.consumerId}`) ?? []), r]);
    const lost: string[] = [];
    for (const eventId of acknowledged) {
      const receipt = receiptById.get(eventId);
      if (!receipt) {
        lost.push(`${eventId}: no receipt`);
        continue;
      }
      for (const consumerId of receipt.consumers) {
        const found = rowsByDelivery.get(`${eventId}#${consumerId}`) ?? [];
        if (!found.some((r) => r.state === 'done')) lost.push(`${eventId}#${consumerId}: ${found.map((r) => r.state).join(',') || 'no ledger item'}`);
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
    for (const id of ['evt_restart_1', 'evt_restart_2']) expect((await send(local, platformEvent({ id, type: 'invoice.paid' }))).status).toBe(202);
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
