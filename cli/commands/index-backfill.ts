/**
 * `hookledger index backfill`: the one-off migration that puts receipts written before the window index
 * into it, and re-keys those written before tenant ids were escaped in it (core/model.ts keyPart).
 */
import type { Command } from 'commander';
import type { IndexBackfillResult } from '../../ops/index-backfill';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  const index = program.command('index').description('the window index that window queries (reconcile, usage, replay, backfill) read');
  index
    .command('backfill')
    .description(
      'give receipts written before the window index (or before tenant ids holding % or #, or named tenants, were escaped in it) ' +
        'its attributes and register their tenant-days (one scan of the EventStore; idempotent)',
    )
    .option('--dry-run', 'count the receipts not in the index; write nothing')
    .action(
      ctx.withTarget(async (connect, globals, options: { dryRun?: boolean }) => {
        const target = await connect();
        const { indexBackfill } = await import('../../ops/index-backfill');
        const bar = ctx.progress('index backfill');
        const result = await indexBackfill(
          { ddb: target.ddb, tables: target.tables, config: ctx.config },
          { dryRun: options.dryRun, onProgress: bar },
        );
        bar.end();
        ctx.print(globals, result, () => formatIndexBackfill(result, options.dryRun === true));
      }),
    );
}

export function formatIndexBackfill(result: IndexBackfillResult, dryRun: boolean): string {
  if (result.found === 0) return 'Every receipt is in the window index: nothing to do.';
  if (dryRun)
    return `${result.found} receipts (${result.tenantDays} tenant-days) are not (or not yet escaped) in the window index. Dry run: nothing written.`;
  return `${result.indexed} of ${result.found} receipts put in the window index (${result.tenantDays} tenant-days registered).`;
}
