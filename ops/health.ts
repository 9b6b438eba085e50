/**
 * Health: one row per rule and its state, OK or ALARM, named as the deployed stack's CloudWatch
 * alarms are (lib/constructs/observability.ts): per consumer DeadLetters (its DLQ holds a message),
 * OldestMessageAge (its oldest pending delivery is older than its `alarmAgeSeconds`), CircuitOpen (an
 * HTTP consumer's breaker reached `breakAfterFailures`) and Paused (no alarm on AWS: a pause is
 * someone's decision, shown so it is not forgotten); per source SignatureFailures (a burst of
 * verification failures: `alarms.signatureFailures`); FanOutFailures (the fan-out's on-failure queue
 * holds records); ReconcileViolations (the last scheduled run's checkpoint).
 *
 * The rules are computed from the data the other views read (status, the breakers, the pause state,
 * the running intake's per-source failure counts, the reconcile checkpoint), on the local stack and on
 * AWS alike: the CloudWatch client is not among the dependencies, so the alarms' own states are not
 * read. Where the computed rule differs from its alarm, the row's detail and the report's notes say how.
 */
import { CheckpointStore } from '../adapters/checkpoint';
import type { HookledgerConfig } from '../core/config/schema';
import { SIGNATURE_FAILURE_BUCKET_MS, type SignatureFailureCounts, type SignatureFailureMinute } from '../core/metrics';
import type { ReconcileTally } from '../lambdas/reconcile/reconcile';
import type { ConfigDeps } from './deps';
import { type CircuitState, circuits, type StatusDeps, type StatusReport, status } from './status';
import type { Target } from './target-types';
import { formatAge, iso } from './time';

export type HealthState = 'OK' | 'ALARM';

export interface HealthRow {
  /** The alarm's name on a deployed stack (`Paused` has none). */
  readonly rule: string;
  /** A consumer id, a source id (SignatureFailures), `fan-out` or `reconcile`. */
  readonly subject: string;
  readonly state: HealthState;
  /** What was found, in words. */
  readonly detail: string;
  /** Why the row is in its state: what was found and the threshold it is held against, with the numbers. */
  readonly reason: string;
  /**
   * When an ALARM row's condition began (ms since the epoch), where the data records it: the oldest
   * pending delivery crossing the age limit, the reconcile run that found the violations. Absent
   * otherwise (the DLQ's messages, the breaker and the pause keep no start time) and on OK rows.
   */
  readonly since?: number;
}

/** The last reconcile run of the schedule, as its checkpoint keeps it. */
export interface ReconcileRunSummary {
  readonly at: number;
  readonly from: number;
  readonly to: number;
  readonly complete: boolean;
  readonly violations: number;
}

export interface HealthInputs {
  readonly status: StatusReport;
  readonly circuits: Readonly<Record<string, CircuitState>>;
  /** Absent when the pause state could not be read. */
  readonly paused?: ReadonlySet<string>;
  /** The running intake's verification failures per source and minute (the local stack); absent on AWS. */
  readonly signatureFailures?: SignatureFailureCounts;
  /** Absent when no scheduled reconcile run has saved its checkpoint yet. */
  readonly reconcile?: ReconcileRunSummary;
}

export interface HealthReport {
  readonly at: number;
  readonly rows: readonly HealthRow[];
  /**
   * Rules that could not be computed here, how a computed rule differs from its alarm, and for a
   * source in SignatureFailures ALARM what to run.
   */
  readonly notes: readonly string[];
}

/**
 * The scheduled reconcile's checkpoint job (`ckpt#reconcile`), as lambdas/reconcile/app.ts names it
 * (the operations may not import the handler; a unit test holds the two equal).
 */
export const HEALTH_RECONCILE_JOB = 'reconcile';

/** `threshold`: what makes the rule alarm, appended to the detail in the reason when the detail does not say it. */
const row = (rule: string, subject: string, alarm: boolean, detail: string, threshold?: string, since?: number): HealthRow => ({
  rule,
  subject,
  state: alarm ? 'ALARM' : 'OK',
  detail,
  reason: threshold === undefined ? detail : `${detail}; ${threshold}`,
  ...(alarm && since !== undefined ? { since } : {}),
});

const AT_LEAST_ONE = 'alarms at 1 or more';

/** The rules, computed from what was read (pure: the unit tests give it reports). */
export function healthRules(config: HookledgerConfig, inputs: HealthInputs): HealthRow[] {
  const rows: HealthRow[] = [];
  for (const c of inputs.status.consumers) {
    const settings = config.consumers.find((s) => s.id === c.consumer);
    const dlq = c.dlq?.visible ?? 0;
    rows.push(row('DeadLetters', c.consumer, dlq > 0, `${dlq} message(s) in its DLQ`, AT_LEAST_ONE));
    const limitMs = (settings?.alarmAgeSeconds ?? Number.POSITIVE_INFINITY) * 1000;
    const age = c.oldestPendingAgeMs;
    rows.push(
      row(
        'OldestMessageAge',
        c.consumer,
        age !== undefined && age > limitMs,
        `${age === undefined ? 'nothing pending' : `oldest pending ${formatAge(age)}`}; alarms past ${formatAge(limitMs)}`,
        undefined,
        c.oldestPendingAt === undefined ? undefined : c.oldestPendingAt + limitMs,
      ),
    );
    const circuit = inputs.circuits[c.consumer];
    if (circuit?.breakAfter !== undefined) {
      rows.push(
        row(
          'CircuitOpen',
          c.consumer,
          circuit.failures >= circuit.breakAfter,
          `${circuit.failures} of ${circuit.breakAfter} failures in a row`,
          `alarms (the breaker opens) at ${circuit.breakAfter}`,
        ),
      );
    }
    if (inputs.paused) {
      const paused = inputs.paused.has(c.consumer);
      rows.push(row('Paused', c.consumer, paused, paused ? 'paused: takes no deliveries until resumed' : 'running'));
    }
  }
  if (inputs.signatureFailures !== undefined) rows.push(...signatureFailureRows(config, inputs.signatureFailures));
  const fanout = inputs.status.fanoutFailures?.visible;
  if (fanout !== undefined) {
    rows.push(row('FanOutFailures', 'fan-out', fanout > 0, `${fanout} record(s) on its on-failure queue`, AT_LEAST_ONE));
  }
  const run = inputs.reconcile;
  rows.push(
    run
      ? row(
          'ReconcileViolations',
          'reconcile',
          run.violations > 0,
          `${run.violations} violation(s) in [${iso(run.from)}, ${iso(run.to)})${run.complete ? '' : ' so far (run not complete)'}, run at ${iso(run.at)}`,
          AT_LEAST_ONE,
          run.at,
        )
      : row('ReconcileViolations', 'reconcile', false, 'no scheduled run recorded yet', AT_LEAST_ONE),
  );
  return rows;
}

/**
 * One row per configured source: ALARM at `threshold` verification failures in the window ending at
 * the stack's `at` (the current minute and the `windowMinutes - 1` before it), since the minute whose
 * failures reached the threshold.
 */
function signatureFailureRows(config: HookledgerConfig, counts: SignatureFailureCounts): HealthRow[] {
  const { threshold, windowMinutes } = config.alarms.signatureFailures;
  return config.sources.map((source) => {
    const { count, since } = failuresInWindow(counts.bySource[source.id] ?? [], counts.at, windowMinutes, threshold);
    return row(
      'SignatureFailures',
      source.id,
      count >= threshold,
      `${count} verification failure(s) in the last ${windowMinutes} min`,
      `alarms at ${threshold} within ${windowMinutes} min`,
      since,
    );
  });
}

function failuresInWindow(
  minutes: readonly SignatureFailureMinute[],
  at: number,
  windowMinutes: number,
  threshold: number,
): { count: number; since?: number } {
  const first =
    Math.floor(at / SIGNATURE_FAILURE_BUCKET_MS) * SIGNATURE_FAILURE_BUCKET_MS - (windowMinutes - 1) * SIGNATURE_FAILURE_BUCKET_MS;
  let count = 0;
  let since: number | undefined;
  for (const minute of minutes) {
    if (minute.from < first || minute.from > at) continue;
    count += minute.count;
    if (since === undefined && count >= threshold) since = minute.from;
  }
  return since === undefined ? { count } : { count, since };
}

/** What each rule can and cannot see here, and what to run for a source in SignatureFailures ALARM, for the report's notes. */
function notesOf(config: HookledgerConfig, inputs: HealthInputs, rows: readonly HealthRow[]): string[] {
  const notes = [
    'Computed from the stack’s data (the CloudWatch client is not installed): OldestMessageAge reads the oldest pending delivery of the events received in the last 7 days, not the queue’s oldest message.',
  ];
  if (!inputs.paused) notes.push('Paused: the pause state could not be read.');
  const { threshold, windowMinutes } = config.alarms.signatureFailures;
  notes.push(
    inputs.signatureFailures === undefined
      ? `SignatureFailures: this target keeps no intake counters; on AWS each source's SignatureFailures alarm counts its verification failures (${threshold} within ${windowMinutes} min).`
      : `SignatureFailures: the running intake's verification failures per source, per minute; on AWS each source's alarm sums them over periods of ${windowMinutes} min.`,
  );
  for (const { subject } of rows.filter((r) => r.rule === 'SignatureFailures' && r.state === 'ALARM')) {
    notes.push(
      `SignatureFailures ${subject}: usually its signing secret was rotated on one side only, so every webhook is answered 401 and the provider retries, then disables the endpoint. Compare with \`hookledger sources remote ${subject}\`; store the secret the provider signs with by \`hookledger secrets rotate ${subject} --value-file -\` (or rotate here and give the provider the new one).`,
    );
  }
  return notes;
}

type SavedRun = { readonly from: number; readonly to: number; readonly complete: boolean; readonly tally: ReconcileTally };

/** The scheduled reconcile's last run, from its checkpoint; undefined before the first. */
export async function lastReconcileRun(deps: Pick<StatusDeps, 'ddb' | 'tables'>): Promise<ReconcileRunSummary | undefined> {
  const saved = await new CheckpointStore<SavedRun>({ ddb: deps.ddb, tableName: deps.tables.events }, HEALTH_RECONCILE_JOB).load();
  if (!saved) return undefined;
  const { tally } = saved.state;
  const counted = Object.values(tally.counts ?? {}).reduce((n, v) => n + v, 0);
  return {
    at: saved.updatedAt,
    from: saved.state.from,
    to: saved.state.to,
    complete: saved.state.complete,
    violations: Math.max(counted, tally.violations.length + tally.violationsNotListed),
  };
}

export interface HealthOptions {
  readonly paused?: ReadonlySet<string>;
  readonly signatureFailures?: SignatureFailureCounts;
}

export async function health(deps: StatusDeps & ConfigDeps, options: HealthOptions = {}): Promise<HealthReport> {
  const [report, breakers, reconcile] = await Promise.all([
    status(deps, options.paused ? { paused: options.paused } : {}),
    circuits(deps),
    lastReconcileRun(deps),
  ]);
  const inputs: HealthInputs = {
    status: report,
    circuits: breakers,
    ...(options.paused ? { paused: options.paused } : {}),
    ...(options.signatureFailures ? { signatureFailures: options.signatureFailures } : {}),
    ...(reconcile ? { reconcile } : {}),
  };
  const rows = healthRules(deps.config, inputs);
  return { at: report.at, rows, notes: notesOf(deps.config, inputs, rows) };
}

/** What `targetHealth` reads of a target. */
export type HealthTarget = Pick<
  Target,
  'ddb' | 'tables' | 'sqs' | 'queues' | 'fanoutFailureQueueUrl' | 'pauseControl' | 'intakeSignatureFailures'
>;

/**
 * The rules of a target, as `hookledger alarms` and the console's Health view show them: an
 * unreadable pause state or intake count leaves its rule out, and the report's notes say so.
 */
export async function targetHealth(target: HealthTarget, config: HookledgerConfig): Promise<HealthReport> {
  const [paused, signatureFailures] = await Promise.all([
    target.pauseControl.paused().catch(() => undefined),
    target.intakeSignatureFailures?.().catch(() => undefined),
  ]);
  return health(
    {
      ddb: target.ddb,
      tables: target.tables,
      config,
      sqs: target.sqs,
      queues: target.queues,
      fanoutFailureQueueUrl: target.fanoutFailureQueueUrl,
    },
    { ...(paused ? { paused } : {}), ...(signatureFailures ? { signatureFailures } : {}) },
  );
}
