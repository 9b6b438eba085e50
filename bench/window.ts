/**
 * Section 7: window queries against history. `npx tsx bench/window.ts` runs it alone and merges
 * `window` into bench/results.json; `npm run bench` runs it as its last section.
 *
 *  - reconcile of the last hour, on a table holding only that hour and on one holding ten times as
 *    much older history (ten days before it): read units (ConsumedCapacity of every Query and
 *    BatchGetItem) and time. Ratios = with history / without. The scan it replaces is measured too.
 *  - usage of one tenant for one month, with ten other tenants' month present: read units against
 *    that tenant's ledger rows.
 *
 * Data is written with BatchWriteItem in the shapes the handlers write (keys and index attributes
 * from core/model.ts): the section measures reads, and seeding through intake would take minutes.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BatchWriteCommand, type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../adapters/clients';
import { type WindowReadCounters, WindowReader } from '../adapters/window-index';
import { subscribedConsumers } from '../core/config/routing';
import { eventKey, ledgerKey, payloadKey, receiptIndexAttributes, tenantDayItem, utcDay } from '../core/model';
import baseConfig from '../hookledger.config';
import { reconcile } from '../lambdas/reconcile/reconcile';
import { localDynamoClient, localSqsClient } from '../local/clients';
import { freePort, startDynamoLocal, startSqsEmulator } from '../local/emulators';
import { provisionLocalStack } from '../local/provision';
import { usage } from '../ops/usage';
import { BenchRunError, runToExit } from './errors';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The hour reconciled: [10:00, 11:00) on 2026-11-29. */
const WINDOW = { from: Date.parse('2026-11-29T10:00:00Z'), to: Date.parse('2026-11-29T11:00:00Z') };
const NOVEMBER = { from: Date.parse('2026-11-01T00:00:00Z'), to: Date.parse('2026-12-01T00:00:00Z') };
const TENANTS = Array.from({ length: 11 }, (_, i) => `tenant_${204 + i}`);
const PLAN = { hourReceipts: 200, historyFactor: 10, monthReceiptsPerTenant: 150, timingRuns: 5 };
const PAYLOAD = Buffer.alloc(1000, 0x61);

export interface WindowBenchResult {
  readonly reconcileReadRatio: number;
  readonly reconcileTimeRatio: number;
  readonly tenantUsageReadUnits: number;
  readonly tenantUsageRows: number;
  readonly details: Record<string, unknown>;
}

/** A pair of tables provisioned as the local stack's (window index included). */
type Tables = { readonly events: string; readonly ledger: string };

/** The emulators the section reads on; `tables` provisions a fresh pair on each call. */
interface WindowRig {
  readonly ddb: DynamoDBDocumentClient;
  readonly consumers: readonly string[];
  tables(): Promise<Tables>;
  stop(): Promise<void>;
}

/** One reconcile of WINDOW, measured: read units and counters of the last run, median time. */
interface ReconcileMeasure {
  readonly readUnits: number;
  readonly ms: number;
  readonly receipts: number;
  readonly counters: WindowReadCounters | undefined;
  readonly scan: number;
}

/** The hour reconciled alone (a) and with PLAN.historyFactor times as much older history (b). */
interface ReconcileWindow {
  readonly hourReceipts: number;
  readonly olderReceipts: number;
  readonly a: ReconcileMeasure;
  readonly b: ReconcileMeasure;
}

/** One tenant's month read by usage among ten others', and every tenant's. */
interface TenantUsage {
  readonly tenantRows: number;
  readonly tenantMs: number;
  readonly tenant: WindowReadCounters;
  readonly all: WindowReadCounters;
  readonly scanReadUnits: number;
}

export async function measureWindow(log: (line: string) => void = console.log): Promise<WindowBenchResult> {
  const rig = await startWindowRig();
  try {
    const reconciled = await measureReconcileWindow(rig, log);
    const used = await measureTenantUsage(rig, log);
    const result = windowResult(reconciled, used);
    const { a, b } = reconciled;
    log(
      `   reconcile of the hour: ${a.readUnits} RRU / ${a.ms.toFixed(0)} ms alone, ${b.readUnits} RRU / ${b.ms.toFixed(0)} ms with 10x history ` +
        `(ratios ${result.reconcileReadRatio} and ${result.reconcileTimeRatio}); the scan it replaces: ${a.scan} -> ${b.scan} RRU`,
    );
    log(
      `   usage of ${TENANTS[0]} for November: ${result.tenantUsageReadUnits} RRU for ${used.tenantRows} rows ` +
        `(all ${TENANTS.length} tenants: ${used.all.readUnits} RRU for ${used.all.ledgerRowsRead} rows)`,
    );
    return result;
  } finally {
    await rig.stop();
  }
}

async function startWindowRig(): Promise<WindowRig> {
  const dynamo = await startDynamoLocal({ port: await freePort(), dbPath: null });
  const sqsServer = await startSqsEmulator({ port: await freePort() });
  const client = localDynamoClient(dynamo.endpoint);
  const sqs = localSqsClient(sqsServer.endpoint);
  let n = 0;
  return {
    ddb: createDocumentClient(client),
    consumers: subscribedConsumers(baseConfig, 'payment.succeeded'),
    async tables() {
      n++;
      const made = await provisionLocalStack({
        config: baseConfig,
        dynamo: client,
        sqs,
        tables: { events: `bench-events-${n}`, ledger: `bench-ledger-${n}` },
        queuePrefix: `bw${n}-`,
      });
      return made.tables;
    },
    async stop() {
      client.destroy();
      sqs.destroy();
      await Promise.all([dynamo.stop(), sqsServer.stop()]);
    },
  };
}

/** Reconcile of the hour on a table holding only that hour, then on one holding it and ten days before. */
async function measureReconcileWindow(rig: WindowRig, log: (line: string) => void): Promise<ReconcileWindow> {
  const hour = spread(PLAN.hourReceipts, WINDOW.from, WINDOW.to, 'h');
  const history = spread(PLAN.hourReceipts * PLAN.historyFactor, WINDOW.from - 10 * DAY, WINDOW.from, 'o');
  log(
    `7. window queries: seeding ${hour.length} receipts in the hour, ${history.length} older (${rig.consumers.length} consumers each)...`,
  );
  const alone = await rig.tables();
  await seed(rig.ddb, alone, hour, rig.consumers, true);
  const withHistory = await rig.tables();
  await seed(rig.ddb, withHistory, [...hour, ...history], rig.consumers, true);
  const a = await measureReconcile(rig.ddb, alone);
  const b = await measureReconcile(rig.ddb, withHistory);
  return { hourReceipts: hour.length, olderReceipts: history.length, a, b };
}

async function measureReconcile(ddb: DynamoDBDocumentClient, t: Tables): Promise<ReconcileMeasure> {
  const times: number[] = [];
  let readUnits = 0;
  let counters: WindowReadCounters | undefined;
  let receipts = 0;
  for (let i = 0; i < PLAN.timingRuns; i++) {
    const reader = new WindowReader({ ddb, tables: t, measureCapacity: true });
    const started = performance.now();
    const report = await reconcile(
      { ddb, tables: t, clock: () => WINDOW.to + DAY, reader },
      { ...WINDOW, consumers: baseConfig.consumers.map((c) => c.id) },
    );
    times.push(performance.now() - started);
    if (report.violations.length > 0)
      throw new BenchRunError(`bench data has ${report.violations.length} violations: reconcile would time repairs, not reads`);
    readUnits = reader.counters.readUnits;
    counters = { ...reader.counters };
    receipts = report.receipts;
  }
  return { readUnits, ms: median(times), receipts, counters, scan: await scanUnits(ddb, t) };
}

/** Usage of one tenant for November, with ten other tenants' month in the same tables; then of all of them. */
async function measureTenantUsage(rig: WindowRig, log: (line: string) => void): Promise<TenantUsage> {
  const month = TENANTS.flatMap((tenant, i) =>
    spread(PLAN.monthReceiptsPerTenant, NOVEMBER.from, NOVEMBER.to, `m${i}`).map((r) => ({ ...r, tenant })),
  );
  log(`   usage: seeding ${month.length} receipts of ${TENANTS.length} tenants over November...`);
  const { ddb } = rig;
  const monthTables = await rig.tables();
  await seed(ddb, monthTables, month, rig.consumers, false);
  const reader = new WindowReader({ ddb, tables: monthTables, measureCapacity: true });
  const started = performance.now();
  const tenantReport = await usage({ ddb, tables: monthTables }, { ...NOVEMBER, tenant: TENANTS[0], reader });
  const tenantMs = performance.now() - started;
  const allReader = new WindowReader({ ddb, tables: monthTables, measureCapacity: true });
  await usage({ ddb, tables: monthTables }, { ...NOVEMBER, reader: allReader });
  return {
    tenantRows: tenantReport.rows.reduce((s, r) => s + r.deliveries, 0),
    tenantMs,
    tenant: reader.counters,
    all: allReader.counters,
    scanReadUnits: await scanUnits(ddb, monthTables, 'ledger'),
  };
}

function windowResult({ hourReceipts, olderReceipts, a, b }: ReconcileWindow, used: TenantUsage): WindowBenchResult {
  return {
    reconcileReadRatio: round(b.readUnits / a.readUnits),
    reconcileTimeRatio: round(b.ms / a.ms),
    tenantUsageReadUnits: round(used.tenant.readUnits),
    tenantUsageRows: used.tenantRows,
    details: {
      reconcile: {
        hourReceipts,
        olderReceipts,
        withoutHistory: { readUnits: a.readUnits, ms: round(a.ms), receipts: a.receipts, read: a.counters, scanReadUnits: a.scan },
        withHistory: { readUnits: b.readUnits, ms: round(b.ms), receipts: b.receipts, read: b.counters, scanReadUnits: b.scan },
        scanReadRatio: round(b.scan / a.scan),
      },
      usage: {
        tenant: TENANTS[0],
        tenants: TENANTS.length,
        tenantReceipts: PLAN.monthReceiptsPerTenant,
        tenantMs: round(used.tenantMs),
        read: { ...used.tenant },
        readUnitsPerRow: round(used.tenant.readUnits / used.tenantRows),
        allTenantsReadUnits: round(used.all.readUnits),
        allTenantsRows: used.all.ledgerRowsRead,
        scanReadUnits: used.scanReadUnits,
      },
      note: 'read units as DynamoDB Local reports them (ConsumedCapacity TOTAL, index reads included); eventually consistent Query and BatchGetItem',
    },
  };
}

interface SeedReceipt {
  readonly eventId: string;
  readonly receivedAt: number;
  readonly tenant: string;
}

/** `count` receipts evenly over [from, to), tenants in turn. */
function spread(count: number, from: number, to: number, tag: string): SeedReceipt[] {
  const step = (to - from) / count;
  return Array.from({ length: count }, (_, i) => ({
    eventId: `evt_bench_${tag}_${String(i).padStart(6, '0')}`,
    receivedAt: Math.floor(from + i * step),
    tenant: TENANTS[i % 10] as string,
  }));
}

async function seed(
  ddb: DynamoDBDocumentClient,
  t: Tables,
  receipts: readonly SeedReceipt[],
  consumers: readonly string[],
  payloads: boolean,
): Promise<void> {
  const events: Record<string, unknown>[] = [];
  const ledger: Record<string, unknown>[] = [];
  const days = new Map<string, Record<string, unknown>>();
  for (const r of receipts) {
    const hmac = r.eventId.padEnd(64, '0');
    const attribution = { source: 'platform', eventId: r.eventId, eventType: 'payment.succeeded', tenantId: r.tenant, keyId: 'key_42' };
    const day = tenantDayItem(utcDay(r.receivedAt), r.tenant);
    days.set(day.pk, { ...day });
    events.push({
      ...attribution,
      pk: eventKey('platform', r.eventId),
      kind: 'event',
      receivedAt: r.receivedAt,
      consumers: [...consumers],
      payloadHmac: hmac,
      payloadBytes: PAYLOAD.length,
      secretVersion: 'current',
      payloadExpiresAt: r.receivedAt + 30 * DAY,
      ...receiptIndexAttributes({ tenantId: r.tenant, eventId: r.eventId, receivedAt: r.receivedAt }),
    });
    if (payloads) {
      events.push({
        pk: payloadKey('platform', r.eventId, hmac),
        kind: 'payload',
        encoding: 'identity',
        body: PAYLOAD,
        expiresAt: Math.floor((r.receivedAt + 30 * DAY) / 1000),
      });
    }
    for (const consumerId of consumers) {
      ledger.push({
        ...attribution,
        pk: ledgerKey('platform', r.eventId, consumerId),
        consumerId,
        receivedAt: r.receivedAt,
        state: 'done',
        attempt: 1,
        reads: [{ principal: `arn:aws:sts::000000000000:assumed-role/hookledger-${consumerId}/fn`, at: r.receivedAt + 1000 }],
        units: 1,
        ackAt: r.receivedAt + 2000,
        ackAttempt: 1,
        principal: `arn:aws:sts::000000000000:assumed-role/hookledger-${consumerId}/fn`,
        policyVersion: 'v1',
        outcome: 'ok',
      });
    }
  }
  await writeAll(ddb, t.events, [...days.values(), ...events]);
  await writeAll(ddb, t.ledger, ledger);
}

async function writeAll(ddb: DynamoDBDocumentClient, table: string, items: readonly Record<string, unknown>[]): Promise<void> {
  const chunks: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25) as Record<string, unknown>[]);
  let next = 0;
  const worker = async () => {
    while (next < chunks.length) {
      let request: Record<string, { PutRequest: { Item: Record<string, unknown> } }[]> | undefined = {
        [table]: (chunks[next++] as Record<string, unknown>[]).map((Item) => ({ PutRequest: { Item } })),
      };
      while (request && Object.keys(request).length > 0) {
        const out = await ddb.send(new BatchWriteCommand({ RequestItems: request }));
        request = out.UnprocessedItems as typeof request;
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
}

/** What the scan-based reconcile read: every item of both tables (or one), in read units. */
async function scanUnits(ddb: DynamoDBDocumentClient, t: Tables, only?: 'ledger'): Promise<number> {
  let units = 0;
  for (const table of only ? [t.ledger] : [t.events, t.ledger]) {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await ddb.send(
        new ScanCommand({ TableName: table, ExclusiveStartKey: start, ReturnConsumedCapacity: 'TOTAL', Select: 'COUNT' }),
      );
      units += page.ConsumedCapacity?.CapacityUnits ?? 0;
      start = page.LastEvaluatedKey;
    } while (start);
  }
  return units;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] as number;
};
const round = (v: number) => Number(v.toFixed(3));

/** Alone: measure and merge `window` into bench/results.json. */
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.dirname, 'window.ts')) {
  runToExit(async () => {
    const window = await measureWindow();
    const file = path.join(import.meta.dirname, 'results.json');
    const results = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
    writeFileSync(file, `${JSON.stringify({ ...results, window }, null, 2)}\n`);
    console.log('merged window into bench/results.json');
  });
}
