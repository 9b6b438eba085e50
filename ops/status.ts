/**
 * Status: per consumer, where its deliveries are (ready, leased, expired leases, retrying,
 * quarantined, done), how deep its queue and DLQ are, its oldest pending delivery, and whether it is
 * paused; plus intake counts.
 *
 * Window: the delivery-state and intake counts cover the events *received* in a window (default the
 * last 7 days) and their deliveries; queue and DLQ depth, paused and the fan-out failure queue are
 * read live and are whole. A delivery of an event received before the window is not counted (nor is
 * its age in `oldestPendingAt`): knowing how many there are would cost the scan the window avoids.
 *
 * Scale: by window, status reads the window index (adapters/window-index.ts): the tenant-day registry of the
 * window's days, the window's receipts and their ledger rows by key, so its cost follows the window,
 * never the history kept. `scan: true` (`--scan`) is the old whole-history answer: two full Scans
 * (adapters/table-scan.ts), projected down to the few attributes used, billed for every item of both tables;
 * only the scan counts a ledger row whose receipt does not exist.
 */
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import {
  type DeliveryStateRow,
  ledgerItemsByKey,
  type ReceiptSummary,
  scanDeliveryStates,
  scanReceiptSummaries,
  type Window,
} from '../adapters/table-scan';
import { type WindowReadCounters, WindowReader } from '../adapters/window-index';
import type { HookledgerConfig } from '../core/config/schema';
import { breakerKey, DAY_MS, LEDGER_CONSUMER_SEPARATOR, ledgerKey } from '../core/model';
import { type ConfigDeps, now as clockNow, type Progress, type QueuePair, type StoreDeps } from './deps';

export interface QueueDepth {
  /** ApproximateNumberOfMessages */
  readonly visible: number;
  /** ApproximateNumberOfMessagesNotVisible (in flight) */
  readonly inFlight: number;
}

export interface ConsumerStatus {
  readonly consumer: string;
  /** Absent when the pause state could not be read. */
  readonly paused?: boolean;
  /** Expected by a receipt, no ledger item yet (queued, or not yet sent). */
  readonly ready: number;
  /** Leased, lease still live. */
  readonly leased: number;
  /** Leased, lease ended (leaseUntil < now): the worker died or is late; SQS will hand it out again. */
  readonly expiredLeases: number;
  readonly retrying: number;
  readonly quarantined: number;
  readonly done: number;
  readonly queue?: QueueDepth;
  readonly dlq?: QueueDepth;
  /** receivedAt of the oldest delivery that is ready, leased or retrying (quarantined ones are parked). */
  readonly oldestPendingAt?: number;
  readonly oldestPendingAgeMs?: number;
}

/** The window status reads when given none: the events received in the last 7 days. */
export const DEFAULT_STATUS_SINCE_MS = 7 * DAY_MS;

export interface StatusReport {
  readonly at: number;
  /**
   * The events counted: those received in [from, to), with their deliveries. Absent with `scan`:
   * all of history was read.
   */
  readonly window?: Window;
  /** What the window index read (absent with `scan`). */
  readonly read?: Readonly<WindowReadCounters>;
  readonly consumers: readonly ConsumerStatus[];
  readonly intake: {
    readonly events: number;
    readonly byType: Readonly<Record<string, number>>;
    readonly bySecretVersion: Readonly<Record<string, number>>;
    /**
     * Per source, the newest receivedAt of a receipt verified by the previous secret: whether the
     * provider still signs with it, and so whether `secrets retire` is safe. Sources without one are absent.
     */
    readonly previousSecretLastVerified: Readonly<Record<string, number>>;
    /**
     * Requests by outcome (`recorded`, `duplicate`, refusal codes): refusals store nothing, so these
     * come from the running intake (the local stack's counters), not from the tables. Absent on AWS,
     * where the dashboard's IntakeRequests metric has them.
     */
    readonly outcomes?: Readonly<Record<string, number>>;
  };
  /** The fan-out's on-failure queue: stream batches the fan-out gave up on (`reconcile --repair` clears them). */
  readonly fanoutFailures?: QueueDepth;
}

/** What status reads: the tables and queues, never the configuration. */
export interface StatusReadDeps extends StoreDeps {
  readonly sqs?: SQSClient;
  readonly queues?: Readonly<Record<string, QueuePair>>;
  readonly fanoutFailureQueueUrl?: string;
}

export interface StatusDeps extends StatusReadDeps, ConfigDeps {}

export interface StatusOptions {
  /** Count the events received in this window and their deliveries. @default the last `since` ms */
  readonly window?: Window;
  /** Without `window`: the window is [now - since, now). @default DEFAULT_STATUS_SINCE_MS */
  readonly since?: number;
  /** Scan both tables instead: all of history, at the cost of every item of both. Default false. */
  readonly scan?: boolean;
  /** The reader to read the window with (its counters say what was read). */
  readonly reader?: WindowReader;
  /**
   * The consumers paused now; leave out (or resolve to undefined) when unknown. A promise is read
   * alongside the tables: the CLI asks the admin endpoint while the window is read.
   */
  readonly paused?: ReadonlySet<string> | Promise<ReadonlySet<string> | undefined>;
  /** Intake's requests by outcome, where the target keeps them; a promise as for `paused`. */
  readonly intakeOutcomes?: Readonly<Record<string, number>> | Promise<Readonly<Record<string, number>> | undefined>;
  readonly onProgress?: Progress;
}

/** Everything status reads, before it is counted per configured consumer (statusReport). */
export interface StatusReads extends Counted {
  readonly at: number;
  readonly window?: Window;
  readonly reader?: WindowReader;
  readonly depths: ReadonlyMap<string, { readonly queue: QueueDepth; readonly dlq: QueueDepth }>;
  readonly fanoutFailures?: QueueDepth;
  readonly paused?: ReadonlySet<string>;
  readonly intakeOutcomes?: Readonly<Record<string, number>>;
}

export async function status(deps: StatusDeps, options: StatusOptions = {}): Promise<StatusReport> {
  return statusReport(deps.config, await readStatus(deps, options));
}

/**
 * Status's reads, all at once (each answer is independent of the others). They need no
 * configuration, so a caller that still has to load it (the CLI) can do so while the stack answers.
 */
export async function readStatus(deps: StatusReadDeps, options: StatusOptions = {}): Promise<StatusReads> {
  const at = clockNow(deps);
  const window = options.scan ? undefined : (options.window ?? { from: at - (options.since ?? DEFAULT_STATUS_SINCE_MS), to: at });
  const reader = window ? (options.reader ?? new WindowReader(deps)) : undefined;
  const [{ receipts, ledger }, depths, fanoutFailures, paused, intakeOutcomes] = await Promise.all([
    window && reader ? readWindow(reader, window, options.onProgress) : scanAll(deps, options.onProgress),
    queueDepths(deps),
    deps.sqs && deps.fanoutFailureQueueUrl ? depth(deps.sqs, deps.fanoutFailureQueueUrl) : undefined,
    options.paused,
    options.intakeOutcomes,
  ]);
  return {
    at,
    receipts,
    ledger,
    depths,
    ...(window ? { window } : {}),
    ...(reader ? { reader } : {}),
    ...(fanoutFailures ? { fanoutFailures } : {}),
    ...(paused ? { paused } : {}),
    ...(intakeOutcomes ? { intakeOutcomes } : {}),
  };
}

/** One consumer's deliveries by state while they are counted; `oldest`: the oldest pending one's receivedAt. */
interface ConsumerCounts {
  ready: number;
  leased: number;
  expiredLeases: number;
  retrying: number;
  quarantined: number;
  done: number;
  oldest: number;
}

/** The report: what was read, counted per configured consumer. */
export function statusReport(config: HookledgerConfig, reads: StatusReads): StatusReport {
  const { at, window, reader, depths, paused } = reads;
  const ids = config.consumers.map((c) => c.id);
  const counts = new Map<string, ConsumerCounts>(
    ids.map((id) => [id, { ready: 0, leased: 0, expiredLeases: 0, retrying: 0, quarantined: 0, done: 0, oldest: Infinity }]),
  );
  const present = countLedger(counts, reads.ledger, at);
  const intake = countReceipts(counts, reads.receipts, present);
  return {
    at,
    ...(window ? { window: { from: window.from, to: window.to } } : {}),
    ...(reader ? { read: { ...reader.counters } } : {}),
    consumers: ids.map((id) => {
      const { oldest, ...c } = counts.get(id)!;
      const depth = depths.get(id);
      return {
        consumer: id,
        ...(paused ? { paused: paused.has(id) } : {}),
        ...c,
        ...(depth ? { queue: depth.queue, dlq: depth.dlq } : {}),
        ...(Number.isFinite(oldest) ? { oldestPendingAt: oldest, oldestPendingAgeMs: at - oldest } : {}),
      };
    }),
    intake: { ...intake, ...(reads.intakeOutcomes ? { outcomes: reads.intakeOutcomes } : {}) },
    ...(reads.fanoutFailures ? { fanoutFailures: reads.fanoutFailures } : {}),
  };
}

/** Counts the ledger rows into their consumers' states; returns the keys of the rows present. */
function countLedger(counts: Map<string, ConsumerCounts>, ledger: readonly DeliveryStateRow[], at: number): Set<string> {
  const present = new Set<string>();
  for (const row of ledger) {
    present.add(row.pk);
    const c = counts.get(row.consumerId ?? consumerOf(row.pk));
    if (!c) continue;
    if (row.state === 'leased') {
      if (typeof row.leaseUntil === 'number' && row.leaseUntil < at) c.expiredLeases++;
      else c.leased++;
    } else if (row.state === 'retrying') c.retrying++;
    else if (row.state === 'quarantined') c.quarantined++;
    else if (row.state === 'done') c.done++;
    if ((row.state === 'leased' || row.state === 'retrying') && typeof row.receivedAt === 'number') {
      c.oldest = Math.min(c.oldest, row.receivedAt);
    }
  }
  return present;
}

/** Intake's counts from the receipts, and each expected delivery with no ledger row yet counted ready. */
function countReceipts(
  counts: Map<string, ConsumerCounts>,
  receipts: readonly ReceiptSummary[],
  present: ReadonlySet<string>,
): Omit<StatusReport['intake'], 'outcomes'> {
  const byType: Record<string, number> = {};
  const bySecretVersion: Record<string, number> = {};
  const previousSecretLastVerified: Record<string, number> = {};
  for (const receipt of receipts) {
    byType[receipt.eventType] = (byType[receipt.eventType] ?? 0) + 1;
    // A receipt recorded from the provider's API (`hookledger gaps --recover`) was verified by no secret.
    const version = receipt.secretVersion ?? 'provider_api';
    bySecretVersion[version] = (bySecretVersion[version] ?? 0) + 1;
    if (receipt.secretVersion === 'previous') {
      previousSecretLastVerified[receipt.source] = Math.max(previousSecretLastVerified[receipt.source] ?? 0, receipt.receivedAt);
    }
    for (const consumerId of receipt.consumers ?? []) {
      const c = counts.get(consumerId);
      if (!c || present.has(ledgerKey(receipt.source, receipt.eventId, consumerId))) continue;
      c.ready++;
      c.oldest = Math.min(c.oldest, receipt.receivedAt);
    }
  }
  return {
    events: receipts.length,
    byType: sortKeys(byType),
    bySecretVersion: sortKeys(bySecretVersion),
    previousSecretLastVerified: sortKeys(previousSecretLastVerified),
  };
}

interface Counted {
  readonly receipts: readonly ReceiptSummary[];
  readonly ledger: readonly DeliveryStateRow[];
}

/** The window's receipts through the index, then the ledger rows their delivery sets name, by key. */
async function readWindow(reader: WindowReader, window: Window, onProgress?: Progress): Promise<Counted> {
  const receipts = await reader.receipts({ window }, onProgress);
  const rows = await reader.ledgerRows<DeliveryStateRow>(receipts, {
    projection: 'pk, consumerId, #state, leaseUntil, receivedAt',
    names: { '#state': 'state' },
  });
  onProgress?.(reader.counters.receiptsRead + reader.counters.ledgerRowsRead, undefined);
  return { receipts, ledger: [...rows.values()] };
}

/** All of history: both tables scanned (projected). */
async function scanAll(deps: StoreDeps, onProgress?: Progress): Promise<Counted> {
  let read = [0, 0];
  const progress = (i: 0 | 1) => (n: number) => {
    read = i === 0 ? [n, read[1] ?? 0] : [read[0] ?? 0, n];
    onProgress?.((read[0] ?? 0) + (read[1] ?? 0), undefined);
  };
  const [receipts, ledger] = await Promise.all([scanReceiptSummaries(deps, progress(0)), scanDeliveryStates(deps, progress(1))]);
  return { receipts, ledger };
}

async function queueDepths(deps: StatusReadDeps): Promise<Map<string, { queue: QueueDepth; dlq: QueueDepth }>> {
  const out = new Map<string, { queue: QueueDepth; dlq: QueueDepth }>();
  const { sqs, queues } = deps;
  if (!sqs || !queues) return out;
  await Promise.all(
    Object.entries(queues).map(async ([id, pair]) => {
      const [queue, dlq] = await Promise.all([depth(sqs, pair.url), depth(sqs, pair.dlqUrl)]);
      out.set(id, { queue, dlq });
    }),
  );
  return out;
}

export async function depth(sqs: SQSClient, queueUrl: string): Promise<QueueDepth> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(out.Attributes?.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

/** An HTTP consumer's circuit breaker: its consecutive failures, and the count that pauses it. */
export interface CircuitState {
  readonly failures: number;
  readonly breakAfter?: number;
}

/** The circuit breakers of the configured HTTP consumers, read from their ledger rows (one batch read). */
export async function circuits(deps: StoreDeps & ConfigDeps): Promise<Record<string, CircuitState>> {
  const http = deps.config.consumers.filter((c) => c.kind === 'http');
  const breakers = await ledgerItemsByKey<{ pk: string; failures?: number }>(
    deps,
    http.map((c) => breakerKey(c.id)),
  );
  return Object.fromEntries(
    http.map((c) => [c.id, { failures: Number(breakers.get(breakerKey(c.id))?.failures ?? 0), breakAfter: c.http?.breakAfterFailures }]),
  );
}

/** For rows without a consumerId copy: whatever follows the key's last separator. */
const consumerOf = (pk: string) => pk.slice(pk.lastIndexOf(LEDGER_CONSUMER_SEPARATOR) + 1);

function sortKeys(record: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
