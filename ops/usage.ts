/**
 * Usage: billable units summed by tenant and consumer over done ledger items. The tenant is the one
 * captured at intake and copied onto the ledger item, never looked up again. Replays never add
 * units, so a replayed delivery counts once.
 *
 * Attribution: usage belongs to the window the event was *received* in (its receipt's receivedAt),
 * read through the window index: the window's receipts (one tenant's day partitions with `tenant`,
 * every registered tenant's without), then their ledger rows by key. A tenant's month reads that
 * tenant's rows of that month and nothing else. `scan: true` scans the whole Ledger instead and
 * windows on the acknowledgement time (`ackAt`), as before the index; its cost grows with history.
 */

import { scanUsageRows, type UsageRowItem, type Window } from '../adapters/table-scan';
import { type WindowReadCounters, WindowReader } from '../adapters/window-index';
import type { LedgerItem } from '../core/model';
import { csv } from './csv';
import type { Progress, StoreDeps } from './deps';
import { UsageError } from './errors';
import { iso } from './time';

export interface UsageRequest extends Window {
  readonly tenant?: string;
  readonly consumer?: string;
  readonly onProgress?: Progress;
  /** Scan the whole Ledger, windowed on ackAt (the full-history audit). Default false. */
  readonly scan?: boolean;
  /** What the window index read (the caller's reader keeps the counters). */
  readonly reader?: WindowReader;
}

export interface UsageRow {
  readonly tenantId: string;
  readonly consumerId: string;
  readonly units: number;
  /** Done deliveries counted (including those with 0 units). */
  readonly deliveries: number;
}

export interface UsageReport {
  readonly from: number;
  readonly to: number;
  readonly rows: readonly UsageRow[];
  readonly totalUnits: number;
  /** What the window is on: receipt time (the index) or acknowledgement time (`--scan`). */
  readonly attributedBy: 'receivedAt' | 'ackAt';
  /** Items read through the window index (absent for a scan). */
  readonly read?: Readonly<WindowReadCounters>;
}

export async function usage(deps: StoreDeps, request: UsageRequest): Promise<UsageReport> {
  if (!(request.from < request.to)) {
    throw new UsageError(`--from must be before --to (got ${iso(request.from)} .. ${iso(request.to)})`);
  }
  const window = { from: request.from, to: request.to };
  let items: UsageRowItem[];
  let reader: WindowReader | undefined;
  if (request.scan) {
    items = await scanUsageRows(deps, { window, tenant: request.tenant, consumer: request.consumer }, request.onProgress);
  } else {
    reader = request.reader ?? new WindowReader(deps);
    const receipts = await reader.receipts({ window, tenant: request.tenant, consumer: request.consumer }, request.onProgress);
    const rows = await reader.ledgerRows<Pick<LedgerItem, 'pk' | 'tenantId' | 'consumerId' | 'units' | 'state'>>(
      request.consumer === undefined ? receipts : receipts.map((r) => ({ ...r, consumers: [request.consumer as string] })),
      { projection: 'pk, tenantId, consumerId, units, #state', names: { '#state': 'state' } },
    );
    items = [...rows.values()].filter((row) => row.state === 'done' && (request.tenant === undefined || row.tenantId === request.tenant));
  }
  const sums = new Map<string, { tenantId: string; consumerId: string; units: number; deliveries: number }>();
  for (const item of items) {
    const key = `${item.tenantId}\u0000${item.consumerId}`;
    const row = sums.get(key) ?? { tenantId: item.tenantId, consumerId: item.consumerId, units: 0, deliveries: 0 };
    row.units += typeof item.units === 'number' ? item.units : 0;
    row.deliveries++;
    sums.set(key, row);
  }
  const rows = [...sums.values()].sort((a, b) => a.tenantId.localeCompare(b.tenantId) || a.consumerId.localeCompare(b.consumerId));
  return {
    from: request.from,
    to: request.to,
    rows,
    totalUnits: rows.reduce((n, r) => n + r.units, 0),
    attributedBy: request.scan ? 'ackAt' : 'receivedAt',
    ...(reader ? { read: { ...reader.counters } } : {}),
  };
}

/**
 * RFC 4180 CSV for invoicing (`hookledger usage --format csv`, the console's download): a header, then
 * one row per (tenant, consumer) with the window, units and done deliveries. Values are quoted when
 * they hold a comma, `;`, quote or line break; a tenant id starting with `=`, `+`, `-` or `@` is
 * written `'`-prefixed so no spreadsheet runs it (ops/csv.ts `csvCell`).
 */
export function formatUsageCsv(report: UsageReport): string {
  const lines: (string | number)[][] = [['window_from', 'window_to', 'tenant_id', 'consumer_id', 'units', 'deliveries']];
  for (const r of report.rows) lines.push([iso(report.from), iso(report.to), r.tenantId, r.consumerId, r.units, r.deliveries]);
  return csv(lines);
}
