/**
 * The intake metric, `Hookledger/IntakeRequests{Stack, Outcome}`: one EMF line per request. The
 * `Stack` dimension keeps two copies of hookledger in one account apart (the dashboard searches
 * its own stack only); Powertools' default `service` dimension is dropped, as for the reconcile
 * metric, so the dimension set is exactly what the dashboard names.
 */
import { MetricUnit, Metrics } from '@aws-lambda-powertools/metrics';
import { DIMENSION, INTAKE_METRIC, METRICS_NAMESPACE } from '../../core/metrics';

/** Returns the `onOutcome` callback of the ingest handler: one metric line per request, emitted at once. */
export function createIntakeMetrics(stackName: string): (outcome: string) => void {
  if (stackName === '') throw new Error('stackName must not be empty: it is the Stack dimension of IntakeRequests');
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'hookledger-ingest' });
  metrics.clearDefaultDimensions();
  metrics.setDefaultDimensions({ [DIMENSION.stack]: stackName });
  // Added and flushed in one synchronous step, so no other request's outcome can slip in between.
  // (singleMetric() would bring the `service` dimension back.)
  return (outcome) => {
    metrics.addDimension(DIMENSION.outcome, outcome);
    metrics.addMetric(INTAKE_METRIC, MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
  };
}
