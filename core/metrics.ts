/**
 * Custom metrics the functions publish (EMF) and the dashboard and alarms read: names and
 * dimensions in one place, so a publisher and its alarm cannot drift apart. Every metric carries
 * the `Stack` dimension (two copies of hookledger in one account stay apart).
 */
import type { VerifyFailureCode } from './schemes/types';

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
/**
 * How a source's endpoint at its provider differs from its configuration (another URL, event types
 * missing or extra, disabled, or none at all; lambdas/reconcile/drift-check-app.ts): the number of
 * differences; dimensions `Stack` and `Source`. Alarmed above 0.
 */
export const PROVIDER_DRIFT_METRIC = 'ProviderDrift';
export const PROVIDER_DRIFT_DIMENSIONS = [DIMENSION.source, DIMENSION.stack] as const;
/** An HTTP consumer's circuit breaker opened (the consumer was paused); dimensions `Consumer` and `Stack`. */
export const HTTP_CIRCUIT_OPEN_METRIC = 'HttpCircuitOpened';

/**
 * Requests intake refused because they failed verification (a verifier's refusal: signature missing,
 * malformed or not matching, timestamp outside tolerance); dimensions `Source` and `Stack`. Written
 * on a failure only, beside that request's IntakeRequests line, so a healthy source publishes nothing.
 * One alarm per source watches it (`alarms.signatureFailures`; lib/constructs/observability.ts).
 */
export const SIGNATURE_FAILURE_METRIC = 'SignatureFailures';
export const SIGNATURE_FAILURE_DIMENSIONS = [DIMENSION.source, DIMENSION.stack] as const;
/** The verifiers' refusal codes (core/schemes/types.ts): a Record, so a code added there must be listed here. */
const VERIFICATION_FAILURES: Readonly<Record<VerifyFailureCode, true>> = {
  missing_signature: true,
  malformed_signature: true,
  signature_mismatch: true,
  timestamp_out_of_tolerance: true,
};
/** Whether an intake outcome is a verification failure: only verification refuses with these codes. */
export function isSignatureFailure(outcome: string): outcome is VerifyFailureCode {
  return Object.hasOwn(VERIFICATION_FAILURES, outcome);
}
/**
 * The per-source alarm's defaults (`alarms.signatureFailures`): ALARM at 10 verification failures
 * within 15 minutes. A scanner's probe, or someone trying the URL by hand, sends a handful of
 * requests and stays under it; a secret rotated on one side only fails every delivery and each of
 * the provider's retries, so a source receiving about one webhook a minute crosses it well within the
 * window. A quieter source needs a lower threshold or a longer window.
 */
export const DEFAULT_SIGNATURE_FAILURE_THRESHOLD = 10;
export const DEFAULT_SIGNATURE_FAILURE_WINDOW_MINUTES = 15;
/**
 * The longest window: the local stack keeps this many one-minute counts per source (bounded memory);
 * CloudWatch takes any whole number of minutes up to a day as the alarm's period.
 */
export const MAX_SIGNATURE_FAILURE_WINDOW_MINUTES = 60;
/** The local stack counts failures per minute (the alarm's period is whole minutes too). */
export const SIGNATURE_FAILURE_BUCKET_MS = 60_000;

/**
 * What the local stack's running intake counted (its admin endpoint's `GET /intake`): per source, the
 * verification failures of each minute with any, oldest first, over the last
 * MAX_SIGNATURE_FAILURE_WINDOW_MINUTES; `at` is the stack's clock when read, where the window ends.
 */
export interface SignatureFailureCounts {
  readonly at: number;
  readonly bySource: Readonly<Record<string, readonly SignatureFailureMinute[]>>;
}

export interface SignatureFailureMinute {
  /** The minute's start, ms since the epoch. */
  readonly from: number;
  readonly count: number;
}
