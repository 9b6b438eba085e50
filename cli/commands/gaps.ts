/** `hookledger gaps --source <id> --from <t> [--to <t>] [--recover]`: what the provider sent and no receipt names. */
import type { Command } from 'commander';
import { type GapReport, unrecovered } from '../../core/gaps';
import { EXIT } from '../../ops/errors';
import { table } from '../format';
import { parseWindow } from './args';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('gaps')
    .description(
      "compare the provider's own list of the events it sent (its API) with the receipts; exit 1 while any is missing and not recovered",
    )
    .requiredOption('--source <id>', 'a source with gapCheck in the configuration')
    .requiredOption('--from <time>', 'events the provider created at or after this time (ISO-8601 or -1h, -7d)')
    .option('--to <time>', 'events created before this time', 'now')
    .option(
      '--recover',
      "record each missing event of the source's declared events through intake's write path (origin provider_api), or ask the provider to redeliver it",
    )
    .action(
      ctx.withTarget(async (connect, globals, options: { source: string; from: string; to: string; recover?: boolean }) => {
        const window = parseWindow(options.from, options.to);
        const { gapCheckOf, gaps, requireRecoverable } = await import('../../ops/gaps');
        const source = gapCheckOf(ctx.config, options.source);
        if (options.recover) requireRecoverable(source);
        const target = await connect();
        const report = await gaps(target, ctx.config, {
          source: options.source,
          ...window,
          recover: options.recover === true,
          onRateLimited: (ms) => ctx.warn(`rate limited by the provider: retrying in ${Math.ceil(ms / 1000)} s (Retry-After)`),
        });
        ctx.print(globals, report, () => formatGaps(report));
        return unrecovered(report) > 0 ? EXIT.found : EXIT.ok;
      }),
    );
}

export function formatGaps(report: GapReport): string {
  const lines = [
    `gaps ${report.source} (${report.api}) [${report.from}, ${report.to}): the provider lists ${report.providerEvents} event(s), ` +
      `${report.missing.length} without a receipt`,
  ];
  if (report.skipped.events > 0) {
    lines.push(
      `skipped ${report.skipped.events} listed event${report.skipped.events === 1 ? '' : 's'} of types the source does not declare (events): ${report.skipped.types.join(', ')}`,
    );
  }
  if (report.missing.length === 0) {
    lines.push('ok: nothing missing');
    return lines.join('\n');
  }
  const outcome = new Map(report.recovered.map((r) => [r.eventId, r.reason ? `${r.outcome} (${r.reason})` : r.outcome]));
  lines.push(
    '',
    table(report.missing, [
      { header: 'EVENT', value: (m) => m.eventId },
      { header: 'TYPE', value: (m) => m.type },
      { header: 'CREATED', value: (m) => m.createdAt },
      { header: 'RECOVERY', value: (m) => outcome.get(m.eventId) ?? 'not recovered (--recover)' },
    ]),
  );
  const left = unrecovered(report);
  lines.push('', left > 0 ? `${left} missing and not recovered.` : 'every missing event recovered.');
  return lines.join('\n');
}
