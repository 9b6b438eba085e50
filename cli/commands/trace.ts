/** `hookledger trace <eventId>`: everything recorded about one event. */
import type { Command } from 'commander';
import { iso } from '../../ops/time';
import type { TimelineStep, TraceReport } from '../../ops/trace';
import { fields, table } from '../format';
import { requireSource } from './args';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('trace')
    .description('everything recorded about one event: receipt, deliveries, attempts, errors, usage, replays, access log')
    .argument('<eventId>', 'the event id, e.g. evt_01J8K7M2Q4')
    .option('--source <id>', 'the source (default: every configured source is tried)')
    .action(
      ctx.withTarget(async (connect, globals, eventId: string, options: { source?: string }) => {
        if (options.source !== undefined) requireSource(ctx.config, options.source);
        const target = await connect();
        const { trace } = await import('../../ops/trace');
        const report = await trace({ ddb: target.ddb, tables: target.tables, config: ctx.config }, eventId, { source: options.source });
        ctx.print(globals, report, () => formatTrace(report));
      }),
    );
}

export function formatTrace(report: TraceReport): string {
  const r = report.receipt;
  const lines = [
    fields([
      ['event', `${r.source} ${r.eventId}`],
      ['type', r.eventType],
      ['tenant', r.tenantId],
      ['key', r.keyId],
      ['received', iso(r.receivedAt)],
      ['origin', r.origin],
      ['secret', r.secretVersion ?? '(none: recorded from the provider API)'],
      [
        'payload',
        r.erased
          ? `payload erased ${iso(r.erased.at)} by ${r.erased.by} (erasure ${r.erased.erasureId}; ${r.payloadBytes} bytes; ${r.payloadHash})`
          : `${r.payload} (${r.payloadBytes} bytes${r.payloadObject ? `, in the payload bucket at ${r.payloadObject}` : ''}, kept until ${iso(r.payloadExpiresAt)}; ${r.payloadHash})`,
      ],
      ['delivery set', r.consumers.join(', ') || '(none)'],
      ...(r.traceId
        ? ([['x-ray trace', `${r.traceId} (intake; the fan-out's and consumers' traces: annotation.event_id = "${r.eventId}")`]] as [
            string,
            string,
          ][])
        : []),
      ...(report.conflicts.count > 0
        ? ([['conflicts', `${report.conflicts.count} request(s) reused this event id with other bytes (answered duplicate_conflict)`]] as [
            string,
            string,
          ][])
        : []),
    ]),
    '',
    table(report.deliveries, [
      { header: 'CONSUMER', value: (d) => d.consumer + (d.expected ? '' : ' (unexpected)') },
      { header: 'STATE', value: (d) => d.state },
      { header: 'ATTEMPTS', value: (d) => d.attempts },
      { header: 'UNITS', value: (d) => d.units },
      { header: 'TENANT', value: (d) => d.tenantId },
      { header: 'POLICY', value: (d) => d.policyVersion },
      { header: 'OUTCOME', value: (d) => d.outcome },
      { header: 'LAST ERROR', value: (d) => d.lastErrorCategory },
      { header: 'ACKED', value: (d) => (d.ackAt ? iso(d.ackAt) : undefined) },
    ]),
  ];
  for (const d of report.deliveries) {
    const detail: string[] = [];
    if (d.principal) detail.push(`  acknowledged by ${d.principal}`);
    for (const e of d.errors) detail.push(`  error   attempt ${e.attempt} ${iso(e.at)} ${e.category}: ${e.message}`);
    for (const read of d.reads)
      detail.push(`  read    ${iso(read.at)} ${read.principal}${read.replayId ? ` (replay ${read.replayId})` : ''}`);
    for (const p of d.replayRequests) detail.push(`  replay requested ${p.replayId} ${iso(p.at)}${p.operator ? ` by ${p.operator}` : ''}`);
    for (const p of d.replays)
      detail.push(`  replayed ${p.replayId} ${iso(p.at)} attempt ${p.attempt} policy ${p.policyVersion}: ${p.outcome}`);
    if (detail.length > 0) lines.push('', `${d.consumer}:`, ...detail);
  }
  lines.push('', 'timeline (ms since receipt):', ...report.timeline.map(timelineLine));
  if (report.conflicts.entries.length > 0) {
    lines.push('', 'duplicate_conflict requests (stored: nothing but this audit):');
    for (const c of report.conflicts.entries) {
      lines.push(
        `  ${iso(c.at)} ${c.payloadBytes} bytes, ${c.secretVersion ? `secret ${c.secretVersion}` : c.origin}, hmac-sha256:${c.payloadHmac}`,
      );
    }
  }
  return lines.join('\n');
}

/** One step of the timeline: when (or `not timed`), then what, who, which attempt and how it ended. */
function timelineLine(s: TimelineStep): string {
  const when = s.sinceReceiptMs === undefined ? 'not timed' : `+${s.sinceReceiptMs} ms`;
  const what = [
    s.step,
    s.consumer,
    s.attempt !== undefined ? `attempt ${s.attempt}` : undefined,
    s.category ?? s.outcome,
    s.httpStatus !== undefined ? `HTTP ${s.httpStatus}` : undefined,
    s.durationMs !== undefined ? `took ${s.durationMs} ms` : undefined,
    s.replayId ? `replay ${s.replayId}` : undefined,
  ].filter(Boolean);
  return `  ${when.padStart(12)}  ${what.join(' ')}`;
}
