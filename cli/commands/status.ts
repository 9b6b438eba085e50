/**
 * `hookledger status`: deliveries by state per consumer, queue and DLQ depth, paused flags, intake
 * counts. The delivery and intake counts cover the events received in a window (`--since`, or
 * `--from`/`--to`; default the last 7 days), read through the window index; `--scan` counts all of
 * history by scanning both tables.
 */
import type { Command } from 'commander';
import { UsageError } from '../../ops/errors';
import type { StatusReport } from '../../ops/status';
import type { Target } from '../../ops/target';
import { formatAge, iso, parseDuration } from '../../ops/time';
import { table } from '../format';
import { parseWindow } from './args';
import type { CommandContext } from './context';

interface StatusFlags {
  readonly since?: string;
  readonly from?: string;
  readonly to?: string;
  readonly scan?: boolean;
}

/** The window the flags ask for: `undefined` with `--scan` (all of history). */
export function statusWindow(flags: StatusFlags, now = Date.now()): { from: number; to: number } | undefined {
  const windowed = flags.since !== undefined || flags.from !== undefined || flags.to !== undefined;
  if (flags.scan) {
    if (windowed) throw new UsageError('--scan counts all of history: leave out --since, --from and --to');
    return undefined;
  }
  if (flags.since !== undefined && (flags.from !== undefined || flags.to !== undefined)) {
    throw new UsageError('give either --since or --from/--to, not both');
  }
  if (flags.from !== undefined) return parseWindow(flags.from, flags.to ?? 'now');
  if (flags.to !== undefined) throw new UsageError('--to needs --from (or use --since)');
  const since = parseDuration(flags.since ?? '7d', '--since');
  if (!(since > 0)) throw new UsageError(`--since must be longer than 0 (got "${flags.since}")`);
  return { from: now - since, to: now };
}

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('status')
    .description(
      'per consumer: deliveries by state, queue and DLQ depth, oldest pending delivery, paused; intake counts. Delivery and intake counts cover the events received in a window (read through the window index: cost follows the window, not the history kept)',
    )
    .option('--since <duration>', 'count the events received in the last <duration> (7d, 24h, 30m) and their deliveries (default 7d)')
    .option('--from <time>', 'or: window start (inclusive), as for usage and reconcile')
    .option('--to <time>', 'window end (exclusive), with --from (default now)')
    .option('--scan', 'count all of history instead: scans both tables (every item of both is read and billed; cost grows with history)')
    .action(
      ctx.withTarget(
        async (connect, globals, options: StatusFlags) => {
          const window = statusWindow(options);
          // The operation's module loads while the target connects; then the paused state, intake's
          // counters and the tables are read at once (each answer is independent of the others).
          const [target, { readStatus, statusReport }] = await Promise.all([connect(), import('../../ops/status')]);
          const paused = orWarning(() => target.pauseControl.paused(), 'paused state unknown');
          const intakeOutcomes = orWarning(() => target.intakeOutcomes(), 'intake outcomes unknown');
          const bar = ctx.progress(window ? 'reading the window' : 'scanning');
          const reads = readStatus(
            {
              ddb: target.ddb,
              tables: target.tables,
              sqs: target.sqs,
              queues: target.queues,
              fanoutFailureQueueUrl: target.fanoutFailureQueueUrl,
            },
            {
              paused: paused.value,
              intakeOutcomes: intakeOutcomes.value,
              onProgress: bar,
              ...(window ? { window } : { scan: true }),
            },
          );
          // Only the counting needs the configuration: it loads (its checks take the CPU) while the stack
          // answers, from the first answer on (the paused state): by then the other reads are on their way.
          await Promise.race([paused.value, reads.catch(() => undefined)]);
          const [config, read] = await Promise.all([ctx.loadConfig(), reads]);
          const report = statusReport(config, read);
          bar.end();
          for (const warning of [paused.warning(), intakeOutcomes.warning()]) if (warning) ctx.warn(warning);
          ctx.print(globals, report, () => formatStatus(report, target));
        },
        { config: false },
      ),
    );
}

/**
 * A read whose failure leaves its part of the report out: `value` resolves to undefined then, and
 * `warning()` says why (printed once the report is read, in a fixed order).
 */
function orWarning<T>(read: () => Promise<T>, what: string): { value: Promise<T | undefined>; warning(): string | undefined } {
  let warning: string | undefined;
  const value = read().catch((error: unknown) => {
    warning = `warning: ${what}: ${(error as Error).message}`;
    return undefined;
  });
  return { value, warning: () => warning };
}

export function formatStatus(report: StatusReport, target: Target): string {
  const depth = (d?: { visible: number; inFlight: number }) => (d ? `${d.visible}/${d.inFlight}` : undefined);
  const lines = [
    `${target.label} at ${iso(report.at)}`,
    report.window
      ? `deliveries and intake of events received in [${iso(report.window.from)}, ${iso(report.window.to)}); events received before ${iso(report.window.from)} are not counted; --scan counts all history`
      : 'deliveries and intake of all history (--scan)',
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
    `intake: ${report.intake.events} events${report.window ? ' in the window' : ''}`,
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
      lastPrevious.map(([source, at]) => `${source} ${iso(at)} (${formatAge(report.at - at)} ago)`).join(', ') ||
      (report.window ? `not since ${iso(report.window.from)}` : 'never')
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
