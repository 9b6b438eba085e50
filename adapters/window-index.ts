/**
 * The window reader: what every window operation (reconcile, usage, status, replay and backfill by
 * window) reads instead of scanning. For [from, to): the UTC days it touches, one Query of
 * `tenants#<day>` per day (the tenant-day registry), then one Query per (tenant, day, shard) of the
 * window index with `wsk BETWEEN` -> exactly the receipts of the window. Ledger rows are then read by
 * key (BatchGetItem): each receipt's delivery set names them.
 *
 * Cost: proportional to the window (its receipts, their ledger rows and one registry item per
 * tenant-day), never to the history kept. The counters say what was read, so a test can prove it.
 *
 * What an index cannot find: a ledger row whose receipt does not exist (usage_without_event). Only a
 * scan of the ledger finds those (table-scan.ts, `--scan`).
 */
import type { ReturnConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { WindowError } from '../core/errors';
import {
  DAY_MS,
  dayTenantsPartition,
  type EventItem,
  type LedgerItem,
  ledgerKey,
  type TenantDayItem,
  tenantDayKey,
  tenantDayPartition,
  utcDay,
  WINDOW_INDEX,
} from '../core/model';
import { forEachLimited } from './pool';
import {
  addReceiptFilter,
  type BatchGetOptions,
  batchGet,
  eventStoreItemsByKey,
  type Progress,
  type ScanDeps,
  type Window,
} from './table-scan';

/** A receipt as the window index holds it (INCLUDE projection: no payload hash, no ordering keys). */
export type IndexedReceipt = Pick<
  EventItem,
  'pk' | 'kind' | 'source' | 'eventId' | 'eventType' | 'tenantId' | 'keyId' | 'consumers' | 'receivedAt' | 'secretVersion'
>;

/** One index partition, restricted to the part of the window that falls on its day. */
export interface WindowPartition {
  /** `<tenant>#<day>[#<shard>]`: the GSI partition key, and the partition's place in a cursor. */
  readonly id: string;
  readonly tenantId: string;
  readonly day: string;
  readonly from: number;
  /** Exclusive. */
  readonly to: number;
}

export interface ReceiptQuery {
  readonly window: Window;
  /** Only this tenant's partitions are read. */
  readonly tenant?: string;
  readonly source?: string;
  readonly type?: string;
  /** Only receipts whose delivery set includes this consumer. */
  readonly consumer?: string;
}

/** What a reader read: items returned by DynamoDB (what it is billed for) and the read units it reports. */
export interface WindowReadCounters {
  /** Queries of `tenants#<day>` (a one-tenant read gets its items by key instead). */
  registryQueries: number;
  /** Tenant-day items read from the registry. */
  registryItems: number;
  /** Queries of tenant-day partitions (every page counts). */
  receiptQueries: number;
  /** Receipts the index returned. */
  receiptsRead: number;
  /** Ledger rows read by key (present ones; a missing key costs a read too, see `ledgerKeysRequested`). */
  ledgerRowsRead: number;
  ledgerKeysRequested: number;
  /** ConsumedCapacity reported (TOTAL) by every read above. */
  readUnits: number;
}

export interface WindowReaderDeps extends ScanDeps {
  /** Queries in flight at once. @default 8 */
  readonly concurrency?: number;
  /** Ask for and add up consumed capacity (the bench; off by default: it costs nothing, but is noise). */
  readonly measureCapacity?: boolean;
}

/** A page of one partition: its receipts and where the next page starts. */
export interface ReceiptPage {
  readonly receipts: IndexedReceipt[];
  readonly lastKey?: Record<string, unknown>;
}

const DEFAULT_CONCURRENCY = 8;

export class WindowReader {
  readonly counters: WindowReadCounters = {
    registryQueries: 0,
    registryItems: 0,
    receiptQueries: 0,
    receiptsRead: 0,
    ledgerRowsRead: 0,
    ledgerKeysRequested: 0,
    readUnits: 0,
  };
  private readonly ddb: DynamoDBDocumentClient;
  private readonly capacity: ReturnConsumedCapacity | undefined;

  constructor(private readonly deps: WindowReaderDeps) {
    this.ddb = deps.ddb;
    this.capacity = deps.measureCapacity ? 'TOTAL' : undefined;
  }

  /**
   * The index partitions of a window, in a stable order (day, tenant, shard): the registry says which
   * tenants had receipts each day and over how many shards.
   */
  async partitions(window: Window, tenant?: string): Promise<WindowPartition[]> {
    const days = daysOf(window);
    const perDay: WindowPartition[][] = days.map(() => []);
    // One tenant: its registry items by key (one per day it had receipts), never the other tenants'.
    const ofTenant = tenant === undefined ? undefined : await this.tenantDays(tenant, days);
    await forEachLimited(days, this.deps.concurrency ?? DEFAULT_CONCURRENCY, async (day, i) => {
      const tenants = ofTenant ? ofTenant.filter((t) => t.day === day) : await this.tenantsOf(day);
      const dayStart = Date.parse(`${day}T00:00:00Z`);
      const from = Math.max(window.from, dayStart);
      const to = Math.min(window.to, dayStart + DAY_MS);
      const list = perDay[i] as WindowPartition[];
      for (const t of tenants) {
        for (let shard = 0; shard < Math.max(1, t.shards); shard++) {
          list.push({ id: tenantDayPartition(t.tenantId, day, shard), tenantId: t.tenantId, day, from, to });
        }
      }
      list.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    });
    return perDay.flat();
  }

  /** One tenant's registry items of these days, read by key (BatchGetItem). */
  async tenantDays(tenant: string, days: readonly string[]): Promise<Pick<TenantDayItem, 'day' | 'tenantId' | 'shards'>[]> {
    const found = await batchGet<TenantDayItem>(
      this.ddb,
      this.deps.tables.events,
      days.map((day) => tenantDayKey(day, tenant)),
      {},
      (units) => {
        this.counters.readUnits += units;
      },
      this.capacity,
    );
    this.counters.registryItems += found.size;
    return [...found.values()].map((t) => ({ day: t.day, tenantId: t.tenantId, shards: Number(t.shards ?? 1) }));
  }

  /** The tenants registered for one UTC day. */
  async tenantsOf(day: string): Promise<Pick<TenantDayItem, 'tenantId' | 'shards'>[]> {
    const out: Pick<TenantDayItem, 'tenantId' | 'shards'>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.query({
        KeyConditionExpression: '#wpk = :wpk',
        // Registry items only: a receipt written before tenant ids were escaped (core/model.ts keyPart)
        // by a tenant named `tenants` shares this partition until `hookledger index backfill` re-keys it.
        FilterExpression: '#kind = :tenantDay',
        ExpressionAttributeNames: { '#wpk': WINDOW_INDEX.partitionKey, '#kind': 'kind' },
        ExpressionAttributeValues: { ':wpk': dayTenantsPartition(day), ':tenantDay': 'tenantDay' },
        ExclusiveStartKey: start,
      });
      this.counters.registryQueries++;
      for (const item of page.Items ?? []) {
        this.counters.registryItems++;
        out.push({ tenantId: String(item.tenantId), shards: Number(item.shards ?? 1) });
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return out;
  }

  /** One page (up to `limit` receipts) of one partition, from `startKey`. */
  async receiptPage(
    partition: WindowPartition,
    query: Omit<ReceiptQuery, 'window' | 'tenant'>,
    startKey?: Record<string, unknown>,
    limit?: number,
  ): Promise<ReceiptPage> {
    const clauses: string[] = [];
    const names: Record<string, string> = { '#wpk': WINDOW_INDEX.partitionKey, '#wsk': WINDOW_INDEX.sortKey };
    const values: Record<string, unknown> = { ':wpk': partition.id, ':from': partition.from, ':last': partition.to - 1 };
    // The partition's own tenant only: a receipt keyed before tenant ids were escaped (core/model.ts
    // keyPart) may sit in the partition another tenant's id now escapes to, until the index backfill.
    addReceiptFilter({ ...query, tenant: partition.tenantId }, { clauses, names, values });
    const page = await this.query({
      KeyConditionExpression: '#wpk = :wpk AND #wsk BETWEEN :from AND :last',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ...(clauses.length > 0 ? { FilterExpression: clauses.join(' AND ') } : {}),
      ExclusiveStartKey: startKey,
      ...(limit !== undefined ? { Limit: limit } : {}),
    });
    this.counters.receiptQueries++;
    this.counters.receiptsRead += page.ScannedCount ?? page.Count ?? 0;
    return { receipts: (page.Items ?? []) as IndexedReceipt[], ...(page.LastEvaluatedKey ? { lastKey: page.LastEvaluatedKey } : {}) };
  }

  /** Every receipt of the window (and of the query's tenant, source, type, consumer). */
  async receipts(query: ReceiptQuery, onProgress?: Progress): Promise<IndexedReceipt[]> {
    const partitions = await this.partitions(query.window, query.tenant);
    const found: IndexedReceipt[][] = partitions.map(() => []);
    await forEachLimited(partitions, this.deps.concurrency ?? DEFAULT_CONCURRENCY, async (partition, i) => {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await this.receiptPage(partition, query, start);
        (found[i] as IndexedReceipt[]).push(...page.receipts);
        start = page.lastKey;
        onProgress?.(this.counters.receiptsRead, undefined);
      } while (start);
    });
    return found.flat();
  }

  /**
   * The ledger rows of these receipts, by key: each receipt's delivery set, plus `alsoConsumers`
   * (reconcile passes every configured consumer, so a row outside the delivery set is found too).
   */
  async ledgerRows<T extends { pk: string } = LedgerItem>(
    receipts: readonly Pick<IndexedReceipt, 'source' | 'eventId' | 'consumers'>[],
    options: BatchGetOptions & { readonly alsoConsumers?: readonly string[] } = {},
  ): Promise<Map<string, T>> {
    const keys = new Set<string>();
    for (const r of receipts) {
      for (const c of r.consumers ?? []) keys.add(ledgerKey(r.source, r.eventId, c));
      for (const c of options.alsoConsumers ?? []) keys.add(ledgerKey(r.source, r.eventId, c));
    }
    this.counters.ledgerKeysRequested += keys.size;
    // BatchGets of 100 keys, several in flight: a tenant's month is thousands of them.
    const all = [...keys];
    const chunks: string[][] = [];
    for (let i = 0; i < all.length; i += 100) chunks.push(all.slice(i, i + 100));
    const rows = new Map<string, T>();
    await forEachLimited(chunks, this.deps.concurrency ?? DEFAULT_CONCURRENCY, async (chunk) => {
      const found = await batchGet<T>(
        this.ddb,
        this.deps.tables.ledger,
        chunk,
        options,
        (units) => {
          this.counters.readUnits += units;
        },
        this.capacity,
      );
      for (const [k, v] of found) rows.set(k, v);
    });
    this.counters.ledgerRowsRead += rows.size;
    return rows;
  }

  private async query(input: Omit<ConstructorParameters<typeof QueryCommand>[0], 'TableName' | 'IndexName'>): Promise<QueryCommandOutput> {
    const out = await this.ddb.send(
      new QueryCommand({
        TableName: this.deps.tables.events,
        IndexName: WINDOW_INDEX.name,
        ...input,
        ...(this.capacity ? { ReturnConsumedCapacity: this.capacity } : {}),
      }),
    );
    this.counters.readUnits += out.ConsumedCapacity?.CapacityUnits ?? 0;
    return out;
  }
}

/** At most this many UTC days per window: one registry read each, so a window from 1970 is refused. */
export const MAX_WINDOW_DAYS = 3660;

/** A window longer than MAX_WINDOW_DAYS: the scan (`--scan`) is the way to read all of history. */
export class WindowTooLongError extends WindowError {
  override readonly name = 'WindowTooLongError';
}

/** The UTC days [from, to) touches, in order. */
export function daysOf(window: Window): string[] {
  const days: string[] = [];
  if (!(window.from < window.to)) return days;
  if (window.to - window.from > MAX_WINDOW_DAYS * DAY_MS) {
    throw new WindowTooLongError(
      `a window of ${Math.ceil((window.to - window.from) / DAY_MS)} days is more than the index reads (${MAX_WINDOW_DAYS}); ` +
        'narrow --from/--to, or read all of history with --scan',
    );
  }
  const last = utcDay(window.to - 1);
  for (let at = Date.parse(`${utcDay(window.from)}T00:00:00Z`); ; at += DAY_MS) {
    const day = utcDay(at);
    days.push(day);
    if (day >= last) break;
  }
  return days;
}

/**
 * The window's receipts in full (payload hash, retention, ordering keys: what a re-queue copies),
 * for replay and backfill: the index says which receipts, `select` narrows them on what it projects,
 * and only those are read by key.
 */
export async function windowReceiptsInFull(
  reader: WindowReader,
  deps: ScanDeps,
  query: ReceiptQuery,
  select: (receipt: IndexedReceipt) => boolean = () => true,
  onProgress?: Progress,
): Promise<EventItem[]> {
  const chosen = (await reader.receipts(query, onProgress)).filter(select);
  const full = await eventStoreItemsByKey<EventItem>(
    deps,
    chosen.map((r) => r.pk),
  );
  return chosen.map((r) => full.get(r.pk)).filter((r): r is EventItem => r?.kind === 'event');
}
