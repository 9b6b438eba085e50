/**
 * Every custom metric the functions publish (EMF), in one module; names and dimensions come from
 * core/metrics.ts, which the dashboard and alarms read too. Each metric carries `Stack` and its own
 * dimensions, nothing else: Powertools' `service` dimension would make a different metric to an
 * alarm that names `Stack` (and its own dimensions) alone. The single-line publishers write one line
 * per call (emf.ts, the line Powertools Metrics prints, without its 13 KiB at cold start); the
 * reconciler's run, which adds several metrics and publishes them once, uses Powertools Metrics
 * (lambdas/reconcile/metrics.ts).
 */

import { ConfigurationError } from '../../core/errors';
import {
  DIMENSION,
  FANOUT_SKIPPED_METRIC,
  HTTP_CIRCUIT_OPEN_METRIC,
  INTAKE_METRIC,
  isSignatureFailure,
  METRICS_NAMESPACE,
  PROVIDER_DRIFT_METRIC,
  PROVIDER_GAPS_METRIC,
  SECRET_REFRESH_FAILURE_METRIC,
  SIGNATURE_FAILURE_METRIC,
} from '../../core/metrics';
import { type MetricLine, metricLineWriter } from './emf';

/** Every metric's `Stack` dimension: empty, it would merge the series of every copy in the account. */
export function requireStack(stackName: string, metricName: string): void {
  if (stackName === '') {
    throw new ConfigurationError(
      `stackName must not be empty: it is the Stack dimension of ${metricName}; set STACK_NAME (the stack sets it)`,
    );
  }
}

/** A publisher of `metricName` (a Count) by `Stack`, the fixed `extra` dimensions and those of each call. */
function countPublisher(
  stackName: string,
  metricName: string,
  extra: Record<string, string> = {},
): (value: number, dimensions?: Record<string, string>) => void {
  requireStack(stackName, metricName);
  const write = metricLineWriter();
  const fixed = { [DIMENSION.stack]: stackName, ...extra };
  return (value, dimensions) => {
    const line: MetricLine = {
      namespace: METRICS_NAMESPACE,
      dimensions: dimensions ? { ...fixed, ...dimensions } : fixed,
      name: metricName,
      unit: 'Count',
      value,
    };
    write(line);
  };
}

/**
 * The ingest handler's `onOutcome`: `IntakeRequests{Stack, Outcome}`, one line per request, and for a
 * verification failure one line more, `SignatureFailures{Stack, Source}`, which each source's alarm
 * watches. Two lines rather than a second dimension set on the first: IntakeRequests keeps its
 * metrics and its line as they were, and a request that verifies writes nothing more.
 */
export function createIntakeMetrics(stackName: string): (outcome: string, sourceId: string) => void {
  const publish = countPublisher(stackName, INTAKE_METRIC);
  const publishFailure = countPublisher(stackName, SIGNATURE_FAILURE_METRIC);
  return (outcome, sourceId) => {
    publish(1, { [DIMENSION.outcome]: outcome });
    if (isSignatureFailure(outcome)) publishFailure(1, { [DIMENSION.source]: sourceId });
  };
}

/**
 * `SecretRefreshFailures{Stack, Served}`: one per failed read of a signing secret; `stale` when the
 * last known values were served, `none` when nothing was (503).
 */
export function createSecretRefreshFailureMetric(stackName: string): (served: 'stale' | 'none') => void {
  const publish = countPublisher(stackName, SECRET_REFRESH_FAILURE_METRIC);
  return (served) => publish(1, { [DIMENSION.served]: served });
}

/**
 * `FanOutSkippedDeliveries{Stack, Consumer}`: deliveries the fan-out skipped because their consumer
 * is no longer configured (see createFanoutHandler). Expected for a while after a consumer is
 * removed; anything else means a stale re-queue or a config that lost a consumer by mistake.
 */
export function createSkippedDeliveriesMetric(stackName: string): (consumerId: string, count: number) => void {
  const publish = countPublisher(stackName, FANOUT_SKIPPED_METRIC);
  return (consumerId, count) => publish(count, { [DIMENSION.consumer]: consumerId });
}

/** `HttpCircuitOpened{Stack, Consumer}`: an HTTP consumer's circuit breaker opened (the consumer was paused). */
export function createCircuitOpenMetric(stackName: string, consumerId: string): () => void {
  const publish = countPublisher(stackName, HTTP_CIRCUIT_OPEN_METRIC, { [DIMENSION.consumer]: consumerId });
  return () => publish(1);
}

/** `ProviderGaps{Stack, Source}`: one line per scheduled gap check, the events missing and not recovered. */
export function createProviderGapsMetric(stackName: string, sourceId: string): (unrecovered: number) => void {
  const publish = countPublisher(stackName, PROVIDER_GAPS_METRIC, { [DIMENSION.source]: sourceId });
  return (unrecovered) => publish(unrecovered);
}

/** `ProviderDrift{Stack, Source}`: one line per scheduled drift check, the differences found (0 when it matches). */
export function createProviderDriftMetric(stackName: string, sourceId: string): (differences: number) => void {
  const publish = countPublisher(stackName, PROVIDER_DRIFT_METRIC, { [DIMENSION.source]: sourceId });
  return (differences) => publish(differences);
}
