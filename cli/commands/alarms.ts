/**
 * `hookledger alarms`: every alarm rule with its state, the reason and, where the data records it, since
 * when; the Health view's rows (ops/health.ts), computed from the stack's data on the local stack and
 * on AWS alike. Exit 1 while any rule is in ALARM, as `reconcile` does while a violation remains.
 */
import type { Command } from 'commander';
import { EXIT } from '../../ops/errors';
import type { HealthReport } from '../../ops/health';
import type { Target } from '../../ops/target';
import { iso } from '../../ops/time';
import { table } from '../format';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('alarms')
    .description(
      'every alarm rule (DeadLetters, OldestMessageAge, CircuitOpen, Paused per consumer; SignatureFailures per source; FanOutFailures, ReconcileViolations) with its state, reason and since when, computed from the stack’s data; exit 1 while any is in ALARM',
    )
    .action(
      ctx.withTarget(async (connect, globals) => {
        const [target, { targetHealth }] = await Promise.all([connect(), import('../../ops/health')]);
        const report = await targetHealth(target, ctx.config);
        ctx.print(globals, report, () => formatAlarms(report, target));
        return report.rows.some((r) => r.state === 'ALARM') ? EXIT.found : EXIT.ok;
      }),
    );
}

export function formatAlarms(report: HealthReport, target: Target): string {
  const alarming = report.rows.filter((r) => r.state === 'ALARM').length;
  return [
    `${target.label} at ${iso(report.at)}: ${alarming === 0 ? 'all OK' : `${alarming} in ALARM`}`,
    '',
    table(report.rows, [
      { header: 'RULE', value: (r) => r.rule },
      { header: 'SUBJECT', value: (r) => r.subject },
      { header: 'STATE', value: (r) => r.state },
      { header: 'SINCE', value: (r) => (r.since === undefined ? '-' : iso(r.since)) },
      { header: 'REASON', value: (r) => r.reason },
    ]),
    '',
    'SINCE "-": the rule is OK, or its data records no start time (a DLQ message, the breaker and a pause keep none).',
    ...report.notes,
  ].join('\n');
}
