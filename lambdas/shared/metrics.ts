/**
 * Every custom metric the functions publish (EMF), in one module; names and dimensions come from
 * core/metrics.ts, which the dashboard and alarms read too. Each publisher has its own Powertools
 * `Metrics` whose only default dimension is `Stack`: Powertools' `service` dimension is dropped,
 * because a metric with an extra dimension is a different metric to an alarm that names `Stack`
 * (and its own dimensions) alone. Single-line publishers add and flush in one synchronous step,
 * so no other call's dimensions can slip in between (`singleMetric()` would bring `service` back).
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import {
  DIMENSION,
  FANOUT_SKIPPED_METRIC,
  HTTP_CIRCUIT_OPEN_METRIC,
  INTAKE_METRIC,
  METRICS_NAMESPACE,
  PROVIDER_GAPS_METRIC,
  RECONCILE_VIOLATIONS_METRIC,
  SECRET_REFRESH_FAILURE_METRIC,
} from '../../core/metrics';

/** A `Metrics` whose default dimensions are `Stack` (and `extra`) only. */
function stackMetrics(serviceName: string, stackName: string, metricName: string, extra: Record<string, string> = {}): Metrics {
  if (stackName === '') throw new Error(`stackName must not be empty: it is the Stack dimension of ${metricName}`);
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName });
  metrics.clearDefaultDimensions();
  metrics.setDefaultDimensions({ [DIMENSION.stack]: stackName, ...extra });
  return metrics;
}

/** `IntakeRequests{Stack, Outcome}`: the ingest handler's `onOutcome`, one line per request. */
export function createIntakeMetrics(stackName: string): (outcome: string) => void {
  const metrics = stackMetrics('hookledger-ingest', stackName, INTAKE_METRIC);
  return (outcome) => {
    metrics.addDimension(DIMENSION.outcome, outcome);
    metrics.addMetric(INTAKE_METRIC, MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
  };
}

/**
 * `SecretRefreshFailures{Stack, Served}`: one per failed read of a signing secret; `stale` when the
 * last known values were served, `none` when nothing was (503).
 */
export function createSecretRefreshFailureMetric(stackName: string): (served: 'stale' | 'none') => void {
  if (stackName === '') throw new Error(`stackName must not be empty: it is the Stack dimension of ${SECRET_REFRESH_FAILURE_METRIC}`);
  // Built on the first failure, a rare path: a cold start constructs only the intake's own Metrics.
  let metrics: Metrics | undefined;
  return (served) => {
    metrics ??= stackMetrics('hookledger-ingest', stackName, SECRET_REFRESH_FAILURE_METRIC);
    metrics.addDimension(DIMENSION.served, served);
    metrics.addMetric(SECRET_REFRESH_FAILURE_METRIC, MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
  };
}

/**
 * `FanOutSkippedDeliveries{Stack, Consumer}`: deliveries the fan-out skipped because their consumer
 * is no longer configured (see createFanoutHandler). Expected for a while after a consumer is
 * removed; anything else means a stale re-queue or a config that lost a consumer by mistake.
 */
export function createSkippedDeliveriesMetric(stackName: string): (consumerId: string, count: number) => void {
  const metrics = stackMetrics('hookledger-fanout', stackName, FANOUT_SKIPPED_METRIC);
  return (consumerId, count) => {
    metrics.addDimension(DIMENSION.consumer, consumerId);
    metrics.addMetric(FANOUT_SKIPPED_METRIC, MetricUnit.Count, count);
    metrics.publishStoredMetrics();
  };
}

/** `HttpCircuitOpened{Stack, Consumer}`: an HTTP consumer's circuit breaker opened (the consumer was paused). */
export function createCircuitOpenMetric(stackName: string, consumerId: string): () => void {
  const metrics = stackMetrics(`hookledger-${consumerId}`, stackName, HTTP_CIRCUIT_OPEN_METRIC, {
    [DIMENSION.consumer]: consumerId,
  });
  return () => {
    metrics.addMetric(HTTP_CIRCUIT_OPEN_METRIC, MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
  };
}

/** `ProviderGaps{Stack, Source}`: one line per scheduled gap check, the events missing and not recovered. */
export function createProviderGapsMetric(stackName: string, sourceId: string): (unrecovered: number) => void {
  const metrics = stackMetrics('hookledger-gaps', stackName, PROVIDER_GAPS_METRIC, { [DIMENSION.source]: sourceId });
  return (unrecovered) => {
    metrics.addMetric(PROVIDER_GAPS_METRIC, MetricUnit.Count, unrecovered);
    metrics.publishStoredMetrics();
  };
}

/**
 * The reconcile run's metrics, `Stack` dimension only: `ReconcileViolations`, `ReconcileIncomplete`
 * and `ReconcileRepairs`, added by the run (lambdas/reconcile/app.ts) and published once at its end.
 */
export function createReconcileMetrics(stackName: string): Metrics {
  return stackMetrics('hookledger-reconcile', stackName, RECONCILE_VIOLATIONS_METRIC);
}
