/** `hookledger erase`: delete a tenant's (or one event's) webhook bodies; the ledger and its evidence stay. */
import type { Command } from 'commander';
import type { EraseResult } from '../../ops/erase';
import { TargetError, UsageError } from '../../ops/errors';
import { parseTime } from '../../ops/time';
import { requireSource } from './args';
import type { CommandContext } from './context';

interface EraseOptions {
  readonly tenant?: string;
  readonly event?: string;
  readonly source?: string;
  readonly from?: string;
  readonly to?: string;
  readonly dryRun?: boolean;
  readonly yes?: boolean;
}

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('erase')
    .description(
      "delete the payloads (items, bucket objects, consumers' views) of a tenant's events or of one event; " +
        'receipts, keyed hashes, ledger rows, usage and the access log stay',
    )
    .option('--tenant <id>', "the tenant whose events' payloads go")
    .option('--from <time>', 'events received at or after this time (default: as far back as the index reads, 3,660 days)')
    .option('--to <time>', 'events received before this time (default: now)')
    .option('--event <eventId>', 'one event instead of a tenant (with --source)')
    .option('--source <id>', 'the source of --event')
    .option('--dry-run', 'count what would be deleted; delete nothing')
    .option('--yes', 'do not ask; required when not on a terminal (erasure cannot be undone)')
    .action(
      ctx.withTarget(async (connect, globals, options: EraseOptions) => {
        if ((options.tenant === undefined) === (options.event === undefined)) {
          throw new UsageError('give --tenant <id>, or --event <id> --source <id>');
        }
        if (options.event !== undefined && options.source === undefined) {
          throw new UsageError('--event needs --source <id> (the event id is only unique within its source)');
        }
        if (options.event !== undefined && (options.from !== undefined || options.to !== undefined)) {
          throw new UsageError("--from/--to select a tenant's events; with --event give neither");
        }
        if (options.source !== undefined) requireSource(ctx.config, options.source);
        const now = Date.now();
        const window = {
          ...(options.from !== undefined ? { from: parseTime(options.from, now, '--from') } : {}),
          ...(options.to !== undefined ? { to: parseTime(options.to, now, '--to') } : {}),
        };
        if (window.from !== undefined && window.to !== undefined && !(window.from < window.to)) {
          throw new UsageError('--from must be before --to');
        }
        // Irreversible: a script must say --yes; a terminal is asked after the counts.
        const interactive = ctx.io.stdin.isTTY === true && ctx.io.stderr.isTTY === true;
        if (!options.dryRun && !options.yes && !interactive) {
          throw new UsageError('erase deletes payloads for good: pass --yes (or --dry-run to count first)');
        }
        const target = await connect();
        if (!target.payloadBucket) {
          throw new TargetError(`${target.label} names no payload bucket (output PayloadBucketName); redeploy it from this repository`);
        }
        const { erase } = await import('../../ops/erase');
        const bar = ctx.progress('erase');
        const result = await erase(
          { ...ctx.opsDeps(target), blobs: target.payloadBucket },
          {
            ...(options.tenant !== undefined ? { tenant: options.tenant, window } : {}),
            ...(options.event !== undefined ? { event: { eventId: options.event, source: options.source as string } } : {}),
            dryRun: options.dryRun,
            onProgress: bar,
            ...(options.yes || options.dryRun
              ? {}
              : {
                  confirm: async (plan: EraseResult) => {
                    bar.end();
                    return ctx.confirm(
                      false,
                      `Erase the payloads of ${plan.events} events of ${plan.tenant} (${plan.payloadItems} items, ${plan.objects} objects; ` +
                        `${plan.deliveriesQuarantined} pending deliveries quarantined)? This cannot be undone.`,
                    );
                  },
                }),
          },
        );
        bar.end();
        ctx.print(globals, result, () => formatErase(result, ctx.operator));
      }),
    );
}

export function formatErase(r: EraseResult, operator: string): string {
  const head =
    `${r.events} events of ${r.tenant} received ${r.from} .. ${r.to}` +
    (r.alreadyErased > 0 ? ` (${r.alreadyErased} erased already)` : '') +
    `: ${r.payloadItems} payload items, ${r.objects} bucket objects, ${r.deliveriesQuarantined} pending deliveries quarantined payload_erased, ${r.errorMessagesScrubbed} error messages scrubbed.`;
  if (r.dryRun) return `${head}\nDry run: nothing deleted.`;
  if (r.declined) return `${head}\nNot erased.`;
  const tail = r.complete ? 'done' : 'stopped early: run the same command again to resume';
  return (
    `${head}\nErasure ${r.erasureId}${r.resumed ? ' (resumed)' : ''}: ${tail}; audit written (operator ${operator}). ` +
    'Receipts, keyed hashes, ledger rows, usage and the access log are kept.'
  );
}
