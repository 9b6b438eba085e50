/**
 * `Hookledger/FanOutSkippedDeliveries{Stack, Consumer}`: deliveries the fan-out skipped because their
 * consumer is no longer configured (see createFanoutHandler). Expected for a while after a consumer
 * is removed; anything else means a stale re-queue or a config that lost a consumer by mistake.
 */
import { MetricUnit, Metrics } from '@aws-lambda-powertools/metrics';
import { DIMENSION, FANOUT_SKIPPED_METRIC, METRICS_NAMESPACE } from '../../core/metrics';

export function createSkippedDeliveriesMetric(stackName: string): (consumerId: string, count: number) => void {
  if (stackName === '') throw new Error(`stackName must not be empty: it is the Stack dimension of ${FANOUT_SKIPPED_METRIC}`);
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'hookledger-fanout' });
  metrics.clearDefaultDimensions();
  metrics.setDefaultDimensions({ [DIMENSION.stack]: stackName });
  return (consumerId, count) => {
    metrics.addDimension(DIMENSION.consumer, consumerId);
    metrics.addMetric(FANOUT_SKIPPED_METRIC, MetricUnit.Count, count);
    metrics.publishStoredMetrics();
  };
}
