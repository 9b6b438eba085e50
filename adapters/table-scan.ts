/**
 * The scanner: read-only bulk reads of both tables, shared by reconcile (the scheduled Lambda and
 * `hookledger reconcile`), the operator CLI (status, usage, keys, replay and backfill by window,
 * trace) and the tests. Single-item reads and every write stay with the adapters (receipts.ts,
 * payloads.ts, key-registry.ts, audit-log.ts, requeues.ts, ledger.ts, ledger-controls.ts).
 *
 * Scale: a Scan reads (and is billed for) the whole table, whatever its filter. Window operations
 * read the window index instead (window-index.ts); scans are kept for what has no window: full-
 * history audits (`--scan`: the only way to find a ledger row whose receipt does not exist), the
 * key registry, `hookledger index backfill`.
 */

import type { ReturnConsumedCapacity } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandInput,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
  ScanCommand,
  type ScanCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { EventItem, KeyItem, LedgerItem } from '../core/model';

/** Called after every page: items read so far; `total` when known. */
export type Progress = (done: number, total: number | undefined) => void;

export interface TableNames {
  readonly events: string;
  readonly ledger: string;
}

export interface ScanDeps {
  readonly ddb: DynamoDBDocumentClient;
  readonly tables: TableNames;
}

/** A half-open window of epoch milliseconds, [from, to). */
export interface Window {
  readonly from: number;
  readonly to: number;
}

/** Every item a filtered Scan returns, following LastEvaluatedKey to the end. */
export async function scanAll<T>(ddb: DynamoDBDocumentClient, input: ScanCommandInput, onProgress?: Progress): Promise<T[]> {
  const items: T[] = [];
  let scanned = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(new ScanCommand({ ...input, ExclusiveStartKey: start }));
    for (const item of page.Items ?? []) items.push(item as T);
    scanned += page.ScannedCount ?? 0;
    onProgress?.(scanned, undefined);
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

export interface ReceiptFilter {
  readonly window?: Window;
  /** Only receipts whose delivery set includes this consumer. */
  readonly consumer?: string;
  readonly tenant?: string;
  readonly type?: string;
  readonly source?: string;
}

/** A FilterExpression being built: its clauses (joined by AND), attribute names and values. */
export interface FilterParts {
  readonly clauses: string[];
  readonly names: Record<string, string>;
  readonly values: Record<string, unknown>;
}

/** Adds the clauses of a receipt filter's attribution fields (the scan and the window index share them). */
export function addReceiptFilter(filter: Omit<ReceiptFilter, 'window'>, parts: FilterParts): void {
  if (filter.consumer !== undefined) {
    parts.clauses.push('contains(consumers, :consumer)');
    parts.values[':consumer'] = filter.consumer;
  }
  if (filter.tenant !== undefined) {
    parts.clauses.push('tenantId = :tenant');
    parts.values[':tenant'] = filter.tenant;
  }
  if (filter.type !== undefined) {
    parts.clauses.push('eventType = :type');
    parts.values[':type'] = filter.type;
  }
  if (filter.source !== undefined) {
    parts.clauses.push('#source = :source');
    parts.names['#source'] = 'source';
    parts.values[':source'] = filter.source;
  }
}

/** Receipts (`kind = event`), optionally limited to a receivedAt window and attribution filters. */
export async function scanReceipts(deps: ScanDeps, filter: ReceiptFilter = {}, onProgress?: Progress): Promise<EventItem[]> {
  const clauses = ['kind = :event'];
  const values: Record<string, unknown> = { ':event': 'event' };
  const names: Record<string, string> = {};
  if (filter.window) {
    clauses.push('receivedAt >= :from AND receivedAt < :to');
    values[':from'] = filter.window.from;
    values[':to'] = filter.window.to;
  }
  addReceiptFilter(filter, { clauses, names, values });
  return scanAll<EventItem>(
    deps.ddb,
    {
      TableName: deps.tables.events,
      FilterExpression: clauses.join(' AND '),
      ExpressionAttributeValues: values,
      ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
    },
    onProgress,
  );
}

/** What status counts a receipt by: projected, so the scan returns a fraction of each item. */
export type ReceiptSummary = Pick<EventItem, 'pk' | 'source' | 'eventId' | 'eventType' | 'consumers' | 'receivedAt' | 'secretVersion'>;

/** Every receipt, projected to its attribution, delivery set and secret version. */
export async function scanReceiptSummaries(deps: ScanDeps, onProgress?: Progress): Promise<ReceiptSummary[]> {
  return scanAll<ReceiptSummary>(
    deps.ddb,
    {
      TableName: deps.tables.events,
      FilterExpression: 'kind = :event',
      ProjectionExpression: 'pk, #source, eventId, eventType, consumers, receivedAt, secretVersion',
      ExpressionAttributeNames: { '#source': 'source' },
      ExpressionAttributeValues: { ':event': 'event' },
    },
    onProgress,
  );
}

/** Ledger items whose receivedAt (copied from the receipt at claim) lies in the window; all when none. */
export async function scanLedger(deps: ScanDeps, window?: Window, onProgress?: Progress): Promise<LedgerItem[]> {
  return scanAll<LedgerItem>(
    deps.ddb,
    {
      TableName: deps.tables.ledger,
      ...(window
        ? {
            FilterExpression: 'receivedAt >= :from AND receivedAt < :to',
            ExpressionAttributeValues: { ':from': window.from, ':to': window.to },
          }
        : {}),
    },
    onProgress,
  );
}

/** What status counts a delivery by. */
export type DeliveryStateRow = Pick<LedgerItem, 'pk' | 'consumerId' | 'state' | 'leaseUntil' | 'receivedAt'>;

/** Every ledger item, projected to its state and lease. */
export async function scanDeliveryStates(deps: ScanDeps, onProgress?: Progress): Promise<DeliveryStateRow[]> {
  return scanAll<DeliveryStateRow>(
    deps.ddb,
    {
      TableName: deps.tables.ledger,
      ProjectionExpression: 'pk, consumerId, #state, leaseUntil, receivedAt',
      ExpressionAttributeNames: { '#state': 'state' },
    },
    onProgress,
  );
}

export interface UsageFilter {
  /** On the acknowledgement time (`ackAt`), not on receivedAt: usage is billed when work is done. */
  readonly window: Window;
  readonly tenant?: string;
  readonly consumer?: string;
}

export type UsageRowItem = Pick<LedgerItem, 'tenantId' | 'consumerId' | 'units'>;

/** The usage rows of done deliveries acknowledged in the window, projected to tenant, consumer and units. */
export async function scanUsageRows(deps: ScanDeps, filter: UsageFilter, onProgress?: Progress): Promise<UsageRowItem[]> {
  const clauses = ['#state = :done', 'ackAt >= :from', 'ackAt < :to'];
  const values: Record<string, unknown> = { ':done': 'done', ':from': filter.window.from, ':to': filter.window.to };
  if (filter.tenant !== undefined) {
    clauses.push('tenantId = :tenant');
    values[':tenant'] = filter.tenant;
  }
  if (filter.consumer !== undefined) {
    clauses.push('consumerId = :consumer');
    values[':consumer'] = filter.consumer;
  }
  return scanAll<UsageRowItem>(
    deps.ddb,
    {
      TableName: deps.tables.ledger,
      FilterExpression: clauses.join(' AND '),
      ProjectionExpression: 'tenantId, consumerId, units',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: values,
    },
    onProgress,
  );
}

/** The key registry (`kind = key`), optionally one tenant's. Unordered. */
export async function scanKeys(deps: ScanDeps, filter: { readonly tenant?: string } = {}): Promise<KeyItem[]> {
  return scanAll<KeyItem>(deps.ddb, {
    TableName: deps.tables.events,
    FilterExpression: filter.tenant !== undefined ? 'kind = :key AND tenantId = :tenant' : 'kind = :key',
    ExpressionAttributeValues: { ':key': 'key', ...(filter.tenant !== undefined ? { ':tenant': filter.tenant } : {}) },
  });
}

export interface BatchGetOptions {
  readonly projection?: string;
  readonly names?: Record<string, string>;
}

/** Items by key (BatchGetItem, 100 keys a call, unprocessed keys retried); missing keys are absent. */
export async function batchGet<T extends { pk: string }>(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  pks: readonly string[],
  options: BatchGetOptions = {},
  onReadUnits?: (units: number) => void,
  returnCapacity?: ReturnConsumedCapacity,
): Promise<Map<string, T>> {
  const found = new Map<string, T>();
  const unique = [...new Set(pks)];
  for (let i = 0; i < unique.length; i += 100) {
    let request: BatchGetCommandInput['RequestItems'] = {
      [tableName]: {
        Keys: unique.slice(i, i + 100).map((pk) => ({ pk })),
        ...(options.projection ? { ProjectionExpression: options.projection } : {}),
        ...(options.names ? { ExpressionAttributeNames: options.names } : {}),
      },
    };
    for (let round = 0; request && Object.keys(request).length > 0; round++) {
      if (round > 0) await sleep(Math.min(1000, 50 * 2 ** round));
      const out: BatchGetCommandOutput = await ddb.send(
        new BatchGetCommand({ RequestItems: request, ...(returnCapacity ? { ReturnConsumedCapacity: returnCapacity } : {}) }),
      );
      for (const c of out.ConsumedCapacity ?? []) onReadUnits?.(c.CapacityUnits ?? 0);
      for (const item of out.Responses?.[tableName] ?? []) found.set(String(item.pk), item as T);
      request = out.UnprocessedKeys;
    }
  }
  return found;
}

/**
 * EventStore items by key (`eventKey(...)`), keyed by it. Whatever item a key names comes back:
 * callers that need receipts check `kind`.
 */
export function eventStoreItemsByKey<T extends { pk: string } = EventItem>(
  deps: ScanDeps,
  pks: readonly string[],
): Promise<Map<string, T>> {
  return batchGet<T>(deps.ddb, deps.tables.events, pks);
}

/** Ledger items by key (`ledgerKey(...)`), keyed by it; projected when `options.projection` is given. */
export function ledgerItemsByKey<T extends { pk: string } = LedgerItem>(
  deps: ScanDeps,
  pks: readonly string[],
  options: BatchGetOptions = {},
): Promise<Map<string, T>> {
  return batchGet<T>(deps.ddb, deps.tables.ledger, pks, options);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
