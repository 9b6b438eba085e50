/** `hookledger status`: deliveries by state per consumer, queue and DLQ depth, paused flags, intake counts. */
import type { Command } from 'commander';
import { table } from '../format';
import { type StatusReport, status } from '../ops/status';
import type { Target } from '../target';
import { formatAge, iso } from '../time';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('status')
    .description('per consumer: deliveries by state, queue and DLQ depth, oldest pending delivery, paused; intake counts')
    .action(
      ctx.withTarget(async (connect, globals) => {
        const target = await connect();
        let paused: Set<string> | undefined;
        try {
          paused = await target.pauseControl.paused();
        } catch (error) {
          ctx.warn(`warning: paused state unknown: ${(error as Error).message}`);
        }
        let intakeOutcomes: Record<string, number> | undefined;
        try {
          intakeOutcomes = await target.intakeOutcomes();
        } catch (error) {
          ctx.warn(`warning: intake outcomes unknown: ${(error as Error).message}`);
        }
        const bar = ctx.progress('scanning');
        const report = await status(
          {
            ddb: target.ddb,
            tables: target.tables,
            config: ctx.config,
            sqs: target.sqs,
            queues: target.queues,
            fanoutFailureQueueUrl: target.fanoutFailureQueueUrl,
          },
          { paused, intakeOutcomes, onProgress: bar },
        );
        bar.end();
        ctx.print(globals, report, () => formatStatus(report, target));
      }),
    );
}

export function formatStatus(report: StatusReport, target: Target): string {
  const depth = (d?: { visible: number; inFlight: number }) => (d ? `${d.visible}/${d.inFlight}` : undefined);
  const lines = [
    `${target.label} at ${iso(report.at)}`,
    '',
    table(report.consumers, [
      { header: 'CONSUMER', value: (c) => c.consumer },
      { header: 'PAUSED', value: (c) => (c.paused === undefined ? '?' : c.paused ? 'yes' : 'no') },
      { header: 'READY', value: (c) => c.ready },
      { header: 'LEASED', value: (c) => c.leased },
      { header: 'EXPIRED', value: (c) => c.expiredLeases },
      { header: 'RETRYING', value: (c) => c.retrying },
      { header: 'QUARANTINED', value: (c) => c.quarantined },
      { header: 'DONE', value: (c) => c.done },
      { header: 'QUEUE vis/fly', value: (c) => depth(c.queue), align: 'right' },
      { header: 'DLQ vis/fly', value: (c) => depth(c.dlq), align: 'right' },
      {
        header: 'OLDEST PENDING',
        value: (c) => (c.oldestPendingAgeMs === undefined ? undefined : formatAge(c.oldestPendingAgeMs)),
        align: 'right',
      },
    ]),
    '',
    `intake: ${report.intake.events} events`,
  ];
  const types = Object.entries(report.intake.byType);
  if (types.length > 0) {
    lines.push(
      table(types, [
        { header: '  TYPE', value: ([t]) => `  ${t}` },
        { header: 'EVENTS', value: ([, n]) => n },
      ]),
    );
    lines.push(
      `secret version: ${Object.entries(report.intake.bySecretVersion)
        .map(([v, n]) => `${v} ${n}`)
        .join(', ')}`,
    );
  }
  const lastPrevious = Object.entries(report.intake.previousSecretLastVerified);
  lines.push(
    `previous secret last verified a request: ${
      lastPrevious.map(([source, at]) => `${source} ${iso(at)} (${formatAge(report.at - at)} ago)`).join(', ') || 'never'
    }`,
  );
  const outcomes = report.intake.outcomes;
  lines.push(
    outcomes
      ? `requests by outcome since the local stack started: ${
          Object.entries(outcomes)
            .map(([o, n]) => `${o} ${n}`)
            .join(', ') || 'none yet'
        }`
      : "requests by outcome: the IntakeRequests widget on the stack's CloudWatch dashboard",
  );
  if (report.fanoutFailures) {
    const f = report.fanoutFailures;
    lines.push(
      `fan-out on-failure queue: ${f.visible + f.inFlight} record(s)${f.visible + f.inFlight > 0 ? ' (stream batches not fanned out: `hookledger reconcile --repair` re-queues their deliveries and clears them)' : ''}`,
    );
  }
  return lines.join('\n');
}
