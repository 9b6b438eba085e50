/**
 * Health: one row per rule and its state, OK or ALARM, named as the deployed stack's CloudWatch
 * alarms are (lib/constructs/observability.ts): per consumer DeadLetters (its DLQ holds a message),
 * OldestMessageAge (its oldest pending delivery is older than its `alarmAgeSeconds`), CircuitOpen (an
 * HTTP consumer's breaker reached `breakAfterFailures`) and Paused (no alarm on AWS: a pause is
 * someone's decision, shown so it is not forgotten); SignatureFailures; FanOutFailures (the fan-out's
 * on-failure queue holds records); ReconcileViolations (the last scheduled run's checkpoint).
 *
 * The rules are computed from the data the other views read (status, the breakers, the pause state,
 * the intake's outcome counters, the reconcile checkpoint), on the local stack and on AWS alike: the
 * CloudWatch client is not among the dependencies, so the alarms' own states are not read. Where the
 * computed rule differs from its alarm, the row's detail and the report's notes say how.
 */
import { CheckpointStore } from '../adapters/checkpoint';
import type { HookledgerConfig } from '../core/config/schema';
import type { ReconcileTally } from '../lambdas/reconcile/reconcile';
import type { ConfigDeps } from './deps';
import { type CircuitState, circuits, type StatusDeps, type StatusReport, status } from './status';
import { formatAge, iso } from './time';

export type HealthState = 'OK' | 'ALARM';

export interface HealthRow {
  /** The alarm's name on a deployed stack (`Paused` has none). */
  readonly rule: string;
  /** A consumer id, `intake`, `fan-out` or `reconcile`. */
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
  /** The running intake's requests by outcome since it started (the local stack); absent on AWS. */
  readonly outcomes?: Readonly<Record<string, number>>;
  /** Absent when no scheduled reconcile run has saved its checkpoint yet. */
  readonly reconcile?: ReconcileRunSummary;
}

export interface HealthReport {
  readonly at: number;
  readonly rows: readonly HealthRow[];
  /** Rules that could not be computed here, and how a computed rule differs from its alarm. */
  readonly notes: readonly string[];
}

/** Signature refusals (`signature_mismatch`) that make SignatureFailures alarm. */
export const SIGNATURE_FAILURE_BURST = 10;
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
  if (inputs.outcomes !== undefined) {
    const refusals = inputs.outcomes.signature_mismatch ?? 0;
    rows.push(
      row(
        'SignatureFailures',
        'intake',
        refusals >= SIGNATURE_FAILURE_BURST,
        `${refusals} signature refusal(s) since intake started, all sources`,
        `alarms at ${SIGNATURE_FAILURE_BURST}`,
      ),
    );
  }
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

/** What each rule can and cannot see here, for the report's notes. */
function notesOf(inputs: HealthInputs): string[] {
  const notes = [
    'Computed from the stack’s data (the CloudWatch client is not installed): OldestMessageAge reads the oldest pending delivery of the events received in the last 7 days, not the queue’s oldest message.',
  ];
  if (!inputs.paused) notes.push('Paused: the pause state could not be read.');
  if (inputs.outcomes === undefined) {
    notes.push('SignatureFailures: this target keeps no intake counters (on AWS the IntakeRequests metric by outcome has them).');
  } else {
    notes.push(
      `SignatureFailures: the running intake counts refusals by outcome since it started, not per source nor per time; it alarms at ${SIGNATURE_FAILURE_BURST}.`,
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
  readonly outcomes?: Readonly<Record<string, number>>;
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
    ...(options.outcomes ? { outcomes: options.outcomes } : {}),
    ...(reconcile ? { reconcile } : {}),
  };
  return { at: report.at, rows: healthRules(deps.config, inputs), notes: notesOf(inputs) };
}
