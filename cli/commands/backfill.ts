/** `hookledger backfill`: deliver past events to a consumer added to their type since, or whose filter now matches them. */
import type { Command } from 'commander';
import type { BackfillResult } from '../../ops/backfill';
import { parseWindow, requireConsumer } from './args';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('backfill')
    .description(
      'deliver past events to a consumer that subscribes to their type (and whose filter matches them, as configured now) but was not in their delivery set',
    )
    .requiredOption('--consumer <id>', 'the consumer (as configured now)')
    .requiredOption('--from <time>', 'receipts received at or after this time')
    .option('--to <time>', 'receipts received before this time', 'now')
    .option('--dry-run', 'count the matching receipts; write nothing')
    .option('--yes', 'do not ask for confirmation')
    .action(
      ctx.withTarget(async (connect, globals, options: { consumer: string; from: string; to: string; dryRun?: boolean; yes?: boolean }) => {
        const consumer = requireConsumer(ctx.config, options.consumer);
        const window = parseWindow(options.from, options.to);
        const target = await connect();
        const { backfill } = await import('../../ops/backfill');
        const bar = ctx.progress('backfill');
        const result = await backfill(ctx.opsDeps(target), {
          consumer,
          ...window,
          dryRun: options.dryRun,
          onProgress: bar,
          confirm: async (plan) => {
            bar.end();
            return ctx.confirm(options.yes, `Add ${plan.consumer} to ${plan.matched} receipts and deliver them?`);
          },
        });
        bar.end();
        ctx.print(globals, result, () => formatBackfill(result, ctx.operator));
      }),
    );
}

export function formatBackfill(result: BackfillResult, operator: string): string {
  const head =
    `${result.matched} receipts of the window lack ${result.consumer}.` +
    (result.expired > 0 ? ` ${result.expired} left out: payload past retention.` : '') +
    (result.filteredOut > 0 ? ` ${result.filteredOut} left out: its filter does not match them.` : '') +
    (result.unreadable > 0 ? ` ${result.unreadable} left out: body in the payload bucket, which this target names no bucket for.` : '') +
    (result.erased > 0 ? ` ${result.erased} left out: payload erased.` : '');
  if (result.dryRun) return `${head}\nDry run: nothing written.`;
  if (result.declined) return `${head}\nNot backfilled.`;
  if (!result.replayId) return head;
  const already = result.alreadyPresent ? `, ${result.alreadyPresent} already had it` : '';
  return `${head}\nBackfill ${result.replayId}: ${result.added} added and requeued${already}; audit written (operator ${operator}).`;
}
