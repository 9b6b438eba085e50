/**
 * Step 6, the start-up repair, before any poller runs: the queues start empty on every start
 * (fauxqs keeps messages in memory only) while the tables remember every delivery not yet done, so
 * re-queue those through the same ledger-safe path as `hookledger reconcile --repair`. Nobody holds
 * a lease any more (this process just started) and no grace applies: whatever the previous run left
 * unfinished has no message now. A paused consumer's deliveries wait for its resume.
 */
import { type RepairResult, repair } from '../../lambdas/reconcile/repair';
import { localDocumentClient } from '../wiring';

export interface StartupRepairOptions {
  readonly dynamoEndpoint: string;
  readonly tables: { readonly events: string; readonly ledger: string };
  /** Who the audit records as the operator (`npm start`). */
  readonly operator: string;
  readonly paused: ReadonlySet<string>;
  readonly clock?: () => number;
}

export async function repairOnStart(options: StartupRepairOptions): Promise<RepairResult> {
  const ddb = localDocumentClient(options.dynamoEndpoint);
  try {
    return await repair(
      { ddb, tables: options.tables, operator: options.operator, clock: options.clock },
      // All of history, so a scan (the window index would list every UTC day since 1970).
      {
        from: 0,
        to: (options.clock ?? Date.now)() + 1,
        graceMs: 0,
        leasesAbandoned: true,
        paused: options.paused,
        trigger: 'start',
        scan: true,
      },
    );
  } finally {
    ddb.destroy();
  }
}
