/** `hookledger replay`: send one consumer's deliveries again (never adds usage). */
import type { Command } from 'commander';
import { UsageError } from '../../ops/errors';
import type { ReplayResult } from '../../ops/replay';
import { parseWindow, requireConsumer, requireSource } from './args';
import type { CommandContext } from './context';

interface ReplayOptions {
  readonly consumer: string;
  readonly event?: string;
  readonly source?: string;
  readonly from?: string;
  readonly to?: string;
  readonly tenant?: string;
  readonly type?: string;
  readonly dryRun?: boolean;
  readonly yes?: boolean;
}

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('replay')
    .description("send one consumer's deliveries again (never adds usage); other consumers are not touched")
    .requiredOption('--consumer <id>', 'the consumer to replay to')
    .option('--event <eventId>', 'one event')
    .option('--source <id>', 'source of --event (default: every configured source is tried)')
    .option('--from <time>', 'receipts received at or after this time')
    .option('--to <time>', 'receipts received before this time (default: now)')
    .option('--tenant <id>', 'only this tenant')
    .option('--type <eventType>', 'only this event type')
    .option('--dry-run', 'count the matching deliveries; write nothing')
    .option('--yes', 'do not ask for confirmation')
    .action(
      ctx.withTarget(async (connect, globals, options: ReplayOptions) => {
        if (options.event !== undefined && (options.from !== undefined || options.to !== undefined)) {
          throw new UsageError('give --event or --from/--to, not both');
        }
        if (options.event === undefined && options.from === undefined) {
          throw new UsageError('give --event <id>, or --from <time> [--to <time>]');
        }
        const consumer = requireConsumer(ctx.config, options.consumer);
        if (options.source !== undefined) requireSource(ctx.config, options.source);
        const selection =
          options.event !== undefined
            ? { event: { eventId: options.event, source: options.source } }
            : { window: parseWindow(options.from as string, options.to ?? 'now') };
        const target = await connect();
        const { replay } = await import('../../ops/replay');
        const bar = ctx.progress('replay');
        const result = await replay(ctx.opsDeps(target), {
          consumer,
          ...selection,
          tenant: options.tenant,
          type: options.type,
          dryRun: options.dryRun,
          onProgress: bar,
          confirm: async (plan) => {
            bar.end();
            return ctx.confirm(options.yes, `Replay ${plan.matched} deliveries to ${plan.consumer} (${describeStates(plan.byState)})?`);
          },
        });
        bar.end();
        ctx.print(globals, result, () => formatReplay(result, ctx.operator));
      }),
    );
}

export function formatReplay(result: ReplayResult, operator: string): string {
  const head =
    `${result.matched} deliveries of ${result.consumer} match (${describeStates(result.byState)}).` +
    (result.expired > 0 ? ` ${result.expired} left out: payload past retention.` : '') +
    (result.erased > 0 ? ` ${result.erased} left out: payload erased.` : '');
  if (result.dryRun) return `${head}\nDry run: nothing written.`;
  if (result.declined) return `${head}\nNot replayed.`;
  if (!result.replayId) return head;
  return `${head}\nReplay ${result.replayId}: ${result.requeued} requeued, ${result.annotated} ledger items noted; audit written (operator ${operator}).`;
}

function describeStates(byState: Readonly<Record<string, number | undefined>>): string {
  const parts = Object.entries(byState)
    .filter(([, n]) => n)
    .map(([state, n]) => `${state} ${n}`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}
