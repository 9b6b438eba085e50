/**
 * Usage: billable units summed by tenant and consumer over done ledger items acknowledged in
 * [from, to). The tenant is the one captured at intake and copied onto the ledger item, never
 * looked up again. Replays never add units, so a replayed delivery counts once.
 *
 * Scale: a filtered Scan of the Ledger (see lambdas/shared/table-scan.ts).
 */
import { iso } from '../time';
import { scanUsageRows, type Window } from '../../lambdas/shared/table-scan';
import type { Progress, StoreDeps } from './deps';
import { UsageError } from '../errors';

export interface UsageRequest extends Window {
  readonly tenant?: string;
  readonly consumer?: string;
  readonly onProgress?: Progress;
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
}

export async function usage(deps: StoreDeps, request: UsageRequest): Promise<UsageReport> {
  if (!(request.from < request.to)) {
    throw new UsageError(`--from must be before --to (got ${iso(request.from)} .. ${iso(request.to)})`);
  }
  const items = await scanUsageRows(
    deps,
    { window: { from: request.from, to: request.to }, tenant: request.tenant, consumer: request.consumer },
    request.onProgress,
  );
  const sums = new Map<string, { tenantId: string; consumerId: string; units: number; deliveries: number }>();
  for (const item of items) {
    const key = `${item.tenantId}\u0000${item.consumerId}`;
    const row = sums.get(key) ?? { tenantId: item.tenantId, consumerId: item.consumerId, units: 0, deliveries: 0 };
    row.units += typeof item.units === 'number' ? item.units : 0;
    row.deliveries++;
    sums.set(key, row);
  }
  const rows = [...sums.values()].sort((a, b) => a.tenantId.localeCompare(b.tenantId) || a.consumerId.localeCompare(b.consumerId));
  return { from: request.from, to: request.to, rows, totalUnits: rows.reduce((n, r) => n + r.units, 0) };
}
