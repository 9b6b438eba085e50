/**
 * Custom metrics the functions publish (EMF) and the dashboard and alarms read: names and
 * dimensions in one place, so a publisher and its alarm cannot drift apart. Every metric carries
 * the `Stack` dimension (two copies of hookledger in one account stay apart).
 */
export const METRICS_NAMESPACE = 'Hookledger';

/** Dimension names. */
export const DIMENSION = {
  stack: 'Stack',
  outcome: 'Outcome',
  consumer: 'Consumer',
  served: 'Served',
  source: 'Source',
} as const;

/** One per intake request, dimensions `Outcome` (recorded, duplicate, a refusal code) and `Stack`. */
export const INTAKE_METRIC = 'IntakeRequests';
/** Dimension names of IntakeRequests, in the order the dashboard's SEARCH schema lists them. */
export const INTAKE_DIMENSIONS = [DIMENSION.outcome, DIMENSION.stack] as const;
/** Fan-out deliveries skipped because the consumer is no longer configured; dimensions `Consumer` and `Stack`. */
export const FANOUT_SKIPPED_METRIC = 'FanOutSkippedDeliveries';
/** Dimension names of FanOutSkippedDeliveries, in the dashboard's SEARCH schema order. */
export const FANOUT_SKIPPED_DIMENSIONS = [DIMENSION.consumer, DIMENSION.stack] as const;
/** One per failed read of a signing secret, dimensions `Stack` and `Served` (`stale`: last known values served; `none`: 503). */
export const SECRET_REFRESH_FAILURE_METRIC = 'SecretRefreshFailures';
/** Violations one reconcile run found; dimension `Stack` only. The violations alarm watches it. */
export const RECONCILE_VIOLATIONS_METRIC = 'ReconcileViolations';
/** Deliveries one reconcile run re-queued; dimension `Stack` only. */
export const RECONCILE_REPAIRS_METRIC = 'ReconcileRepairs';
/**
 * Deliveries a scheduled reconcile run could not repair (paused consumer, over its per-run limit, or
 * still in progress) and carried forward to the next run; dimension `Stack` only.
 */
export const RECONCILE_CARRIED_METRIC = 'ReconcileCarried';
/** Deliveries a run could not carry forward because the carry-forward was full (logged by ids); dimension `Stack` only. */
export const RECONCILE_CARRY_DROPPED_METRIC = 'ReconcileCarryDropped';
/**
 * How many deliveries the carry-forward keeps (a few hundred bytes each: its item stays far below
 * DynamoDB's 400 KB); the ones beyond are counted in RECONCILE_CARRY_DROPPED_METRIC, whose alarm
 * quotes this number.
 */
export const MAX_CARRIED = 1000;
/** 1 when a reconcile run stopped before the end of its window (its checkpoint resumes it), else 0; dimension `Stack` only. */
export const RECONCILE_INCOMPLETE_METRIC = 'ReconcileIncomplete';
/**
 * Events a source's provider listed in the gap check's window that no receipt names and the run did not
 * recover (`gapCheck`, lambdas/reconcile/gap-check-app.ts); dimensions `Stack` and `Source`. Alarmed above 0.
 */
export const PROVIDER_GAPS_METRIC = 'ProviderGaps';
export const PROVIDER_GAPS_DIMENSIONS = [DIMENSION.source, DIMENSION.stack] as const;
/** An HTTP consumer's circuit breaker opened (the consumer was paused); dimensions `Consumer` and `Stack`. */
export const HTTP_CIRCUIT_OPEN_METRIC = 'HttpCircuitOpened';
