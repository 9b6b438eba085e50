/**
 * Trace: everything recorded about one event. The receipt (attribution, delivery set, payload hash,
 * whether the raw payload is still kept), and for each expected delivery its ledger state, attempts,
 * errors, usage row, replays and access log. Ledger items for consumers outside the delivery set are
 * shown too, marked unexpected. And the event's timeline, read from the same rows (no other read).
 */
import { ledgerItemsByKey } from '../adapters/table-scan';
import type { ConsumerConfig } from '../core/config/schema';
import {
  type ConflictItem,
  type ErrorEntry,
  type EventItem,
  type LedgerItem,
  ledgerKey,
  type ReadEntry,
  type ReplayRequestEntry,
} from '../core/model';
import { traceRoot } from '../core/trace-header';
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
    /** With `tracing: 'xray'`: the X-Ray trace id of the intake invocation that wrote the receipt (when X-Ray sampled it). */
    readonly traceId?: string;
  };
  readonly deliveries: readonly TraceDelivery[];
  /** Requests that named this event id with other bytes (answered `duplicate_conflict`, nothing stored). */
  readonly conflicts: { readonly count: number; readonly entries: ConflictItem['entries'] };
  /** Every step from receipt to each consumer's last attempt (`timelineOf`). */
  readonly timeline: readonly TimelineStep[];
}

/**
 * One step of an event's timeline. `at` and `sinceReceiptMs` are absent for a step whose time nothing
 * records (`note` says so): the receipt's write on a receipt older than `recordedAt`; the fan-out's send to a consumer's
 * queue is, once that consumer's first claim kept the message's SQS SentTimestamp.
 */
export interface TimelineStep {
  readonly step: 'received' | 'recorded' | 'queued' | 'claimed' | 'acknowledged' | 'failed' | 'erased';
  readonly consumer?: string;
  /** The ledger's attempt number (the fencing token): one per claim, replays included. */
  readonly attempt?: number;
  readonly at?: number;
  readonly sinceReceiptMs?: number;
  /** `failed`, `erased`: the error's category. */
  readonly category?: string;
  /** `acknowledged`: the outcome the consumer gave (`ok`, `http_200`, `stale`). */
  readonly outcome?: string;
  /** Set on a replay's claim and outcome. */
  readonly replayId?: string;
  /** An HTTP destination's answer, read from the outcome or category `http_<status>` the worker records. */
  readonly httpStatus?: number;
  /**
   * From the claim to this outcome, ms. For an HTTP destination this is the request's latency with the
   * worker's own steps around it (payload, signing, the claim's write): the request alone is not timed.
   */
  readonly durationMs?: number;
  readonly note?: string;
}

/** What the timeline says of a step nothing times, or whose time another clock kept. */
export const TIMELINE_NOTES = {
  recorded: 'the receipt is written within the intake request, before its 202; receipts written before they kept recordedAt are not timed',
  queued:
    "the fan-out's send is timed by this consumer's first claim, which has not recorded one (not claimed yet, or claimed before claims kept it)",
  sent: "SQS's SentTimestamp of the message this consumer's first claim took (SQS's clock)",
  lost: 'no outcome recorded: the lease ran out (the worker stopped) or a later claim fenced it off',
} as const;

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
  const rows: Array<{ consumer: string; item?: LedgerItem }> = [];
  for (const consumer of candidates) {
    const item = items.get(ledgerKey(receipt.source, receipt.eventId, consumer));
    const isExpected = expected.includes(consumer);
    if (!item && !isExpected) continue;
    rows.push({ consumer, ...(item ? { item } : {}) });
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
      ...traceIdOf(receipt),
    },
    deliveries,
    conflicts: { count: conflict?.count ?? 0, entries: conflict?.entries ?? [] },
    timeline: timelineOf(receipt, rows, deps.config.consumers),
  };
}

/** The receipt's X-Ray trace id, when intake wrote its trace header on it. */
function traceIdOf(receipt: Pick<EventItem, 'traceHeader'>): { traceId?: string } {
  const traceId = receipt.traceHeader ? traceRoot(receipt.traceHeader) : undefined;
  return traceId ? { traceId } : {};
}

/**
 * The event's timeline from what the receipt and the ledger rows record: received; recorded (the
 * receipt's `recordedAt`); queued per consumer (the SentTimestamp its first claim kept); then per consumer each
 * attempt in order, its claim (the access log's entry: one per claim, so entry n is attempt n) and
 * its outcome (the acknowledgement, a replay's entry, or the error logged for that attempt). Past
 * LEDGER_LIST_CAP entries an attempt shows what is still listed.
 */
export function timelineOf(
  receipt: Pick<EventItem, 'receivedAt' | 'recordedAt'>,
  rows: ReadonlyArray<{ readonly consumer: string; readonly item?: LedgerItem }>,
  consumers: readonly Pick<ConsumerConfig, 'id' | 'kind'>[],
): TimelineStep[] {
  const since = (at: number) => ({ at, sinceReceiptMs: at - receipt.receivedAt });
  const steps: TimelineStep[] = [
    { step: 'received', ...since(receipt.receivedAt) },
    receipt.recordedAt === undefined
      ? { step: 'recorded', note: TIMELINE_NOTES.recorded }
      : { step: 'recorded', ...since(receipt.recordedAt) },
    ...rows.map(({ consumer, item }): TimelineStep => {
      const sentAt = item?.reads?.[0]?.sentAt;
      return sentAt === undefined
        ? { step: 'queued', consumer, note: TIMELINE_NOTES.queued }
        : { step: 'queued', consumer, ...since(sentAt), note: TIMELINE_NOTES.sent };
    }),
  ];
  for (const { consumer, item } of rows) {
    if (!item) continue;
    const http = consumers.some((c) => c.id === consumer && c.kind === 'http');
    for (let attempt = 1; attempt <= item.attempt; attempt++) steps.push(...attemptSteps(item, attempt, http, receipt.receivedAt));
    if (item.erasedAt !== undefined && item.state !== 'done') {
      steps.push({ step: 'erased', consumer, ...since(item.erasedAt), category: 'payload_erased' });
    }
  }
  return steps;
}

/** What ended one attempt, as its ledger row records it: the acknowledgement, a replay's entry, or the error logged for it. */
function outcomeOf(
  item: LedgerItem,
  attempt: number,
): { step: 'acknowledged' | 'failed'; at: number; code: string; replayId?: string } | undefined {
  if (item.ackAttempt === attempt && item.ackAt !== undefined) return { step: 'acknowledged', at: item.ackAt, code: item.outcome ?? 'ok' };
  const replayed = item.replays?.find((r) => r.attempt === attempt);
  if (replayed) return { step: 'acknowledged', at: replayed.at, code: replayed.outcome, replayId: replayed.replayId };
  const error = item.errors?.find((e) => e.attempt === attempt);
  return error && { step: 'failed', at: error.at, code: error.category };
}

/** One attempt's claim and outcome; an attempt past the access log's cap shows its outcome alone. */
function attemptSteps(item: LedgerItem, attempt: number, http: boolean, receivedAt: number): TimelineStep[] {
  const consumer = item.consumerId;
  const read = item.reads?.[attempt - 1];
  const steps: TimelineStep[] = [];
  const replay = (replayId?: string) => (replayId ? { replayId } : {});
  if (read) steps.push({ step: 'claimed', consumer, attempt, at: read.at, sinceReceiptMs: read.at - receivedAt, ...replay(read.replayId) });
  const end = outcomeOf(item, attempt);
  if (end) {
    const status = http ? /^http_(\d{3})$/.exec(end.code) : null;
    steps.push({
      step: end.step,
      consumer,
      attempt,
      at: end.at,
      sinceReceiptMs: end.at - receivedAt,
      ...(end.step === 'failed' ? { category: end.code } : { outcome: end.code }),
      ...replay(end.replayId ?? read?.replayId),
      ...(status ? { httpStatus: Number(status[1]) } : {}),
      ...(read ? { durationMs: end.at - read.at } : {}),
    });
    return steps;
  }
  const current = attempt === item.attempt && (item.state === 'leased' || item.replayLeaseUntil !== undefined);
  return read && !current ? [{ ...(steps[0] as TimelineStep), note: TIMELINE_NOTES.lost }] : steps;
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
