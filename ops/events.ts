/**
 * Events: find receipts by event id, or by window (through the window index: the tenant-day
 * registry, then the tenant-day partitions; never a table scan) narrowed by tenant, source, type,
 * consumer and the state of a delivery, newest first, one page at a time. Each row carries its
 * deliveries' states, read by key from the ledger.
 *
 * Paging: the window is read once per page and the page cut from the newest; the cursor is the
 * offset into that order. A window's cost follows the window (what `status` and `usage` read), so a
 * console asks for a short one by default (the last 24 hours).
 */
import { eventStoreItemsByKey, type Window } from '../adapters/table-scan';
import { type IndexedReceipt, WindowReader } from '../adapters/window-index';
import { conflictKey, type LedgerItem, ledgerKey } from '../core/model';
import { type ConfigDeps, eventStoresOf, type StoreDeps } from './deps';
import { UsageError } from './errors';

export const EVENT_PAGE_SIZE = 25;
const MAX_PAGE_SIZE = 200;

/** A delivery's state as the operator sees it: `ready` when no ledger row exists yet. */
export type DeliveryStateOrReady = LedgerItem['state'] | 'ready';
export const DELIVERY_STATES: readonly DeliveryStateOrReady[] = ['ready', 'leased', 'retrying', 'quarantined', 'done'];

/**
 * What intake answered for a stored event: `recorded` (every receipt), or `duplicate_conflict` when a
 * later request named its id with other bytes (the conflict audit intake keeps; nothing else stored).
 * Refusals and plain duplicates store nothing, so no event has them: `status` counts those.
 */
export type StoredOutcome = 'recorded' | 'duplicate_conflict';
export const STORED_OUTCOMES: readonly StoredOutcome[] = ['recorded', 'duplicate_conflict'];

export interface EventSearch {
  /**
   * One event by id (every configured source tried, or `source`): no window is read. With a window,
   * an id ending in `*` or one no source has is a prefix of ids (EVENT_ID_PREFIX_MIN characters or more).
   */
  readonly eventId?: string;
  readonly window?: Window;
  readonly tenant?: string;
  readonly source?: string;
  /** An event type, or a prefix of types ending in `*` (`payment.*`). */
  readonly type?: string;
  readonly consumer?: string;
  /** Only events with at least one delivery (of `consumer`, when given) in this state. */
  readonly state?: DeliveryStateOrReady;
  /** Only events intake answered so (`duplicate_conflict`: one conflict read per candidate, by key). */
  readonly outcome?: StoredOutcome;
  /** Offset into the newest-first order (the previous page's `next`). */
  readonly cursor?: number;
  readonly limit?: number;
}

export interface EventRow {
  readonly source: string;
  readonly eventId: string;
  readonly tenantId: string;
  readonly eventType: string;
  readonly receivedAt: number;
  readonly secretVersion: string;
  readonly deliveries: Readonly<Record<string, DeliveryStateOrReady>>;
}

export interface EventPage {
  readonly rows: readonly EventRow[];
  /** Matching events in the window (or 0/1 by id). */
  readonly total: number;
  /** The cursor of the next page; absent on the last. */
  readonly next?: number;
  readonly window?: Window;
  /** Set when the id searched for was read as a prefix of ids. */
  readonly idPrefix?: string;
}

type Candidate = Pick<IndexedReceipt, 'source' | 'eventId' | 'tenantId' | 'eventType' | 'receivedAt' | 'secretVersion' | 'consumers'>;

interface WithStates {
  readonly receipt: Candidate;
  readonly deliveries: Record<string, DeliveryStateOrReady>;
}

export async function searchEvents(deps: StoreDeps & ConfigDeps, search: EventSearch): Promise<EventPage> {
  const { limit, cursor } = checkSearch(search);
  const reader = new WindowReader(deps);
  const { receipts, idPrefix } = await candidates(deps, reader, search);
  // States are needed for every candidate when filtering by state; otherwise for the page only.
  let matching: WithStates[];
  let total: number;
  if (search.state !== undefined) {
    const all = await withStates(reader, receipts);
    matching = all.filter(({ deliveries }) =>
      search.consumer !== undefined
        ? deliveries[search.consumer] === search.state
        : Object.values(deliveries).some((s) => s === search.state),
    );
    total = matching.length;
    matching = matching.slice(cursor, cursor + limit);
  } else {
    total = receipts.length;
    matching = await withStates(reader, receipts.slice(cursor, cursor + limit));
  }
  return {
    rows: matching.map(({ receipt: r, deliveries }) => ({
      source: r.source,
      eventId: r.eventId,
      tenantId: r.tenantId,
      eventType: r.eventType,
      receivedAt: r.receivedAt,
      // A receipt recovered from the provider's API (`gaps --recover`) was verified by no secret.
      secretVersion: r.secretVersion ?? 'provider_api',
      deliveries,
    })),
    total,
    ...(cursor + limit < total ? { next: cursor + limit } : {}),
    ...(search.window && (search.eventId === undefined || idPrefix !== undefined) ? { window: search.window } : {}),
    ...(idPrefix !== undefined ? { idPrefix } : {}),
  };
}

/** The page's size and offset, and usage errors for a state or an outcome no event can have. */
function checkSearch(search: EventSearch): { limit: number; cursor: number } {
  const limit = Math.min(search.limit ?? EVENT_PAGE_SIZE, MAX_PAGE_SIZE);
  if (!(limit > 0)) throw new UsageError(`limit must be between 1 and ${MAX_PAGE_SIZE} (got ${search.limit})`);
  const cursor = search.cursor ?? 0;
  if (!Number.isInteger(cursor) || cursor < 0) throw new UsageError(`cursor must be a whole number from 0 (got ${search.cursor})`);
  if (search.state !== undefined && !DELIVERY_STATES.includes(search.state)) {
    throw new UsageError(`state must be one of ${DELIVERY_STATES.join(', ')} (got "${search.state}")`);
  }
  if (search.outcome !== undefined && !STORED_OUTCOMES.includes(search.outcome)) {
    throw new UsageError(
      `outcome must be one of ${STORED_OUTCOMES.join(', ')} (got "${search.outcome}"); refusals and duplicates store no event (status counts them)`,
    );
  }
  return { limit, cursor };
}

/**
 * The event's receipts by id; or the window's, narrowed by the index and then by the type's and the
 * id's prefix (an id ending in `*`, or one no source has, is read as a prefix of ids); newest first,
 * only those with a conflict when asked.
 */
async function candidates(
  deps: StoreDeps & ConfigDeps,
  reader: WindowReader,
  search: EventSearch,
): Promise<{ receipts: Candidate[]; idPrefix?: string }> {
  const id = search.eventId?.trim();
  if (id !== undefined && !id.endsWith('*')) {
    const sources = search.source !== undefined ? [search.source] : deps.config.sources.map((s) => s.id);
    const found = await eventStoresOf(deps).receiptAdmin.findReceipts(id, sources);
    if (found.length > 0 || !search.window) return { receipts: await withConflictsOnly(deps, found, search) };
  }
  if (!search.window) throw new UsageError('give an event id, or a window (from, to)');
  const idPrefix = id === undefined ? undefined : eventIdPrefix(id);
  const match = receiptMatcher({ type: search.type, idPrefix });
  const receipts = await reader.receipts({
    window: search.window,
    tenant: search.tenant,
    source: search.source,
    type: match.type,
    consumer: search.consumer,
  });
  return { receipts: await withConflictsOnly(deps, receipts.filter(match.matches), search), ...(idPrefix ? { idPrefix } : {}) };
}

/** Newest first; only those with a conflict when the search asks for `duplicate_conflict`. */
async function withConflictsOnly(deps: StoreDeps, receipts: Candidate[], search: EventSearch): Promise<Candidate[]> {
  receipts.sort((a, b) => b.receivedAt - a.receivedAt || a.eventId.localeCompare(b.eventId));
  if (search.outcome !== 'duplicate_conflict') return receipts;
  const conflicts = await eventStoreItemsByKey<{ pk: string }>(
    deps,
    receipts.map((r) => conflictKey(r.source, r.eventId)),
  );
  return receipts.filter((r) => conflicts.has(conflictKey(r.source, r.eventId)));
}

/** The shortest event id prefix searched for: shorter ones match too much of a window to mean one event. */
export const EVENT_ID_PREFIX_MIN = 6;

/** The search box's text as a prefix of event ids (a trailing `*` allowed); a usage error says why one cannot match. */
export function eventIdPrefix(text: string): string {
  const prefix = text.trim().replace(/\*$/, '');
  if (prefix.includes('*')) {
    throw new UsageError(`Event id "${text}" cannot match: a wildcard matches only at the end (evt_01J8K7*).`);
  }
  if (prefix.length < EVENT_ID_PREFIX_MIN) {
    throw new UsageError(
      `An event id prefix needs at least ${EVENT_ID_PREFIX_MIN} characters to search by (got "${prefix}", ${prefix.length}).`,
    );
  }
  return prefix;
}

/** What the window index can filter on (an exact type), and the test every receipt it returns must pass. */
export interface ReceiptMatch {
  readonly type?: string;
  readonly matches: (receipt: Pick<IndexedReceipt, 'eventId' | 'eventType'>) => boolean;
}

/**
 * A type (exact, or a prefix when it ends in `*`: `payment.*`) and an id prefix as one test; replay
 * reads its window with the same. A wildcard elsewhere in the type is a usage error that says why.
 */
export function receiptMatcher(filter: { readonly type?: string; readonly idPrefix?: string }): ReceiptMatch {
  const { type, idPrefix } = filter;
  let typePrefix: string | undefined;
  if (type?.includes('*')) {
    if (type.indexOf('*') !== type.length - 1) {
      throw new UsageError(`Type "${type}" cannot match: a wildcard matches only at the end (payment.*).`);
    }
    typePrefix = type.slice(0, -1);
  }
  return {
    ...(type !== undefined && typePrefix === undefined ? { type } : {}),
    matches: (r) =>
      (typePrefix === undefined || r.eventType.startsWith(typePrefix)) && (idPrefix === undefined || r.eventId.startsWith(idPrefix)),
  };
}

/** Each receipt with its deliveries' states, read by key from the ledger (`ready`: no row yet). */
async function withStates(reader: WindowReader, list: readonly Candidate[]): Promise<WithStates[]> {
  const rows = await reader.ledgerRows<Pick<LedgerItem, 'pk' | 'state'>>(list, {
    projection: 'pk, #state',
    names: { '#state': 'state' },
  });
  return list.map((r) => ({
    receipt: r,
    deliveries: Object.fromEntries(
      (r.consumers ?? []).map((c) => [c, (rows.get(ledgerKey(r.source, r.eventId, c))?.state ?? 'ready') as DeliveryStateOrReady]),
    ),
  }));
}
