/**
 * The scheduled reconcile, independent of how it is wired: checks one window, logs each violation
 * (ids only), publishes the violation count as `Hookledger/ReconcileViolations{Stack}`, and returns
 * the report. A failed scan throws, so the invocation fails and the errors alarm sees it.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Logger } from '../shared/logger';
import { DEFAULT_GRACE_MS, HOUR_MS, lastClosedWindow, MINUTE_MS, type ReconcileDeps, type ReconcileReport, reconcile } from './reconcile';
import { type RepairDeps, type RepairResult, repair } from './repair';

export { METRICS_NAMESPACE } from '../../core/metrics';
import { DIMENSION, METRICS_NAMESPACE, RECONCILE_REPAIRS_METRIC, RECONCILE_VIOLATIONS_METRIC } from '../../core/metrics';
import { HookledgerError } from '../../core/errors';
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
}

export interface ReconcileRunResult extends ReconcileReport {
  /** Present when the run repaired. */
  readonly repair?: Pick<
    RepairResult,
    'repairId' | 'candidates' | 'repaired' | 'unrepaired' | 'unrepairedByReason' | 'fanoutFailureRecords'
  >;
}

/**
 * Powertools metrics whose only dimension is `Stack`: Powertools adds a `service` dimension by
 * default, and a metric with an extra dimension is a different metric to the alarm, which names
 * `Stack` alone.
 */
export function createViolationsMetrics(stackName: string): Metrics {
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'hookledger-reconcile' });
  metrics.clearDefaultDimensions();
  metrics.setDefaultDimensions({ [DIMENSION.stack]: stackName });
  return metrics;
}

export function createReconcileHandler(deps: ReconcileHandlerDeps) {
  const clock = deps.clock ?? Date.now;
  return async (input?: unknown): Promise<ReconcileRunResult> => {
    const now = clock();
    const request = manualInput(input);
    const graceMs = request.graceMinutes !== undefined ? request.graceMinutes * MINUTE_MS : (deps.graceMs ?? DEFAULT_GRACE_MS);
    const window =
      request.from !== undefined && request.to !== undefined
        ? { from: parseTime(request.from, 'from'), to: parseTime(request.to, 'to') }
        : lastClosedWindow(now, {
            windowMs: request.windowMinutes !== undefined ? request.windowMinutes * MINUTE_MS : (deps.windowMs ?? HOUR_MS),
            graceMs,
          });
    let report: ReconcileReport;
    let repaired: RepairResult | undefined;
    if (deps.repair) {
      repaired = await repair(
        { ddb: deps.ddb, tables: deps.tables, clock: deps.clock, operator: 'reconciler', fanoutFailures: deps.repair.fanoutFailures },
        { ...window, graceMs, paused: await deps.repair.pausedConsumers(), maxRepairs: deps.repair.maxPerRun, trigger: 'schedule' },
      );
      report = repaired.report;
    } else {
      report = await reconcile(deps, { ...window, graceMs });
    }
    for (const v of report.violations.slice(0, MAX_LOGGED_VIOLATIONS)) {
      deps.logger.warn('reconcile violation', {
        kind: v.kind,
        source: v.source,
        event_id: v.eventId,
        consumer_id: v.consumerId,
        ...(v.kind === 'tenant_mismatch' ? { receipt_tenant_id: v.receiptTenantId, ledger_tenant_id: v.ledgerTenantId } : {}),
      });
    }
    deps.logger.info('reconcile finished', {
      from: new Date(report.from).toISOString(),
      to: new Date(report.to).toISOString(),
      receipts: report.receipts,
      ledger_items: report.ledgerItems,
      expected_deliveries: report.expectedDeliveries,
      in_grace: report.inGrace,
      quarantined: report.quarantined,
      violations: report.violations.length,
      not_logged: Math.max(0, report.violations.length - MAX_LOGGED_VIOLATIONS),
      ...report.counts,
    });
    deps.metrics.addMetric(RECONCILE_VIOLATIONS_METRIC, MetricUnit.Count, report.violations.length);
    if (repaired) {
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
    deps.metrics.publishStoredMetrics();
    if (!repaired) return report;
    const { repairId, candidates, unrepaired, unrepairedByReason, fanoutFailureRecords } = repaired;
    return {
      ...report,
      repair: {
        ...(repairId ? { repairId } : {}),
        candidates,
        repaired: repaired.repaired,
        unrepaired,
        unrepairedByReason,
        ...(fanoutFailureRecords ? { fanoutFailureRecords } : {}),
      },
    };
  };
}

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
