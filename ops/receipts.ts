/**
 * Finding receipts for the operations that name one event (replay --event, trace, verify-payload) and
 * the retention rule the window operations (replay, backfill) apply. The reads are the event store
 * adapter's; this module only turns what it found into the operator's answer.
 */
import type { EventItem } from '../core/model';
import { type ConfigDeps, eventStoresOf, type StoreDeps } from './deps';
import { NotFoundError, UsageError } from './errors';

/** The receipt of one event, trying every configured source when none is given. */
export async function findReceipt(
  deps: StoreDeps & ConfigDeps,
  eventId: string,
  source: string | undefined,
  consumer?: string,
): Promise<EventItem> {
  const sources = source !== undefined ? [source] : deps.config.sources.map((s) => s.id);
  const found = await eventStoresOf(deps).receiptAdmin.findReceipts(eventId, sources);
  if (found.length === 0) {
    throw new NotFoundError(`no receipt for event ${eventId} (sources tried: ${sources.join(', ')}); check the id, or pass --source`);
  }
  if (found.length > 1) {
    throw new UsageError(`event ${eventId} exists for several sources (${found.map((f) => f.source).join(', ')}); pass --source`);
  }
  const receipt = found[0] as EventItem;
  if (consumer !== undefined && !(receipt.consumers ?? []).includes(consumer)) {
    throw new UsageError(
      `event ${eventId} was never meant for ${consumer} (its delivery set: ${(receipt.consumers ?? []).join(', ') || 'empty'}); ` +
        `use \`hookledger backfill\` to add a consumer to past events`,
    );
  }
  return receipt;
}

/** Receipts whose payload is still served, and those past retention. */
export function splitByRetention<T extends Pick<EventItem, 'payloadExpiresAt'>>(receipts: readonly T[], now: number) {
  const kept: T[] = [];
  const expired: T[] = [];
  for (const r of receipts) (r.payloadExpiresAt > now ? kept : expired).push(r);
  return { kept, expired };
}

/** Receipts whose payload an operator erased (`hookledger erase`), and the others: erased events are never re-sent. */
export function splitByErasure<T extends Pick<EventItem, 'erasedAt'>>(receipts: readonly T[]) {
  const kept: T[] = [];
  const erased: T[] = [];
  for (const r of receipts) (r.erasedAt === undefined ? kept : erased).push(r);
  return { kept, erased };
}
