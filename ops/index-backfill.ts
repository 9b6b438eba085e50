/**
 * `hookledger index backfill`: the one-off migration for tables written before the window index, or
 * before tenant ids were escaped in it (core/model.ts keyPart: a tenant id holding `%` or `#`, or
 * named `tenants`, now has another partition). One paged Scan of the EventStore for receipts without
 * index attributes or whose tenant id the escape changes; each one whose partition is not its tenant's
 * gets its tenant-day registered and its attributes set (ReceiptAdmin.indexReceipt). Idempotent: a
 * second run finds nothing to do. Stream MODIFY records it causes are not work for the fan-out (its
 * filter passes INSERTs).
 */

import { eventStores } from '../adapters/event-stores';
import { forEachLimited } from '../adapters/pool';
import { scanAll } from '../adapters/table-scan';
import type { EventItem } from '../core/model';
import { RESERVED_KEY_PARTS, tenantDayPartition, utcDay, WINDOW_INDEX } from '../core/model';
import type { ConfigDeps, Progress, StoreDeps } from './deps';

const WRITE_CONCURRENCY = 8;

export interface IndexBackfillResult {
  /** Receipts without index attributes, or not in their tenant's partition, the scan found. */
  readonly found: number;
  /** Receipts given their attributes by this run. */
  readonly indexed: number;
  /** Distinct (day, tenant) pairs registered. */
  readonly tenantDays: number;
}

export async function indexBackfill(
  deps: StoreDeps & ConfigDeps,
  options: { readonly onProgress?: Progress; readonly dryRun?: boolean } = {},
): Promise<IndexBackfillResult> {
  const reserved = [...RESERVED_KEY_PARTS];
  const reservedValues = Object.fromEntries(reserved.map((word, i) => [`:reserved${i}`, word]));
  const candidates = await scanAll<Pick<EventItem, 'pk' | 'source' | 'eventId' | 'tenantId' | 'receivedAt'> & { wpk?: string }>(
    deps.ddb,
    {
      TableName: deps.tables.events,
      FilterExpression:
        'kind = :event AND (attribute_not_exists(#wpk) OR contains(tenantId, :percent) OR contains(tenantId, :hash)' +
        `${reserved.length > 0 ? ` OR tenantId IN (${Object.keys(reservedValues).join(', ')})` : ''})`,
      ProjectionExpression: 'pk, #source, eventId, tenantId, receivedAt, #wpk',
      ExpressionAttributeNames: { '#wpk': WINDOW_INDEX.partitionKey, '#source': 'source' },
      ExpressionAttributeValues: { ':event': 'event', ':percent': '%', ':hash': '#', ...reservedValues },
    },
    options.onProgress,
  );
  // Receipts already in their tenant's partition (of any shard) are left as they are.
  const receipts = candidates.filter((r) => {
    if (typeof r.wpk !== 'string') return true;
    const own = tenantDayPartition(r.tenantId, utcDay(r.receivedAt));
    return r.wpk !== own && !r.wpk.startsWith(`${own}#`);
  });
  const tenantDays = new Set(receipts.map((r) => `${new Date(r.receivedAt).toISOString().slice(0, 10)}#${r.tenantId}`));
  if (options.dryRun) return { found: receipts.length, indexed: 0, tenantDays: tenantDays.size };
  const { receiptAdmin: store } = eventStores({
    client: deps.ddb,
    tableName: deps.tables.events,
    shardsOf: (tenantId) => deps.config.windowIndex.hotTenants[tenantId] ?? 1,
  });
  let indexed = 0;
  await forEachLimited(
    receipts,
    WRITE_CONCURRENCY,
    async (r) => {
      if (await store.indexReceipt(r)) indexed++;
    },
    (done, total) => options.onProgress?.(done, total),
  );
  return { found: receipts.length, indexed, tenantDays: tenantDays.size };
}
