/** `hookledger usage`: billable units by tenant and consumer over a window. */
import type { Command } from 'commander';
import { table } from '../format';
import { type UsageReport, usage } from '../ops/usage';
import { iso } from '../time';
import { parseWindow, requireConsumer } from './args';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('usage')
    .description('billable units by tenant and consumer, over deliveries acknowledged in [from, to)')
    .option('--from <time>', 'start (inclusive)', '-24h')
    .option('--to <time>', 'end (exclusive)', 'now')
    .option('--tenant <id>', 'only this tenant')
    .option('--consumer <id>', 'only this consumer')
    .action(
      ctx.withTarget(async (connect, globals, options: { from: string; to: string; tenant?: string; consumer?: string }) => {
        const window = parseWindow(options.from, options.to);
        const consumer = options.consumer === undefined ? undefined : requireConsumer(ctx.config, options.consumer);
        const target = await connect();
        const bar = ctx.progress('scanning ledger');
        const report = await usage({ ddb: target.ddb, tables: target.tables }, { ...window, tenant: options.tenant, consumer, onProgress: bar });
        bar.end();
        ctx.print(globals, report, () => formatUsage(report));
      }),
    );
}

export function formatUsage(report: UsageReport): string {
  const head = `usage acknowledged in [${iso(report.from)}, ${iso(report.to)})`;
  if (report.rows.length === 0) return `${head}\nno done deliveries`;
  return [
    head,
    '',
    table(report.rows, [
      { header: 'TENANT', value: (r) => r.tenantId },
      { header: 'CONSUMER', value: (r) => r.consumerId },
      { header: 'UNITS', value: (r) => r.units },
      { header: 'DELIVERIES', value: (r) => r.deliveries },
    ]),
    '',
    `total ${report.totalUnits} units`,
  ].join('\n');
}
