/** `hookledger reconcile [--repair]`: receipts against ledger items; exit 1 while violations remain. */
import type { Command } from 'commander';
import { EXIT, UsageError } from '../../ops/errors';
import type { ReconcileReport, RepairResult } from '../../ops/reconcile';
import { formatAge, iso, parseDuration } from '../../ops/time';
import { table } from '../format';
import { parseWindow } from './args';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('reconcile')
    .description('check receipts against ledger items in [from, to); exit 1 and list every violation by its ids')
    .option('--from <time>', 'receipts received at or after this time', '-24h')
    .option('--to <time>', 'receipts received before this time', 'now')
    .option('--grace <duration>', 'receipts younger than this are not yet expected to be delivered', '15m')
    .option('--repair', 're-queue missing and stalled deliveries (never a second ledger row); paused consumers are reported, not repaired')
    .option('--dry-run', 'with --repair: count what would be repaired; write nothing')
    .option(
      '--scan',
      'scan both tables instead of reading the window index: cost grows with all history, and it is the only way to find usage_without_event (a ledger row whose receipt does not exist)',
    )
    .action(
      ctx.withTarget(
        async (
          connect,
          globals,
          options: { from: string; to: string; grace: string; repair?: boolean; dryRun?: boolean; scan?: boolean },
        ) => {
          const window = parseWindow(options.from, options.to);
          const graceMs = parseDuration(options.grace, '--grace');
          if (options.dryRun && !options.repair) throw new UsageError('--dry-run goes with --repair (reconcile alone writes nothing)');
          const target = await connect();
          const { reconcileTarget, repairTarget } = await import('../../ops/reconcile');
          const bar = ctx.progress(options.scan ? 'scanning' : 'reading the window');
          const deps = { target, config: ctx.config };
          const request = { ...window, scan: options.scan === true, graceMs, onProgress: bar };
          if (!options.repair) {
            const report = await reconcileTarget(deps, request);
            bar.end();
            ctx.print(globals, report, () => formatReconcile(report));
            return report.violations.length > 0 ? EXIT.found : EXIT.ok;
          }
          const result = await repairTarget({ ...deps, operator: ctx.operator }, { ...request, dryRun: options.dryRun });
          bar.end();
          ctx.print(globals, result, () => `${formatReconcile(result.report)}\n\n${formatRepair(result)}`);
          if (result.dryRun) return result.candidates > 0 || result.report.violations.length > 0 ? EXIT.found : EXIT.ok;
          return result.unrepaired > 0 || result.notRepairable > 0 ? EXIT.found : EXIT.ok;
        },
      ),
    );
}

export function formatReconcile(report: ReconcileReport): string {
  const lines = [
    `reconcile [${iso(report.from)}, ${iso(report.to)}): ${report.receipts} receipts, ${report.expectedDeliveries} expected deliveries, ` +
      `${report.ledgerItems} ledger items; ${report.quarantined} quarantined (not a violation); ${report.inGrace} still within the ${formatAge(report.graceMs)} grace`,
  ];
  if (report.violations.length === 0) {
    lines.push('ok: no violations');
    return lines.join('\n');
  }
  lines.push(
    `${report.violations.length} violation(s):`,
    '',
    table(report.violations, [
      { header: 'KIND', value: (v) => v.kind },
      { header: 'SOURCE', value: (v) => v.source },
      { header: 'EVENT', value: (v) => v.eventId },
      { header: 'CONSUMER', value: (v) => v.consumerId },
      { header: 'LEDGER KEY', value: (v) => v.ledgerKey },
      {
        header: 'DETAIL',
        value: (v) => (v.kind === 'tenant_mismatch' ? `receipt ${v.receiptTenantId} / ledger ${v.ledgerTenantId}` : undefined),
      },
    ]),
  );
  return lines.join('\n');
}

export function formatRepair(result: RepairResult): string {
  const unrepaired = Object.entries(result.unrepairedByReason)
    .filter(([, n]) => n > 0)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
  const failures = result.fanoutFailureRecords;
  const lines = [
    result.dryRun
      ? `Dry run: ${result.repaired} deliveries would be re-queued, ${result.unrepaired} not (${unrepaired || 'none'}). Nothing written.`
      : result.repairId
        ? `Repair ${result.repairId}: ${result.repaired} repaired (re-queued), ${result.unrepaired} not repaired (${unrepaired || 'none'}); audit written.`
        : `Nothing to repair${result.unrepaired > 0 ? `; ${result.unrepaired} not repaired (${unrepaired})` : ''}.`,
  ];
  if (result.unrepairedByReason.paused > 0) {
    const consumers = [...new Set(result.unrepairedDeliveries.filter((d) => d.reason === 'paused').map((d) => d.consumerId))].sort();
    lines.push(`Paused, not repaired: ${consumers.join(', ')} (resume them, then run the repair again if their deliveries stay pending).`);
  }
  if (result.notRepairable > 0) lines.push(`${result.notRepairable} violation(s) a re-send cannot fix (see the list above).`);
  if (failures && failures.read > 0) {
    lines.push(
      `Fan-out failure records: ${failures.read} read, ${failures.cleared} cleared${failures.unreadable ? `, ${failures.unreadable} unreadable (left)` : ''}` +
        (failures.undecoded
          ? `, ${failures.undecoded} undecoded (left: their stream records could not be read back, kept 24 h; their time range's receipts were checked, older receipts' replays and repairs need an operator)`
          : '') +
        '.',
    );
  }
  return lines.join('\n');
}
