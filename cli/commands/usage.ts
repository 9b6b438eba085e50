/** `hookledger usage`: billable units by tenant and consumer over a window. */
import type { Command } from 'commander';
import { UsageError } from '../../ops/errors';
import { iso } from '../../ops/time';
import type { UsageReport } from '../../ops/usage';
import { table } from '../format';
import { parseWindow, requireConsumer } from './args';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('usage')
    .description(
      'billable units by tenant and consumer, over the deliveries of events received in [from, to) (read through the window index: cost follows the window)',
    )
    .option('--from <time>', 'start (inclusive)', '-24h')
    .option('--to <time>', 'end (exclusive)', 'now')
    .option('--tenant <id>', 'only this tenant')
    .option('--consumer <id>', 'only this consumer')
    .option('--format <format>', 'table, or csv for invoicing (one row per tenant and consumer)', 'table')
    .option('--scan', 'scan the whole ledger and window on acknowledgement time instead (full-history audit; cost grows with history)')
    .action(
      ctx.withTarget(
        async (
          connect,
          globals,
          options: { from: string; to: string; tenant?: string; consumer?: string; format: string; scan?: boolean },
        ) => {
          if (options.format !== 'table' && options.format !== 'csv') {
            throw new UsageError(`--format must be table or csv, got "${options.format}"`);
          }
          const window = parseWindow(options.from, options.to);
          const consumer = options.consumer === undefined ? undefined : requireConsumer(ctx.config, options.consumer);
          const target = await connect();
          const { formatUsageCsv, usage } = await import('../../ops/usage');
          const bar = ctx.progress(options.scan ? 'scanning ledger' : 'reading the window');
          const report = await usage(
            { ddb: target.ddb, tables: target.tables },
            { ...window, tenant: options.tenant, consumer, onProgress: bar, scan: options.scan },
          );
          bar.end();
          if (options.format === 'csv' && !globals.json) ctx.io.stdout.write(formatUsageCsv(report));
          else ctx.print(globals, report, () => formatUsage(report));
        },
      ),
    );
}

export function formatUsage(report: UsageReport): string {
  const head = `usage of events ${report.attributedBy === 'ackAt' ? 'acknowledged' : 'received'} in [${iso(report.from)}, ${iso(report.to)})`;
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
