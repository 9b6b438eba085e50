/** Lambda entry for the scheduled reconcile (EventBridge rule; see lib/constructs/reconciler.ts). */
import { createDocumentClient } from '../shared/clients';
import { ENV, requireEnv } from '../shared/env';
import { createLogger } from '../shared/logger';
import { createReconcileHandler, createViolationsMetrics } from './app';

/** The `Stack` dimension of the violations metric: the CloudFormation stack name. */

export const handler = createReconcileHandler({
  ddb: createDocumentClient(),
  tables: { events: requireEnv(ENV.eventsTable), ledger: requireEnv(ENV.ledgerTable) },
  metrics: createViolationsMetrics(requireEnv(ENV.stackName)),
  logger: createLogger('hookledger-reconcile'),
});
