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
 * shard, sequence numbers and approximate arrival times (on AWS not the keys). The receipts that
 * arrived in that time range are reconciled with no grace and their missing deliveries repaired; the
 * record is deleted once every one of them was re-queued (kept, and reported, otherwise).
 */
import { ChangeMessageVisibilityCommand, DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { auditItem } from '../../adapters/audit';
import { AuditLog } from '../../adapters/audit-log';
import { Requeues } from '../../adapters/requeues';
import { newRepairId } from '../../adapters/ids';
import { type EventItem, eventKey } from '../../core/model';
import { requeueItem } from '../../adapters/requeue';
import {
  type ReconcileDeps,
  type ReconcileOptions,
  type ReconcileReport,
  reconcile,
  type Violation,
  type ViolationKind,
} from './reconcile';
import { eventStoreItemsByKey } from '../../adapters/table-scan';
import { forEachLimited } from '../../adapters/pool';

export const REPAIRABLE_KINDS: readonly ViolationKind[] = ['missing_delivery', 'stalled_delivery'];
/** Ledger keys listed on the audit item; beyond this the item says how many more (items stop at 400 KB). */
export const MAX_AUDITED_DELIVERIES = 2000;
const WRITE_CONCURRENCY = 8;
/** Stream arrival times are approximate (minute-truncated on DynamoDB Local): widen each range. */
const ARRIVAL_MARGIN_BEFORE_MS = 60_000;
const ARRIVAL_MARGIN_AFTER_MS = 120_000;

export interface RepairDeps extends ReconcileDeps {
  /** Recorded on the audit item: the CLI's $USER, `reconciler`, `npm start`. */
  readonly operator: string;
  /** The fan-out's on-failure queue, when the caller can read it. */
  readonly fanoutFailures?: { readonly sqs: SQSClient; readonly queueUrl: string };
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
}

export type UnrepairedReason = 'paused' | 'limit';

export interface RepairDelivery {
  readonly kind: ViolationKind;
  readonly source: string;
  readonly eventId: string;
  readonly consumerId: string;
  readonly ledgerKey: string;
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
  readonly fanoutFailureRecords?: { readonly read: number; readonly cleared: number; readonly unreadable: number };
}

interface FailureRecord {
  readonly receiptHandle: string;
  readonly from: number;
  readonly to: number;
}

/**
 * `found`: a report already made (the scheduled run's pages of this invocation); without it the
 * whole window is reconciled first.
 */
export async function repair(deps: RepairDeps, options: RepairOptions, found?: ReconcileReport): Promise<RepairResult> {
  const now = (deps.clock ?? Date.now)();
  const report = found ?? (await reconcile(deps, options));
  const paused = options.paused ?? new Set<string>();

  const candidates = new Map<string, RepairDelivery>();
  const add = (v: Violation) => {
    if (!REPAIRABLE_KINDS.includes(v.kind) || candidates.has(v.ledgerKey)) return;
    candidates.set(v.ledgerKey, { kind: v.kind, source: v.source, eventId: v.eventId, consumerId: v.consumerId, ledgerKey: v.ledgerKey });
  };
  for (const v of report.violations) add(v);

  // The fan-out's failure records: their receipts' deliveries, whatever the grace.
  const failures = deps.fanoutFailures ? await readFailureRecords(deps.fanoutFailures, options.dryRun === true) : undefined;
  const keysOfRecord = new Map<FailureRecord, string[]>();
  for (const record of failures?.records ?? []) {
    const ranged = await reconcile(deps, {
      from: record.from,
      to: record.to,
      graceMs: 0,
      leasesAbandoned: options.leasesAbandoned,
      consumers: options.consumers,
    });
    const keys: string[] = [];
    for (const v of ranged.violations) {
      if (v.kind !== 'missing_delivery') continue;
      add(v);
      keys.push(v.ledgerKey);
    }
    keysOfRecord.set(record, keys);
  }

  const limit = options.maxRepairs ?? Number.POSITIVE_INFINITY;
  const chosen: RepairDelivery[] = [];
  const unrepairedDeliveries: (RepairDelivery & { reason: UnrepairedReason })[] = [];
  for (const delivery of candidates.values()) {
    if (paused.has(delivery.consumerId)) unrepairedDeliveries.push({ ...delivery, reason: 'paused' });
    else if (chosen.length >= limit) unrepairedDeliveries.push({ ...delivery, reason: 'limit' });
    else chosen.push(delivery);
  }
  const unrepairedByReason: Record<UnrepairedReason, number> = { paused: 0, limit: 0 };
  for (const d of unrepairedDeliveries) unrepairedByReason[d.reason]++;
  const notRepairable = report.violations.filter((v) => !REPAIRABLE_KINDS.includes(v.kind)).length;
  const base = {
    report,
    candidates: candidates.size,
    deliveries: chosen,
    unrepaired: unrepairedDeliveries.length,
    unrepairedByReason,
    unrepairedDeliveries,
    notRepairable,
  };
  const failureSummary = (cleared: number) =>
    failures
      ? { fanoutFailureRecords: { read: failures.records.length + failures.unreadable, cleared, unreadable: failures.unreadable } }
      : {};

  if (options.dryRun) {
    if (failures) await releaseAll(deps.fanoutFailures!, failures.records);
    return { ...base, dryRun: true, repaired: chosen.length, ...failureSummary(0) };
  }

  let repairId: string | undefined;
  let repaired = 0;
  if (chosen.length > 0) {
    const receipts = await eventStoreItemsByKey<EventItem>(
      deps,
      chosen.map((d) => eventKey(d.source, d.eventId)),
    );
    repairId = newRepairId(now);
    const table = { client: deps.ddb, tableName: deps.tables.events };
    // The audit first, as replay does: a run that dies half-way still says what it set out to do.
    await new AuditLog(table).putAudit(
      auditItem(
        { action: 'repair', auditId: repairId, at: now, operator: deps.operator },
        {
          repairId,
          trigger: options.trigger,
          window: { from: new Date(options.from).toISOString(), to: new Date(options.to).toISOString() },
          graceMs: report.graceMs,
          count: chosen.length,
          deliveries: chosen.slice(0, MAX_AUDITED_DELIVERIES).map((d) => d.ledgerKey),
          ...(chosen.length > MAX_AUDITED_DELIVERIES ? { deliveriesNotListed: chosen.length - MAX_AUDITED_DELIVERIES } : {}),
          unrepaired: { ...unrepairedByReason },
        },
      ),
    );
    const id = repairId;
    const requeues = new Requeues(table);
    await forEachLimited(chosen, WRITE_CONCURRENCY, async (d) => {
      const receipt = receipts.get(eventKey(d.source, d.eventId));
      // A stalled row whose receipt is gone is reported by reconcile as usage_without_event instead.
      if (!receipt) return;
      await requeues.putRequeue(requeueItem(receipt, d.consumerId, { repairId: id }, now));
      repaired++;
    });
  }

  let cleared = 0;
  if (failures) {
    const left = new Set(unrepairedDeliveries.map((d) => d.ledgerKey));
    const keep: FailureRecord[] = [];
    for (const record of failures.records) {
      if ((keysOfRecord.get(record) ?? []).some((k) => left.has(k))) keep.push(record);
      else {
        await deps.fanoutFailures!.sqs.send(
          new DeleteMessageCommand({ QueueUrl: deps.fanoutFailures!.queueUrl, ReceiptHandle: record.receiptHandle }),
        );
        cleared++;
      }
    }
    await releaseAll(deps.fanoutFailures!, keep);
  }
  return { ...base, dryRun: false, ...(repairId ? { repairId } : {}), repaired, ...failureSummary(cleared) };
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
      if (range && m.ReceiptHandle) records.push({ receiptHandle: m.ReceiptHandle, ...range });
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

/** Makes held failure records visible again at once (a dry run, or records whose deliveries are not all repaired). */
async function releaseAll(queue: { readonly sqs: SQSClient; readonly queueUrl: string }, records: readonly FailureRecord[]): Promise<void> {
  for (const record of records) {
    await queue.sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: queue.queueUrl, ReceiptHandle: record.receiptHandle, VisibilityTimeout: 0 }),
    );
  }
}
