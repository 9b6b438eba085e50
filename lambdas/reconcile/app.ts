/**
 * The scheduled reconcile, independent of how it is wired: checks one window through the window
 * index in pages, within the invocation's time budget (remaining time minus a margin). A run that
 * runs out of time saves a checkpoint (`ckpt#reconcile`: window, cursor, tally so far) and the next
 * run resumes it before starting a new window, so no window size can make it time out. Logs each
 * violation (ids only), publishes `ReconcileViolations` (found by this run), `ReconcileIncomplete`
 * (1 when it stopped early) and `ReconcileRepairs`, and returns the report (the whole window's so
 * far) with how far it got. A failed read throws, so the invocation fails and the errors alarm sees it.
 *
 * Carry-forward (scheduled runs with repair): a delivery a run could not repair (its consumer paused,
 * an open circuit, over `maxPerRun`) or that is still in progress is remembered in `ckpt#reconcile-carry`
 * and checked again by every following run, which re-queues it once it can (oldest first) and forgets
 * it once its ledger row is done or quarantined or it was re-queued. Without it, a window is checked
 * once: what its run skipped would wait for a manual `reconcile --repair`. At most MAX_CARRIED are
 * remembered; beyond that they are logged by ids and counted (`ReconcileCarryDropped`).
 */
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { CheckpointStore } from '../../adapters/checkpoint';
import { HookledgerError } from '../../core/errors';
import {
  MAX_CARRIED,
  RECONCILE_CARRIED_METRIC,
  RECONCILE_CARRY_DROPPED_METRIC,
  RECONCILE_INCOMPLETE_METRIC,
  RECONCILE_REPAIRS_METRIC,
  RECONCILE_VIOLATIONS_METRIC,
} from '../../core/metrics';
import { HOUR_MS, MINUTE_MS } from '../../core/model';
import type { Logger } from '../shared/logger';
import {
  DEFAULT_GRACE_MS,
  emptyTally,
  lastClosedWindow,
  MAX_TALLY_VIOLATIONS,
  type PagesResult,
  type ReconcileCursor,
  type ReconcileDeps,
  type ReconcileOptions,
  type ReconcileReport,
  type ReconcileTally,
  reconcilePages,
  reportOf,
  type Violation,
} from './reconcile';
import { deliveryOf, type RepairDelivery, type RepairDeps, type RepairResult, repair, type UnrepairedReason } from './repair';

/** Violations logged one line each; the rest are counted in the summary line. */
const MAX_LOGGED_VIOLATIONS = 200;

/**
 * An explicit window for a manual run (`aws lambda invoke --payload '{"from":"...","to":"..."}'`),
 * or a window length for the default "last closed window". Scheduled events carry neither.
 */
export interface ReconcileInput {
  readonly from?: string;
  readonly to?: string;
  readonly windowMinutes?: number;
  readonly graceMinutes?: number;
}

export interface ReconcileHandlerDeps extends ReconcileDeps {
  readonly logger: Logger;
  /** createReconcileMetrics (lambdas/reconcile/metrics.ts) in the Lambda. */
  readonly metrics: Pick<Metrics, 'addMetric' | 'publishStoredMetrics'>;
  readonly clock?: () => number;
  /** @default one hour */
  readonly windowMs?: number;
  /** @default 15 minutes */
  readonly graceMs?: number;
  /** Repair what the run finds (lambdas/reconcile/repair.ts); absent: check only. */
  readonly repair?: {
    readonly maxPerRun: number;
    /** Consumers paused now (their deliveries are logged, not repaired). */
    pausedConsumers(): Promise<ReadonlySet<string>>;
    readonly fanoutFailures?: RepairDeps['fanoutFailures'];
  };
  /** Every configured consumer (their rows are looked up too: unexpected_delivery). */
  readonly consumers?: readonly string[];
  /** The checkpoint of a job. @default `ckpt#<job>` in the EventStore (`ckpt#reconcile` for the schedule) */
  readonly checkpoints?: (job: string) => CheckpointStore<ReconcileCheckpointState>;
  /** Where the schedule's carry-forward lives. @default `ckpt#reconcile-carry` in the EventStore */
  readonly carry?: CheckpointStore<CarryState>;
  /** Stop taking pages when the invocation has less than this left. @default DEFAULT_MARGIN_MS */
  readonly marginMs?: number;
  /** Receipts per page. @default DEFAULT_PAGE_SIZE (reconcile.ts) */
  readonly pageSize?: number;
}

export interface ReconcileRunResult extends ReconcileReport {
  /** False when the run stopped at its time budget; the next run resumes at `resumeAt`. */
  readonly complete: boolean;
  /** Runs spent on this window, this one included. */
  readonly runs: number;
  /** Pages this run read. */
  readonly pages: number;
  /** Receipts of the window checked so far (all runs). */
  readonly receiptsChecked: number;
  /** The index partition the next run starts in. */
  readonly resumeAt?: string;
  /** Present when the run repaired. */
  readonly repair?: Pick<
    RepairResult,
    'repairId' | 'candidates' | 'repaired' | 'unrepaired' | 'unrepairedByReason' | 'fanoutFailureRecords'
  > & {
    /** Scheduled runs: deliveries carried forward to the next run, and those the carry had no room for. */
    readonly carried?: number;
    readonly carryDropped?: number;
  };
}

/** A delivery the scheduled reconciler carries from run to run until it is repaired or settles. */
export interface CarriedDelivery extends RepairDelivery {
  /** Why the last run did not re-queue it. */
  readonly reason: UnrepairedReason | 'in_progress';
  /** When a run first could not repair it. */
  readonly since: number;
  /** Runs that have carried it on. */
  readonly runs: number;
}

/** The carry-forward item's state (`ckpt#reconcile-carry`). */
export interface CarryState {
  /** Oldest first: the next run takes them before its own findings. */
  readonly deliveries: readonly CarriedDelivery[];
}

export const RECONCILE_CARRY_JOB = 'reconcile-carry';

/** The checkpoint of the scheduled reconcile (`ckpt#reconcile`). */
export interface ReconcileCheckpointState {
  readonly from: number;
  readonly to: number;
  readonly graceMs: number;
  /** A window the schedule chose (a manual window's checkpoint is its own item). */
  readonly scheduled: boolean;
  readonly complete: boolean;
  /** Where the next run resumes; absent once complete. */
  readonly cursor?: ReconcileCursor;
  readonly tally: ReconcileTally;
  /** Runs spent on this window so far. */
  readonly runs: number;
}

export const RECONCILE_CHECKPOINT_JOB = 'reconcile';
/** Kept back from the remaining invocation time: repair, the checkpoint write, logs and metrics. */
export const DEFAULT_MARGIN_MS = 60_000;
/** A run catches up windows the schedule missed since the last complete one, at most this far back. */
export const MAX_CATCH_UP_MS = 24 * HOUR_MS;

/** The part of the Lambda context a run reads: its time budget. */
export interface InvocationContext {
  getRemainingTimeInMillis(): number;
}

/** The handler's dependencies with their defaults filled in, built once per handler. */
interface ReconcileContext {
  readonly deps: ReconcileHandlerDeps;
  readonly clock: () => number;
  readonly checkpointOf: (job: string) => CheckpointStore<ReconcileCheckpointState>;
  readonly carryStore: CheckpointStore<CarryState>;
  readonly marginMs: number;
}

/** The window a run works on, and where it starts in it: a new window, or an unfinished one resumed. */
interface WindowPlan {
  readonly window: { readonly from: number; readonly to: number };
  readonly graceMs: number;
  /** Saved in a checkpoint item (400 KB at most): it lists the first MAX_TALLY_VIOLATIONS, counts all. */
  readonly tally: ReconcileTally;
  readonly start?: ReconcileCursor;
  /** Runs spent on the window before this one. */
  readonly runs: number;
}

type Carry = { kept: CarriedDelivery[]; dropped: CarriedDelivery[] };

/**
 * One run composes the steps: manualInput → planWindow (resume, explicit, or the last closed window
 * with catch-up) → reconcilePages (within the time budget) → repairFindings (with the carry-forward)
 * → the checkpoint → logRun, logRepair, logCarry and the metrics → runResult.
 */
export function createReconcileHandler(deps: ReconcileHandlerDeps) {
  const ctx: ReconcileContext = {
    deps,
    clock: deps.clock ?? Date.now,
    checkpointOf:
      deps.checkpoints ??
      ((job: string) => new CheckpointStore<ReconcileCheckpointState>({ ddb: deps.ddb, tableName: deps.tables.events }, job)),
    marginMs: deps.marginMs ?? DEFAULT_MARGIN_MS,
    carryStore: deps.carry ?? new CheckpointStore<CarryState>({ ddb: deps.ddb, tableName: deps.tables.events }, RECONCILE_CARRY_JOB),
  };
  return (input?: unknown, context?: InvocationContext): Promise<ReconcileRunResult> => runReconcile(ctx, input, context);
}

async function runReconcile(ctx: ReconcileContext, input: unknown, context: InvocationContext | undefined): Promise<ReconcileRunResult> {
  const { deps } = ctx;
  const now = ctx.clock();
  const request = manualInput(input);
  const explicit =
    request.from !== undefined && request.to !== undefined
      ? { from: parseTime(request.from, 'from'), to: parseTime(request.to, 'to') }
      : undefined;
  const scheduled = !explicit;
  // The schedule's windows share one checkpoint; a manual window has its own (invoke it again with
  // the same payload to go on), so neither can overwrite the other's unfinished work.
  const checkpoints = ctx.checkpointOf(
    explicit ? `${RECONCILE_CHECKPOINT_JOB}#${iso(explicit.from)}#${iso(explicit.to)}` : RECONCILE_CHECKPOINT_JOB,
  );
  const plan = planWindow(ctx, request, explicit, (await checkpoints.load())?.state, now);
  const { window, graceMs, tally } = plan;
  const options = { ...window, graceMs, ...(deps.consumers ? { consumers: deps.consumers } : {}) };
  const pages = await reconcilePages(deps, options, tally, {
    ...(plan.start ? { start: plan.start } : {}),
    ...(context ? { shouldStop: () => context.getRemainingTimeInMillis() < ctx.marginMs } : {}),
    ...(deps.pageSize ? { pageSize: deps.pageSize } : {}),
  });
  const complete = pages.cursor === undefined;
  const runs = plan.runs + 1;
  const report = reportOf(tally, options, now);
  const { repaired, carry } = deps.repair
    ? await repairFindings(ctx, deps.repair, { options, report, found: pages.found, scheduled, now })
    : { repaired: undefined, carry: undefined };
  // Saved whether complete or not: the next run resumes an unfinished window, or catches up from a finished one.
  await checkpoints.save(
    { from: window.from, to: window.to, graceMs, scheduled, complete, ...(pages.cursor ? { cursor: pages.cursor } : {}), tally, runs },
    ctx.clock(),
  );
  logRun(deps, report, { ...pages, complete, runs });
  if (repaired) logRepair(deps, repaired);
  if (carry) logCarry(deps, carry);
  deps.metrics.publishStoredMetrics();
  const progress = {
    complete,
    runs,
    pages: pages.pages,
    receiptsChecked: report.receipts,
    ...(pages.cursor ? { resumeAt: pages.cursor.partition } : {}),
  };
  return runResult(report, progress, repaired, carry);
}

/**
 * An unfinished window first (resumed where the last run stopped, with its tally); else the explicit
 * window; else the schedule's last closed window, reaching back to the end of the last complete one.
 */
function planWindow(
  ctx: ReconcileContext,
  request: ReconcileInput,
  explicit: { from: number; to: number } | undefined,
  saved: ReconcileCheckpointState | undefined,
  now: number,
): WindowPlan {
  const { deps } = ctx;
  const graceMs = request.graceMinutes !== undefined ? request.graceMinutes * MINUTE_MS : (deps.graceMs ?? DEFAULT_GRACE_MS);
  if (saved && !saved.complete) {
    deps.logger.info('reconcile resumed', {
      from: iso(saved.from),
      to: iso(saved.to),
      runs: saved.runs,
      receipts_checked: saved.tally.receipts,
    });
    return {
      window: { from: saved.from, to: saved.to },
      graceMs: saved.graceMs,
      tally: saved.tally,
      ...(saved.cursor ? { start: saved.cursor } : {}),
      runs: saved.runs,
    };
  }
  const fresh = { graceMs, tally: emptyTally(MAX_TALLY_VIOLATIONS), runs: 0 };
  if (explicit) return { ...fresh, window: explicit };
  const window = lastClosedWindow(now, {
    windowMs: request.windowMinutes !== undefined ? request.windowMinutes * MINUTE_MS : (deps.windowMs ?? HOUR_MS),
    graceMs,
  });
  // Windows missed since the last complete scheduled one (a run that took several invocations).
  if (saved?.complete && saved.to < window.from && saved.to >= window.from - MAX_CATCH_UP_MS) {
    return { ...fresh, window: { from: saved.to, to: window.to } };
  }
  return { ...fresh, window };
}

/**
 * Repairs this run's findings only (earlier runs of the window repaired theirs), after what earlier
 * runs carried. Only the schedule carries forward: a manual window's run must not overwrite what it carries.
 */
async function repairFindings(
  ctx: ReconcileContext,
  repairDeps: NonNullable<ReconcileHandlerDeps['repair']>,
  run: { options: ReconcileOptions; report: ReconcileReport; found: Violation[]; scheduled: boolean; now: number },
): Promise<{ repaired: RepairResult; carry: Carry | undefined }> {
  const { deps } = ctx;
  const carried = run.scheduled ? ((await ctx.carryStore.load())?.state.deliveries ?? []) : [];
  const repaired = await repair(
    { ddb: deps.ddb, tables: deps.tables, clock: deps.clock, operator: 'reconciler', fanoutFailures: repairDeps.fanoutFailures },
    {
      ...run.options,
      paused: await repairDeps.pausedConsumers(),
      maxRepairs: repairDeps.maxPerRun,
      trigger: 'schedule',
      carried,
    },
    { ...run.report, violations: run.found },
  );
  if (!run.scheduled) return { repaired, carry: undefined };
  const carry = carryForward(carried, repaired, run.now);
  if (carried.length > 0 || carry.kept.length > 0) await ctx.carryStore.save({ deliveries: carry.kept }, ctx.clock());
  return { repaired, carry };
}

/** This run's violations (ids only, the first MAX_LOGGED_VIOLATIONS), the summary line, and the run's metrics. */
function logRun(
  deps: ReconcileHandlerDeps,
  report: ReconcileReport,
  pages: PagesResult & { readonly complete: boolean; readonly runs: number },
): void {
  const { found, complete } = pages;
  for (const v of found.slice(0, MAX_LOGGED_VIOLATIONS)) {
    deps.logger.warn('reconcile violation', {
      kind: v.kind,
      source: v.source,
      event_id: v.eventId,
      consumer_id: v.consumerId,
      ...(v.kind === 'tenant_mismatch' ? { receipt_tenant_id: v.receiptTenantId, ledger_tenant_id: v.ledgerTenantId } : {}),
    });
  }
  deps.logger.info(complete ? 'reconcile finished' : 'reconcile stopped', {
    from: iso(report.from),
    to: iso(report.to),
    complete,
    runs: pages.runs,
    pages: pages.pages,
    ...(pages.cursor ? { resume_at: pages.cursor.partition } : {}),
    receipts: report.receipts,
    ledger_items: report.ledgerItems,
    expected_deliveries: report.expectedDeliveries,
    in_grace: report.inGrace,
    quarantined: report.quarantined,
    violations: report.violations.length + (report.violationsNotListed ?? 0),
    violations_this_run: found.length,
    not_logged: Math.max(0, found.length - MAX_LOGGED_VIOLATIONS),
    ...report.counts,
  });
  deps.metrics.addMetric(RECONCILE_VIOLATIONS_METRIC, MetricUnit.Count, found.length);
  deps.metrics.addMetric(RECONCILE_INCOMPLETE_METRIC, MetricUnit.Count, complete ? 0 : 1);
}

function logRepair(deps: ReconcileHandlerDeps, repaired: RepairResult): void {
  for (const d of repaired.unrepairedDeliveries.slice(0, MAX_LOGGED_VIOLATIONS)) {
    deps.logger.warn('not repaired', { reason: d.reason, source: d.source, event_id: d.eventId, consumer_id: d.consumerId });
  }
  deps.logger.info('repair finished', {
    repair_id: repaired.repairId,
    candidates: repaired.candidates,
    repaired: repaired.repaired,
    unrepaired: repaired.unrepaired,
    ...repaired.unrepairedByReason,
    ...(repaired.fanoutFailureRecords ? { fanout_failure_records: repaired.fanoutFailureRecords } : {}),
  });
  deps.metrics.addMetric(RECONCILE_REPAIRS_METRIC, MetricUnit.Count, repaired.repaired);
}

function logCarry(deps: ReconcileHandlerDeps, carry: Carry): void {
  for (const d of carry.dropped.slice(0, MAX_LOGGED_VIOLATIONS)) {
    deps.logger.warn('not carried forward: the carry-forward is full; repair it with `hookledger reconcile --repair`', {
      reason: d.reason,
      source: d.source,
      event_id: d.eventId,
      consumer_id: d.consumerId,
    });
  }
  deps.logger.info('carried forward', {
    carried: carry.kept.length,
    dropped: carry.dropped.length,
    ...Object.fromEntries((['paused', 'limit', 'in_progress'] as const).map((r) => [r, carry.kept.filter((d) => d.reason === r).length])),
    ...(carry.kept[0] ? { oldest_since: iso(carry.kept[0].since) } : {}),
  });
  deps.metrics.addMetric(RECONCILE_CARRIED_METRIC, MetricUnit.Count, carry.kept.length);
  deps.metrics.addMetric(RECONCILE_CARRY_DROPPED_METRIC, MetricUnit.Count, carry.dropped.length);
}

function runResult(
  report: ReconcileReport,
  progress: Pick<ReconcileRunResult, 'complete' | 'runs' | 'pages' | 'receiptsChecked' | 'resumeAt'>,
  repaired: RepairResult | undefined,
  carry: Carry | undefined,
): ReconcileRunResult {
  if (!repaired) return { ...report, ...progress };
  const { repairId, candidates, unrepaired, unrepairedByReason, fanoutFailureRecords } = repaired;
  return {
    ...report,
    ...progress,
    repair: {
      ...(repairId ? { repairId } : {}),
      candidates,
      repaired: repaired.repaired,
      unrepaired,
      unrepairedByReason,
      ...(fanoutFailureRecords ? { fanoutFailureRecords } : {}),
      ...(carry ? { carried: carry.kept.length, carryDropped: carry.dropped.length } : {}),
    },
  };
}

/**
 * What the next run carries: every delivery this run could not re-queue (paused, over the limit) and
 * the carried ones still in progress, oldest first, at most MAX_CARRIED (the newest beyond are dropped).
 */
function carryForward(
  before: readonly CarriedDelivery[],
  result: RepairResult,
  now: number,
): { kept: CarriedDelivery[]; dropped: CarriedDelivery[] } {
  const earlier = new Map(before.map((d) => [d.ledgerKey, d]));
  const next = new Map<string, CarriedDelivery>();
  const keep = (d: RepairDelivery, reason: CarriedDelivery['reason']) => {
    if (next.has(d.ledgerKey)) return;
    const had = earlier.get(d.ledgerKey);
    next.set(d.ledgerKey, {
      ...deliveryOf(d),
      reason,
      since: had?.since ?? now,
      runs: (had?.runs ?? 0) + 1,
    });
  };
  for (const d of result.unrepairedDeliveries) keep(d, d.reason);
  for (const d of result.inProgress) keep(d, 'in_progress');
  const all = [...next.values()].sort((a, b) => a.since - b.since || a.ledgerKey.localeCompare(b.ledgerKey));
  return { kept: all.slice(0, MAX_CARRIED), dropped: all.slice(MAX_CARRIED) };
}

const iso = (at: number) => new Date(at).toISOString();

export class ReconcileInputError extends HookledgerError {
  override readonly name = 'ReconcileInputError';
}

/** EventBridge scheduled events carry no window; a manual payload may. Anything else is refused. */
function manualInput(input: unknown): ReconcileInput {
  if (!input || typeof input !== 'object') return {};
  const raw = input as Record<string, unknown>;
  if ('detail-type' in raw) return {};
  const out: { from?: string; to?: string; windowMinutes?: number; graceMinutes?: number } = {};
  for (const key of ['from', 'to'] as const) {
    if (raw[key] === undefined) continue;
    if (typeof raw[key] !== 'string') throw new ReconcileInputError(`${key} must be an ISO-8601 string, got ${JSON.stringify(raw[key])}`);
    out[key] = raw[key];
  }
  if ((out.from === undefined) !== (out.to === undefined)) {
    throw new ReconcileInputError('give both "from" and "to" (ISO-8601), or neither for the last closed window');
  }
  for (const key of ['windowMinutes', 'graceMinutes'] as const) {
    if (raw[key] === undefined) continue;
    const value = raw[key];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (key === 'windowMinutes' && value < 1)) {
      throw new ReconcileInputError(`${key} must be a positive number of minutes, got ${JSON.stringify(value)}`);
    }
    out[key] = value;
  }
  return out;
}

function parseTime(value: string, name: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new ReconcileInputError(`${name} must be an ISO-8601 time like 2026-11-29T12:00:00Z, got "${value}"`);
  return ms;
}
