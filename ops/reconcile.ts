/**
 * Reconcile and repair on a target: the checks the scheduled run makes (lambdas/reconcile), wired
 * once for both front ends (`hookledger reconcile [--repair]`, the console's Reconcile view). Every
 * configured consumer's row of each receipt is looked up, so an unexpected_delivery is found without
 * a scan. Paused consumers are not repaired, and an unknown pause state is never guessed: a pause read
 * that fails stops the repair before it writes anything.
 */
import type { HookledgerConfig } from '../core/config/schema';
import { type ReconcileOptions, type ReconcileReport, reconcile } from '../lambdas/reconcile/reconcile';
import { type RepairResult, repair } from '../lambdas/reconcile/repair';
import type { Target } from './target';

export type { ReconcileReport, RepairResult };

export interface ReconcileDeps {
  readonly target: Pick<Target, 'ddb' | 'tables' | 'sqs' | 'fanoutFailureQueueUrl' | 'streamBatches' | 'pauseControl'>;
  readonly config: HookledgerConfig;
}

/** The window and how to read it; the consumers looked up are the configuration's. */
export type ReconcileRequest = Omit<ReconcileOptions, 'consumers' | 'leasesAbandoned'>;

export interface RepairRequest extends ReconcileRequest {
  /** Count only: no requeue, no audit, the fan-out's failure records left as they are. */
  readonly dryRun?: boolean;
}

export function reconcileTarget(deps: ReconcileDeps, request: ReconcileRequest): Promise<ReconcileReport> {
  return reconcile({ ddb: deps.target.ddb, tables: deps.target.tables }, { ...request, consumers: consumerIds(deps.config) });
}

/** Re-queues missing and stalled deliveries (never a second ledger row), recorded on the audit as done by `operator`. */
export async function repairTarget(deps: ReconcileDeps & { readonly operator: string }, request: RepairRequest): Promise<RepairResult> {
  const { target } = deps;
  const paused = await target.pauseControl.paused();
  return repair(
    {
      ddb: target.ddb,
      tables: target.tables,
      operator: deps.operator,
      ...(target.fanoutFailureQueueUrl
        ? { fanoutFailures: { sqs: target.sqs, queueUrl: target.fanoutFailureQueueUrl, streams: target.streamBatches } }
        : {}),
    },
    { ...request, consumers: consumerIds(deps.config), paused, trigger: 'cli' },
  );
}

const consumerIds = (config: HookledgerConfig) => config.consumers.map((c) => c.id);
