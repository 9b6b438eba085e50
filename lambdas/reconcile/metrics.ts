/**
 * The reconcile run's metrics, `Stack` dimension only: `ReconcileViolations`, `ReconcileIncomplete`,
 * `ReconcileRepairs`, `ReconcileCarried` and `ReconcileCarryDropped`, added by the run
 * (lambdas/reconcile/app.ts) and published once at its end, in one line: Powertools Metrics, whose
 * default `service` dimension is dropped (the alarms name `Stack` alone).
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DIMENSION, METRICS_NAMESPACE, RECONCILE_VIOLATIONS_METRIC } from '../../core/metrics';
import { requireStack } from '../shared/metrics';

export function createReconcileMetrics(stackName: string): Metrics {
  requireStack(stackName, RECONCILE_VIOLATIONS_METRIC);
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'hookledger-reconcile' });
  metrics.clearDefaultDimensions();
  metrics.setDefaultDimensions({ [DIMENSION.stack]: stackName });
  return metrics;
}
