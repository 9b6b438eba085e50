/**
 * `hookledger doctor`: preflight a deployment; every problem with its fix; exit 1 when any. With
 * `--rate` and no AWS region or credentials it still prints the offline rows (capacity, samples),
 * saying the deployment's checks were skipped.
 */
import type { Command } from 'commander';
import { DEFAULT_STACK_NAME } from '../../core/outputs';
import type { DoctorReport } from '../../ops/doctor';
import { EXIT } from '../../ops/errors';
import type { CommandContext } from './context';
import { parseRate } from './cost';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('doctor')
    .description(
      `preflight a deployment (before or after cdk deploy): CDK bootstrap, account concurrency, signing secrets set, alarm subscription, consumer event sources; each problem with its fix; exit 1 when any (--stack defaults to ${DEFAULT_STACK_NAME})`,
    )
    .option(
      '--rate <n>/s',
      "also warn when the configuration cannot carry this steady rate (AWS's published limits against the bench's units)",
    )
    // Not withTarget: doctor reads the deployment itself, and must work before the stack exists.
    .action(
      ctx.action(async (globals, options: { readonly rate?: string }) => {
        const stackName = globals.stack ?? DEFAULT_STACK_NAME;
        const rate = options.rate === undefined ? undefined : parseRate(options.rate);
        const { bootstrapRequirement, doctor, doctorClients } = await import('../../ops/doctor');
        const { benchFiles } = await import('../../ops/cost');
        const clients = doctorClients(globals.region);
        try {
          const report = await doctor(clients, {
            config: ctx.config,
            stackName,
            bootstrap: await bootstrapRequirement(ctx.root, stackName),
            ...(rate === undefined ? {} : { capacity: { rate, files: benchFiles(ctx.root) } }),
          });
          ctx.print(globals, report, () => formatDoctor(report));
          return report.problems > 0 ? EXIT.found : EXIT.ok;
        } finally {
          clients.destroy();
        }
      }),
    );
}

export function formatDoctor(report: DoctorReport): string {
  const label = { ok: 'ok     ', problem: 'PROBLEM', warning: 'WARN   ', info: 'info   ' } as const;
  const where = report.region === undefined ? ' (no AWS region)' : ` in ${report.region}`;
  const lines = [`hookledger doctor: stack ${report.stack}${where}`, ''];
  for (const check of report.checks) {
    lines.push(`${label[check.status]}  ${check.id.padEnd(24)} ${check.message}`);
    if (check.fix) lines.push(`${' '.repeat(9)}${' '.repeat(25)}fix: ${check.fix}`);
  }
  const warnings = report.warnings > 0 ? `; ${report.warnings} warning(s)` : '';
  lines.push('', `${report.problems === 0 ? 'no problems found' : `${report.problems} problem(s) found`}${warnings}`);
  return lines.join('\n');
}
