/** `hookledger doctor`: preflight a deployment; every problem with its fix; exit 1 when any. */
import type { Command } from 'commander';
import { DEFAULT_STACK_NAME } from '../../core/outputs';
import type { DoctorReport } from '../../ops/doctor';
import { EXIT } from '../../ops/errors';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('doctor')
    .description(
      `preflight a deployment (before or after cdk deploy): CDK bootstrap, account concurrency, signing secrets set, alarm subscription, consumer event sources; each problem with its fix; exit 1 when any (--stack defaults to ${DEFAULT_STACK_NAME})`,
    )
    // Not withTarget: doctor reads the deployment itself, and must work before the stack exists.
    .action(
      ctx.action(async (globals) => {
        const stackName = globals.stack ?? DEFAULT_STACK_NAME;
        const { bootstrapRequirement, doctor, doctorClients } = await import('../../ops/doctor');
        const clients = doctorClients(globals.region);
        try {
          const report = await doctor(clients, {
            config: ctx.config,
            stackName,
            bootstrap: await bootstrapRequirement(ctx.root, stackName),
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
  const lines = [`hookledger doctor: stack ${report.stack} in ${report.region}`, ''];
  for (const check of report.checks) {
    lines.push(`${label[check.status]}  ${check.id.padEnd(24)} ${check.message}`);
    if (check.fix) lines.push(`${' '.repeat(9)}${' '.repeat(25)}fix: ${check.fix}`);
  }
  const warnings = report.warnings > 0 ? `; ${report.warnings} warning(s)` : '';
  lines.push('', `${report.problems === 0 ? 'no problems found' : `${report.problems} problem(s) found`}${warnings}`);
  return lines.join('\n');
}
