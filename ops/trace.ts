/**
 * Trace: everything recorded about one event. The receipt (attribution, delivery set, payload hash,
 * whether the raw payload is still kept), and for each expected delivery its ledger state, attempts,
 * errors, usage row, replays and access log. Ledger items for consumers outside the delivery set are
 * shown too, marked unexpected.
 */
import { ledgerItemsByKey } from '../adapters/table-scan';
import {
  type ConflictItem,
  type ErrorEntry,
  type EventItem,
  type LedgerItem,
  ledgerKey,
  type ReadEntry,
  type ReplayRequestEntry,
} from '../core/model';
import { type ConfigDeps, eventStoresOf, type StoreDeps } from './deps';
import { findReceipt } from './receipts';

export interface TraceDelivery {
  readonly consumer: string;
  /** In the receipt's delivery set. */
  readonly expected: boolean;
  /** `ready`: expected, no ledger item yet. */
  readonly state: LedgerItem['state'] | 'ready';
  readonly attempts: number;
  readonly leaseUntil?: number;
  readonly lastErrorCategory?: string;
  readonly errors: readonly ErrorEntry[];
  readonly tenantId?: string;
  readonly principal?: string;
  readonly units?: number;
  readonly ackAt?: number;
  readonly policyVersion?: string;
  readonly outcome?: string;
  readonly replays: NonNullable<LedgerItem['replays']>;
  readonly replayRequests: readonly ReplayRequestEntry[];
  readonly reads: readonly ReadEntry[];
}

export interface TraceReport {
  readonly receipt: {
    readonly source: string;
    readonly eventId: string;
    readonly tenantId: string;
    readonly keyId: string;
    readonly eventType: string;
    readonly receivedAt: number;
    /** Which signing secret verified the webhook; absent when `origin` is `provider_api` (`hookledger gaps --recover`). */
    readonly secretVersion?: string;
    /** `webhook`, or `provider_api` for an event recorded from the provider's list of events. */
    readonly origin: string;
    /** `hmac-sha256:<hex>` (keyed, see `hookledger verify-payload`); `sha256:<hex>` on receipts from before it. */
    readonly payloadHash: string;
    readonly payloadBytes: number;
    readonly payload: 'present' | 'expired' | 'erased';
    /** Set once `hookledger erase` removed the payload: when, by whom, which run. */
    readonly erased?: { readonly at: number; readonly by: string; readonly erasureId: string };
    /** Set when the body was too large for its payload item: the payload bucket's object key. */
    readonly payloadObject?: string;
    readonly payloadExpiresAt: number;
    readonly consumers: readonly string[];
  };
  readonly deliveries: readonly TraceDelivery[];
  /** Requests that named this event id with other bytes (answered `duplicate_conflict`, nothing stored). */
  readonly conflicts: { readonly count: number; readonly entries: ConflictItem['entries'] };
}

export async function trace(deps: StoreDeps & ConfigDeps, eventId: string, options: { source?: string } = {}): Promise<TraceReport> {
  const receipt: EventItem = await findReceipt(deps, eventId, options.source);
  const { payloads, receiptAdmin: receipts } = eventStoresOf(deps);
  const expected = receipt.consumers ?? [];
  const candidates = [...new Set([...expected, ...deps.config.consumers.map((c) => c.id)])];
  // Three independent reads, at once (the console's Event view waits on them).
  const [payloadState, conflict, items] = await Promise.all([
    payloads.payloadState(receipt.source, receipt.eventId, receipt.payloadHmac),
    receipts.getConflict(receipt.source, receipt.eventId) as Promise<ConflictItem | undefined>,
    ledgerItemsByKey<LedgerItem>(
      deps,
      candidates.map((c) => ledgerKey(receipt.source, receipt.eventId, c)),
    ),
  ]);
  const deliveries: TraceDelivery[] = [];
  for (const consumer of candidates) {
    const item = items.get(ledgerKey(receipt.source, receipt.eventId, consumer));
    const isExpected = expected.includes(consumer);
    if (!item && !isExpected) continue;
    deliveries.push({
      consumer,
      expected: isExpected,
      state: item?.state ?? 'ready',
      attempts: item?.attempt ?? 0,
      ...(item?.state === 'leased' && item.leaseUntil !== undefined ? { leaseUntil: item.leaseUntil } : {}),
      ...pick(item, ['lastErrorCategory', 'tenantId', 'principal', 'units', 'ackAt', 'policyVersion', 'outcome']),
      errors: item?.errors ?? [],
      replays: item?.replays ?? [],
      replayRequests: item?.replayRequests ?? [],
      reads: item?.reads ?? [],
    });
  }

  return {
    receipt: {
      source: receipt.source,
      eventId: receipt.eventId,
      tenantId: receipt.tenantId,
      keyId: receipt.keyId,
      eventType: receipt.eventType,
      receivedAt: receipt.receivedAt,
      ...(receipt.secretVersion ? { secretVersion: receipt.secretVersion } : {}),
      origin: receipt.origin ?? 'webhook',
      payloadHash: receipt.payloadHmac ? `hmac-sha256:${receipt.payloadHmac}` : `sha256:${receipt.payloadSha256 ?? ''}`,
      payloadBytes: receipt.payloadBytes,
      payload: receipt.erasedAt !== undefined ? 'erased' : payloadState.present ? 'present' : 'expired',
      ...(receipt.erasedAt !== undefined
        ? { erased: { at: receipt.erasedAt, by: receipt.erasedBy ?? 'unknown', erasureId: receipt.erasureId ?? 'unknown' } }
        : {}),
      ...(payloadState.s3Key ? { payloadObject: payloadState.s3Key } : {}),
      payloadExpiresAt: receipt.payloadExpiresAt,
      consumers: expected,
    },
    deliveries,
    conflicts: { count: conflict?.count ?? 0, entries: conflict?.entries ?? [] },
  };
}

function pick<T extends object, K extends keyof T>(item: T | undefined, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  if (!item) return out;
  for (const key of keys) if (item[key] !== undefined) out[key] = item[key];
  return out;
}

/** A stored payload as a reader sees it: parsed when it is JSON, its text otherwise. */
export interface EventPayload {
  readonly json?: unknown;
  readonly text?: string;
}

/**
 * The trace and the event's stored payload (the console's Event view). No payload once it is past
 * retention or erased; a body kept in the payload bucket is named by the trace (`payloadObject`),
 * never fetched here.
 */
export async function traceWithPayload(
  deps: StoreDeps & ConfigDeps,
  eventId: string,
  options: { source?: string } = {},
): Promise<TraceReport & { readonly payload?: EventPayload }> {
  const report = await trace(deps, eventId, options);
  const { receipt } = report;
  if (receipt.payload !== 'present' || receipt.payloadObject) return report;
  const [scheme, hex] = receipt.payloadHash.split(':');
  const body = await eventStoresOf(deps).payloads.getPayload(receipt.source, receipt.eventId, scheme === 'hmac-sha256' ? hex : undefined);
  return body ? { ...report, payload: readable(body.toString('utf8')) } : report;
}

function readable(text: string): EventPayload {
  try {
    return { json: JSON.parse(text) };
  } catch {
    return { text };
  }
}
