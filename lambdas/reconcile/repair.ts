/**
 * Repair: reconcile, then re-queue every delivery whose message is gone while its work is not done,
 * through the ledger-safe re-queue path (adapters/requeue.ts, a `repairId` requeue item).
 * Shared by `hookledger reconcile --repair`, the scheduled reconciler and the local stack's start.
 *
 *   repaired      missing_delivery (a receipt's consumer has no ledger item past the grace) and
 *                 stalled_delivery (leased or retrying, nobody working on it past the grace)
 *   not repaired  a paused consumer's deliveries (its messages wait in its queue; resume it), those
 *                 beyond `maxRepairs` (the next run takes them), and every other kind of violation
 *                 (a re-send cannot fix a wrong tenant or a missing usage row: those need a person)
 *
 * Why a repair never charges twice: the re-sent message is an ordinary delivery. If the original
 * message was not lost after all, or the delivery completed meanwhile, the consumer's claim finds the
 * row done (a no-op) or leased (it waits for the lease), and the acknowledgement is fenced by
 * `attempt`; the ledger's one row per (event, consumer) is never written twice.
 *
 * The fan-out's on-failure queue: each record there names a stream batch the fan-out gave up on, by
 * stream, shard, first and last sequence numbers and approximate arrival times (on AWS never the
 * keys). The batch is decoded by reading those stream records back (adapters/stream-batch.ts):
 * receipts (each delivery with no ledger row is repaired) and re-queue items, whose receipts can be of
 * any age (a replay, a backfill, an earlier repair): each is re-sent unless its ledger row shows it
 * took effect (a replay: the row names its replay id; a repair: the row is done, quarantined or in
 * progress), a replay as the same replay. The record is deleted only when every delivery it names
 * took effect or was re-queued by this run. A record that cannot be decoded (the stream keeps records
 * 24 h; no stream access) is never deleted: the receipts that arrived in its time range are still
 * repaired, and the record stays on the queue, counted as `undecoded`, for an operator.
 *
 * `carried`: deliveries an earlier scheduled run could not repair (paused consumer, over the per-run
 * limit). Their ledger rows are read again: done or quarantined ones are dropped, those in progress
 * are returned in `inProgress`, the others are candidates ahead of this run's findings.
 */
import { ChangeMessageVisibilityCommand, DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { auditItem } from '../../adapters/audit';
import { AuditLog } from '../../adapters/audit-log';
import { newRepairId } from '../../adapters/ids';
import { forEachLimited } from '../../adapters/pool';
import { requeueItem, requeueUnder } from '../../adapters/requeue';
import { Requeues } from '../../adapters/requeues';
import type { StreamBatchPort, StreamBatchRef } from '../../adapters/stream-batch';
import { eventStoreItemsByKey, ledgerItemsByKey } from '../../adapters/table-scan';
import { type EventItem, eventKey, type LedgerItem, ledgerKey, type RequeueItem } from '../../core/model';
import {
  DEFAULT_GRACE_MS,
  isStalled,
  type ReconcileDeps,
  type ReconcileOptions,
  type ReconcileReport,
  reconcile,
  type ViolationKind,
} from './reconcile';

export const REPAIRABLE_KINDS: readonly ViolationKind[] = ['missing_delivery', 'stalled_delivery'];
/** Ledger keys listed on the audit item; beyond this the item says how many more (items stop at 400 KB). */
export const MAX_AUDITED_DELIVERIES = 2000;
const WRITE_CONCURRENCY = 8;
/** Stream arrival times are approximate (minute-truncated on DynamoDB Local): widen each range. */
const ARRIVAL_MARGIN_BEFORE_MS = 60_000;
const ARRIVAL_MARGIN_AFTER_MS = 120_000;

/** The fan-out's on-failure queue, and the stream its records name. */
export interface FanoutFailureQueue {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /**
   * Reads back the stream records a failure record names. Without it no record can be decoded, so
   * none is deleted (its time range's receipts are still repaired).
   */
  readonly streams?: StreamBatchPort;
}

export interface RepairDeps extends ReconcileDeps {
  /** Recorded on the audit item: the CLI's $USER, `reconciler`, `npm start`. */
  readonly operator: string;
  /** The fan-out's on-failure queue, when the caller can read it. */
  readonly fanoutFailures?: FanoutFailureQueue;
}

export interface RepairOptions extends ReconcileOptions {
  /** Consumers paused now: their deliveries are reported, not repaired. */
  readonly paused?: ReadonlySet<string>;
  /** Count only: no requeue, no audit, failure records left as they are. */
  readonly dryRun?: boolean;
  /** At most this many re-queues per run. @default unlimited */
  readonly maxRepairs?: number;
  /** What started the repair, on the audit item. */
  readonly trigger: 'cli' | 'schedule' | 'start';
  /** Deliveries earlier runs could not repair (the scheduled reconciler's carry-forward): checked again, taken first. */
  readonly carried?: readonly RepairDelivery[];
}

export type UnrepairedReason = 'paused' | 'limit';

export interface RepairDelivery {
  readonly kind: ViolationKind;
  readonly source: string;
  readonly eventId: string;
  readonly consumerId: string;
  readonly ledgerKey: string;
  /**
   * A replay or backfill whose re-queue was lost (a fan-out failure record named it): re-sent as that
   * replay, since a plain repair leaves a done delivery as it is.
   */
  readonly replayId?: string;
}

export interface RepairResult {
  /** What reconcile found over the window (before anything was repaired). */
  readonly report: ReconcileReport;
  readonly dryRun: boolean;
  /** Absent on a dry run or when there was nothing to repair. */
  readonly repairId?: string;
  /** Missing or stalled deliveries found (the window's, plus those of fan-out failure records). */
  readonly candidates: number;
  /** Re-queued now (on a dry run: would be). */
  readonly repaired: number;
  readonly deliveries: readonly RepairDelivery[];
  readonly unrepaired: number;
  readonly unrepairedByReason: Readonly<Record<UnrepairedReason, number>>;
  readonly unrepairedDeliveries: readonly (RepairDelivery & { readonly reason: UnrepairedReason })[];
  /** Violations a re-send cannot fix (tenant_mismatch, done_without_usage, ...): listed in the report. */
  readonly notRepairable: number;
  /** Carried deliveries still in progress (a live lease, a recent retry): not re-sent; to be checked again. */
  readonly inProgress: readonly RepairDelivery[];
  /**
   * `cleared`: deleted (everything they name took effect or was re-queued); `undecoded`: kept, their
   * stream records past retention or unreadable; the rest kept for deliveries not repaired now.
   */
  readonly fanoutFailureRecords?: {
    readonly read: number;
    readonly cleared: number;
    readonly unreadable: number;
    readonly undecoded: number;
  };
}

interface FailureRecord {
  readonly receiptHandle: string;
  readonly from: number;
  readonly to: number;
  readonly batch?: StreamBatchRef;
}

/** Whether a delivery named for repair took effect, is under way, or must be sent again. */
type Standing = 'settled' | 'active' | 'lost';

/** What a decoded failure record names: a receipt's delivery, or a re-queue (repair, replay, backfill). */
interface Named {
  readonly origin: 'receipt' | 'requeue';
  readonly delivery: RepairDelivery;
}

/**
 * The deliveries a run may re-send, by ledger key, in the order they are taken under the limit:
 * carried (oldest) first, then failure records', then this window's.
 */
class Candidates {
  private readonly byKey = new Map<string, RepairDelivery>();

  add(d: RepairDelivery): void {
    const had = this.byKey.get(d.ledgerKey);
    // A replay re-sent covers a repair of the same delivery too (it is claimed as usual when not done).
    if (!had) this.byKey.set(d.ledgerKey, d);
    else if (d.replayId && !had.replayId) this.byKey.set(d.ledgerKey, { ...had, replayId: d.replayId });
  }

  /** A delivery that must be sent again: stalled when it has a row (and is no replay), missing otherwise. */
  addLost(d: RepairDelivery, row: LedgerItem | undefined): void {
    this.add({ ...d, kind: row && !d.replayId ? 'stalled_delivery' : 'missing_delivery' });
  }

  get size(): number {
    return this.byKey.size;
  }

  values(): IterableIterator<RepairDelivery> {
    return this.byKey.values();
  }
}

/** What every step of one repair run reads. */
interface RepairRun {
  readonly deps: RepairDeps;
  readonly options: RepairOptions;
  readonly now: number;
  /** A row that stopped before this (no live lease, no recent retry) is stalled. */
  readonly cutoff: number;
  readonly leasesAbandoned: boolean;
  readonly candidates: Candidates;
}

/** The fan-out failure records this run holds, and what it learned of each. */
interface HeldFailures {
  readonly records: readonly FailureRecord[];
  readonly unreadable: number;
  /** Per record: the deliveries still to re-send for it to be cleared (undefined: not decoded). */
  readonly owedByRecord: ReadonlyMap<FailureRecord, readonly string[] | undefined>;
  readonly undecoded: number;
}

/** The candidates split by the run's limits: those re-sent now and those left for later, with why. */
interface Choice {
  readonly chosen: RepairDelivery[];
  readonly unrepairedDeliveries: (RepairDelivery & { reason: UnrepairedReason })[];
  readonly unrepairedByReason: Record<UnrepairedReason, number>;
}

/**
 * `found`: a report already made (the scheduled run's pages of this invocation); without it the
 * whole window is reconciled first.
 *
 * The steps: reconcile → checkCarried → readFailures (decode each record, or repair its time range)
 * → this window's findings → choose (paused, limit) → requeueChosen (audit first) → settleFailures.
 */
export async function repair(deps: RepairDeps, options: RepairOptions, found?: ReconcileReport): Promise<RepairResult> {
  const now = (deps.clock ?? Date.now)();
  const report = found ?? (await reconcile(deps, options));
  const run: RepairRun = {
    deps,
    options,
    now,
    cutoff: now - (options.graceMs ?? DEFAULT_GRACE_MS),
    leasesAbandoned: options.leasesAbandoned === true,
    candidates: new Candidates(),
  };
  const inProgress = await checkCarried(run);
  // The fan-out's failure records: what each names, decoded from the stream, whatever the grace.
  const failures = deps.fanoutFailures ? await readFailures(run, deps.fanoutFailures) : undefined;
  for (const v of report.violations) {
    if (REPAIRABLE_KINDS.includes(v.kind))
      run.candidates.add({ kind: v.kind, source: v.source, eventId: v.eventId, consumerId: v.consumerId, ledgerKey: v.ledgerKey });
  }
  const choice = choose(run.candidates, options.paused ?? new Set<string>(), options.maxRepairs ?? Number.POSITIVE_INFINITY);
  const base = {
    report,
    candidates: run.candidates.size,
    deliveries: choice.chosen,
    unrepaired: choice.unrepairedDeliveries.length,
    unrepairedByReason: choice.unrepairedByReason,
    unrepairedDeliveries: choice.unrepairedDeliveries,
    notRepairable: report.violations.filter((v) => !REPAIRABLE_KINDS.includes(v.kind)).length,
    inProgress,
  };
  if (options.dryRun) {
    if (failures) await releaseAll(deps.fanoutFailures!, failures.records);
    return { ...base, dryRun: true, repaired: choice.chosen.length, ...failureSummary(failures, 0) };
  }
  const { repairId, repaired, requeued } = await requeueChosen(run, report, choice);
  const cleared = failures ? await settleFailures(deps.fanoutFailures!, failures, requeued) : 0;
  return { ...base, dryRun: false, ...(repairId ? { repairId } : {}), repaired, ...failureSummary(failures, cleared) };
}

/**
 * The carried deliveries' ledger rows read again: those still in progress are returned, the lost
 * ones become candidates (first), the settled ones are forgotten.
 */
async function checkCarried(run: RepairRun): Promise<RepairDelivery[]> {
  const inProgress: RepairDelivery[] = [];
  const carried = run.options.carried;
  if (!carried || carried.length === 0) return inProgress;
  const rows = await ledgerItemsByKey<LedgerItem>(
    run.deps,
    carried.map((d) => d.ledgerKey),
  );
  for (const entry of carried) {
    // Only what names the delivery (a carried entry says more: why, since when).
    const d = deliveryOf(entry);
    const row = rows.get(d.ledgerKey);
    const standing = standingOf('requeue', d, row, run.cutoff, run.leasesAbandoned);
    if (standing === 'active') inProgress.push(d);
    else if (standing === 'lost') run.candidates.addLost(d, row);
  }
  return inProgress;
}

/**
 * Holds the failure queue's records and decodes each: the deliveries a decoded record names that
 * did not take effect become candidates (and what it owes); an undecodable record's time range is
 * reconciled instead, and the record is kept.
 */
async function readFailures(run: RepairRun, queue: FanoutFailureQueue): Promise<HeldFailures> {
  const { records, unreadable } = await readFailureRecords(queue, run.options.dryRun === true);
  const owedByRecord = new Map<FailureRecord, string[] | undefined>();
  let undecoded = 0;
  const named: { record: FailureRecord; items: Named[] }[] = [];
  for (const record of records) {
    const read = record.batch && queue.streams ? await queue.streams.read(record.batch) : undefined;
    if (read?.kind === 'read') {
      named.push({ record, items: namedBy(read.images) });
      continue;
    }
    // Not decodable: the receipts of its time range are still repaired; the record is kept.
    undecoded++;
    owedByRecord.set(record, undefined);
    await addMissingInRange(run, record);
  }
  if (named.length > 0) {
    const rows = await ledgerItemsByKey<LedgerItem>(
      run.deps,
      named.flatMap((n) => n.items.map((i) => i.delivery.ledgerKey)),
    );
    for (const { record, items } of named) {
      const owed: string[] = [];
      for (const { origin, delivery } of items) {
        const row = rows.get(delivery.ledgerKey);
        if (standingOf(origin, delivery, row, run.cutoff, run.leasesAbandoned) !== 'lost') continue;
        run.candidates.addLost(delivery, row);
        owed.push(delivery.ledgerKey);
      }
      owedByRecord.set(record, owed);
    }
  }
  return { records, unreadable, owedByRecord, undecoded };
}

/** The missing deliveries of the receipts an undecodable failure record's time range holds, whatever the grace. */
async function addMissingInRange(run: RepairRun, record: FailureRecord): Promise<void> {
  const { options } = run;
  const ranged = await reconcile(run.deps, {
    from: record.from,
    to: record.to,
    graceMs: 0,
    leasesAbandoned: options.leasesAbandoned,
    consumers: options.consumers,
  });
  for (const v of ranged.violations) {
    if (v.kind === 'missing_delivery')
      run.candidates.add({ kind: v.kind, source: v.source, eventId: v.eventId, consumerId: v.consumerId, ledgerKey: v.ledgerKey });
  }
}

/** A paused consumer's deliveries wait (its queue holds them); beyond `limit` they are left for the next run. */
function choose(candidates: Candidates, paused: ReadonlySet<string>, limit: number): Choice {
  const chosen: RepairDelivery[] = [];
  const unrepairedDeliveries: (RepairDelivery & { reason: UnrepairedReason })[] = [];
  for (const delivery of candidates.values()) {
    if (paused.has(delivery.consumerId)) unrepairedDeliveries.push({ ...delivery, reason: 'paused' });
    else if (chosen.length >= limit) unrepairedDeliveries.push({ ...delivery, reason: 'limit' });
    else chosen.push(delivery);
  }
  const unrepairedByReason: Record<UnrepairedReason, number> = { paused: 0, limit: 0 };
  for (const d of unrepairedDeliveries) unrepairedByReason[d.reason]++;
  return { chosen, unrepairedDeliveries, unrepairedByReason };
}

/** The audit item, then one re-queue item per chosen delivery whose receipt is there; returns the ledger keys re-queued. */
async function requeueChosen(
  run: RepairRun,
  report: ReconcileReport,
  { chosen, unrepairedByReason }: Choice,
): Promise<{ repairId?: string; repaired: number; requeued: ReadonlySet<string> }> {
  const requeued = new Set<string>();
  if (chosen.length === 0) return { repaired: 0, requeued };
  const { deps, now } = run;
  const receipts = await eventStoreItemsByKey<EventItem>(
    deps,
    chosen.map((d) => eventKey(d.source, d.eventId)),
  );
  const repairId = newRepairId(now);
  const table = { client: deps.ddb, tableName: deps.tables.events };
  // The audit first, as replay does: a run that dies half-way still says what it set out to do.
  await new AuditLog(table).putAudit(
    auditItem(
      { action: 'repair', auditId: repairId, at: now, operator: deps.operator },
      {
        repairId,
        trigger: run.options.trigger,
        window: { from: new Date(run.options.from).toISOString(), to: new Date(run.options.to).toISOString() },
        graceMs: report.graceMs,
        count: chosen.length,
        deliveries: chosen.slice(0, MAX_AUDITED_DELIVERIES).map((d) => d.ledgerKey),
        ...(chosen.length > MAX_AUDITED_DELIVERIES ? { deliveriesNotListed: chosen.length - MAX_AUDITED_DELIVERIES } : {}),
        // Replays and backfills whose re-queue the fan-out gave up on: re-sent as those replays.
        ...(chosen.some((d) => d.replayId)
          ? { replaysResent: chosen.filter((d) => d.replayId).map((d) => ({ ledgerKey: d.ledgerKey, replayId: d.replayId })) }
          : {}),
        unrepaired: { ...unrepairedByReason },
      },
    ),
  );
  const requeues = new Requeues(table);
  await forEachLimited(chosen, WRITE_CONCURRENCY, async (d) => {
    const receipt = receipts.get(eventKey(d.source, d.eventId));
    // A stalled row whose receipt is gone is reported by reconcile as usage_without_event instead.
    if (receipt?.kind !== 'event') return;
    await requeues.putRequeue(
      d.replayId
        ? requeueUnder(repairId, requeueItem(receipt, d.consumerId, { replayId: d.replayId }, now))
        : requeueItem(receipt, d.consumerId, { repairId }, now),
    );
    requeued.add(d.ledgerKey);
  });
  return { repairId, repaired: requeued.size, requeued };
}

/** Deletes each decoded failure record whose every owed delivery was re-queued; releases the rest. Returns how many were deleted. */
async function settleFailures(queue: FanoutFailureQueue, failures: HeldFailures, requeued: ReadonlySet<string>): Promise<number> {
  let cleared = 0;
  const keep: FailureRecord[] = [];
  for (const record of failures.records) {
    const owed = failures.owedByRecord.get(record);
    if (owed === undefined || owed.some((k) => !requeued.has(k))) keep.push(record);
    else {
      await queue.sqs.send(new DeleteMessageCommand({ QueueUrl: queue.queueUrl, ReceiptHandle: record.receiptHandle }));
      cleared++;
    }
  }
  await releaseAll(queue, keep);
  return cleared;
}

function failureSummary(failures: HeldFailures | undefined, cleared: number): Pick<RepairResult, 'fanoutFailureRecords'> {
  return failures
    ? {
        fanoutFailureRecords: {
          read: failures.records.length + failures.unreadable,
          cleared,
          unreadable: failures.unreadable,
          undecoded: failures.undecoded,
        },
      }
    : {};
}

/**
 * Every record on the failure queue, held invisible while this run works on it. A record that is
 * not an on-failure invocation record stays in the queue (counted as unreadable).
 */
async function readFailureRecords(
  queue: { readonly sqs: SQSClient; readonly queueUrl: string },
  dryRun: boolean,
): Promise<{ records: FailureRecord[]; unreadable: number }> {
  const records: FailureRecord[] = [];
  const seen = new Set<string>();
  let unreadable = 0;
  for (;;) {
    const out = await queue.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queue.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: dryRun ? 30 : 300,
      }),
    );
    const messages = (out.Messages ?? []).filter((m) => m.MessageId && !seen.has(m.MessageId));
    if (messages.length === 0) break;
    for (const m of messages) {
      seen.add(m.MessageId!);
      const range = arrivalRange(m.Body);
      const batch = streamBatchOf(m.Body);
      if (range && m.ReceiptHandle) records.push({ receiptHandle: m.ReceiptHandle, ...range, ...(batch ? { batch } : {}) });
      else unreadable++;
    }
  }
  return { records, unreadable };
}

/** The receivedAt range a failure record's stream batch can hold: [first arrival, last arrival], widened. */
export function arrivalRange(body: string | undefined): { from: number; to: number } | undefined {
  try {
    const info = (JSON.parse(body ?? '') as { DDBStreamBatchInfo?: Record<string, unknown> }).DDBStreamBatchInfo;
    const first = Date.parse(String(info?.approximateArrivalOfFirstRecord));
    const last = Date.parse(String(info?.approximateArrivalOfLastRecord));
    if (Number.isNaN(first) || Number.isNaN(last)) return undefined;
    return { from: Math.min(first, last) - ARRIVAL_MARGIN_BEFORE_MS, to: Math.max(first, last) + ARRIVAL_MARGIN_AFTER_MS };
  } catch {
    return undefined;
  }
}

/** Where a failure record's stream batch is: stream, shard, first and last sequence numbers. */
export function streamBatchOf(body: string | undefined): StreamBatchRef | undefined {
  try {
    const info = (JSON.parse(body ?? '') as { DDBStreamBatchInfo?: Record<string, unknown> }).DDBStreamBatchInfo;
    const [streamArn, shardId, startSequenceNumber, endSequenceNumber] = [
      info?.streamArn,
      info?.shardId,
      info?.startSequenceNumber,
      info?.endSequenceNumber,
    ];
    if (typeof streamArn !== 'string' || typeof shardId !== 'string') return undefined;
    if (typeof startSequenceNumber !== 'string' || typeof endSequenceNumber !== 'string') return undefined;
    return { streamArn, shardId, startSequenceNumber, endSequenceNumber };
  } catch {
    return undefined;
  }
}

/** Only the fields that name a delivery (what is carried and re-sent), whatever else `d` holds. */
export function deliveryOf(d: RepairDelivery): RepairDelivery {
  return {
    kind: d.kind,
    source: d.source,
    eventId: d.eventId,
    consumerId: d.consumerId,
    ledgerKey: d.ledgerKey,
    ...(d.replayId ? { replayId: d.replayId } : {}),
  };
}

/** The deliveries the fan-out's work items (receipts, re-queues) of a decoded batch stand for. */
function namedBy(images: readonly Record<string, unknown>[]): Named[] {
  const out: Named[] = [];
  for (const image of images) {
    const { kind, source, eventId } = image as { kind?: unknown; source?: unknown; eventId?: unknown };
    if (typeof source !== 'string' || typeof eventId !== 'string') continue;
    const of = (consumerId: string, replayId?: string): RepairDelivery => ({
      kind: 'missing_delivery',
      source,
      eventId,
      consumerId,
      ledgerKey: ledgerKey(source, eventId, consumerId),
      ...(replayId ? { replayId } : {}),
    });
    if (kind === 'event') {
      const consumers = (image as Partial<EventItem>).consumers;
      for (const consumerId of Array.isArray(consumers) ? consumers : []) {
        if (typeof consumerId === 'string') out.push({ origin: 'receipt', delivery: of(consumerId) });
      }
    } else if (kind === 'requeue') {
      const requeue = image as Partial<RequeueItem>;
      if (typeof requeue.consumerId !== 'string') continue;
      out.push({
        origin: 'requeue',
        delivery: of(requeue.consumerId, typeof requeue.replayId === 'string' ? requeue.replayId : undefined),
      });
    }
  }
  return out;
}

/**
 * A receipt's delivery took effect once it has a ledger row (a message reached the consumer). A
 * replay took effect once the row names its replay id (claimed under it). A repair (or a carried
 * delivery) once the row is done or quarantined; a live lease or a retry within the grace is under
 * way; anything else (no row, a stalled one) must be sent again.
 */
function standingOf(
  origin: Named['origin'],
  d: RepairDelivery,
  row: LedgerItem | undefined,
  cutoff: number,
  leasesAbandoned: boolean,
): Standing {
  if (d.replayId) {
    const ran =
      row !== undefined &&
      (row.replayId === d.replayId ||
        (row.replays ?? []).some((r) => r.replayId === d.replayId) ||
        (row.reads ?? []).some((r) => r.replayId === d.replayId));
    return ran ? 'settled' : 'lost';
  }
  if (!row) return 'lost';
  if (origin === 'receipt' || row.state === 'done' || row.state === 'quarantined') return 'settled';
  return isStalled(row, cutoff, leasesAbandoned) ? 'lost' : 'active';
}

/** Makes held failure records visible again at once (a dry run, or records whose deliveries are not all repaired). */
async function releaseAll(queue: { readonly sqs: SQSClient; readonly queueUrl: string }, records: readonly FailureRecord[]): Promise<void> {
  for (const record of records) {
    await queue.sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: queue.queueUrl, ReceiptHandle: record.receiptHandle, VisibilityTimeout: 0 }),
    );
  }
}
