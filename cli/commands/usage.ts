/** `hookledger usage`: billable units by tenant and consumer over a window. */
import type { Command } from 'commander';
import { UsageError } from '../errors';
import { csv, table } from '../format';
import { type UsageReport, usage } from '../ops/usage';
import { iso } from '../time';
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

/**
 * RFC 4180 CSV for invoicing: a header, then one row per (tenant, consumer) with the window, units
 * and done deliveries. Values are quoted when they hold a comma, `;`, quote or line break; a tenant
 * id starting with `=`, `+`, `-` or `@` is written `'`-prefixed so no spreadsheet runs it (cli/format.ts csvCell).
 */
export function formatUsageCsv(report: UsageReport): string {
  const lines: (string | number)[][] = [['window_from', 'window_to', 'tenant_id', 'consumer_id', 'units', 'deliveries']];
  for (const r of report.rows) lines.push([iso(report.from), iso(report.to), r.tenantId, r.consumerId, r.units, r.deliveries]);
  return csv(lines);
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
