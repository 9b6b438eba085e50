/** `hookledger cost`: what the configured stack would cost a month at a steady rate, on demand beside provisioned. */
import type { Command } from 'commander';
import { MAX_BODY_BYTES_CEILING } from '../../core/blobs';
import type { CostReport } from '../../ops/cost';
import { TRAFFIC, type Traffic } from '../../ops/cost-model';
import { UsageError } from '../../ops/errors';
import { table } from '../format';
import type { CommandContext } from './context';

interface CostOptions {
  readonly rate: string;
  readonly bodyBytes?: string;
  readonly burstiness?: string;
  readonly eventType?: string;
  readonly streamShards?: string;
}

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('cost')
    .description(
      'estimate the monthly AWS bill of the configured stack at a steady rate: per service, per month and per million webhooks, on demand beside provisioned (bench/results.json units, bench/prices.json prices)',
    )
    .requiredOption('--rate <n>/s', 'webhooks per second, steady (e.g. 50/s)')
    .option('--body-bytes <n>', 'body size of a webhook (default: the 1 KB the bench measured)')
    .option(
      '--burstiness <low|high|backlog>',
      'take batching as a bench column measured it (one at a time, a burst, a released backlog) instead of modelling it at the rate',
    )
    .option('--stream-shards <n>', "shards of the EventStore's stream the fan-out reads (default: about its partitions)")
    .option('--event-type <type>', 'deliver to the consumers subscribed to this type (default: every consumer)')
    .action(
      ctx.action(async (globals, options: CostOptions) => {
        const { benchFiles, estimateStackCost } = await import('../../ops/cost');
        const report = estimateStackCost(
          ctx.config,
          {
            rate: parseRate(options.rate),
            ...(options.bodyBytes !== undefined ? { bodyBytes: parseBodyBytes(options.bodyBytes) } : {}),
            ...(options.burstiness !== undefined ? { traffic: parseTraffic(options.burstiness) } : {}),
            ...(options.streamShards !== undefined ? { streamShards: parseShards(options.streamShards) } : {}),
            ...(options.eventType !== undefined ? { eventType: options.eventType } : {}),
          },
          benchFiles(ctx.root),
        );
        ctx.print(globals, report, () => formatCost(report));
      }),
    );
}

export function parseRate(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(?:\/s)?$/.exec(text.trim());
  const rate = m ? Number(m[1]) : Number.NaN;
  if (!(rate > 0 && Number.isFinite(rate))) {
    throw new UsageError(`--rate must be webhooks per second, a number above 0 like 50/s (got ${JSON.stringify(text)})`);
  }
  return rate;
}

function parseBodyBytes(text: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(Number.isInteger(n) && n >= 1 && n <= MAX_BODY_BYTES_CEILING)) {
    throw new UsageError(`--body-bytes must be a whole number of bytes, 1-${MAX_BODY_BYTES_CEILING} (got ${JSON.stringify(text)})`);
  }
  return n;
}

function parseShards(text: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(Number.isInteger(n) && n >= 1)) {
    throw new UsageError(`--stream-shards must be a whole number of shards, at least 1 (got ${JSON.stringify(text)})`);
  }
  return n;
}

function parseTraffic(text: string): Traffic {
  if (!(TRAFFIC as readonly string[]).includes(text)) {
    throw new UsageError(`--burstiness must be one of ${TRAFFIC.join(', ')} (got ${JSON.stringify(text)})`);
  }
  return text as Traffic;
}

const usd = (v: number) => `$${v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const units = (v: number) => v.toLocaleString('en-US', { maximumFractionDigits: 0 });

export function formatCost(r: CostReport): string {
  const services = Object.keys(r.onDemand.services) as (keyof typeof r.onDemand.services)[];
  const rows = [
    ...services.map((s) => ({ name: s as string, od: r.onDemand.services[s], pr: r.provisioned.services[s] })),
    { name: 'total', od: r.onDemand, pr: r.provisioned },
  ];
  const c = r.provisioned.capacity;
  const breakEven = Number.isFinite(r.breakEvenPerSecond)
    ? `provisioned pays off above a steady ${r.breakEvenPerSecond.toFixed(2)} webhooks/s (this stack's DynamoDB floors against its on-demand units)`
    : 'provisioned never pays off for this stack at any rate';
  return [
    `${units(r.webhooksPerMonth)} webhooks a month at ${r.ratePerSecond}/s; ${r.deliveries.length} deliveries per webhook (${r.deliveries.join(', ')})`,
    `per webhook: ${r.perWebhook.writeUnits.toFixed(2)} write units, ${r.perWebhook.readUnits.toFixed(2)} read units, ${r.perWebhook.sqsRequests.toFixed(2)} SQS requests, ${r.perWebhook.lambdaInvocations.toFixed(2)} Lambda invocations (${r.traffic === 'modelled' ? `batching modelled at ${r.ratePerSecond}/s` : `the bench's ${r.traffic} traffic column`})`,
    ...batchingLines(r),
    '',
    table(rows, [
      { header: 'SERVICE', value: (x) => x.name },
      { header: 'ON-DEMAND $/MONTH', value: (x) => usd(x.od.monthlyUsd), align: 'right' },
      { header: '$/MILLION', value: (x) => usd(x.od.perMillionUsd), align: 'right' },
      { header: 'PROVISIONED $/MONTH', value: (x) => usd(x.pr.monthlyUsd), align: 'right' },
      { header: '$/MILLION', value: (x) => usd(x.pr.perMillionUsd), align: 'right' },
    ]),
    '',
    `provisioned capacity at this rate (WCU / RCU): EventStore ${units(c.eventStore.write)} / ${units(c.eventStore.read)}, its window index (byTenantDay) ${units(c.byTenantDay.write)} / ${units(c.byTenantDay.read)}, Ledger ${units(c.ledger.write)} / ${units(c.ledger.read)} (bounds: EventStore ${r.provisionedSettings.eventStore}, Ledger ${r.provisionedSettings.ledger})`,
    ...(r.throttled.length > 0
      ? [
          `WARNING: at ${r.ratePerSecond}/s ${r.throttled.join(', ')} need more capacity than their configured max: the excess would be throttled (intake answers 503 and providers retry); raise maxWrite / maxRead`,
        ]
      : []),
    breakEven,
    '',
    'assumptions:',
    ...r.assumptions.notes.map((a) => `  - ${a}`),
    `prices: ${r.sources.prices}; units: ${r.sources.units}`,
  ].join('\n');
}

/** The batch fills the estimate used, one line per service. */
function batchingLines(r: CostReport): string[] {
  const { lambda, sqs } = r.assumptions.batching;
  if (!lambda || !sqs) return [];
  const fills = (o: Readonly<Record<string, number>>) =>
    Object.entries(o)
      .map(([id, n]) => `${id} ${n.toFixed(1)}`)
      .join(', ');
  const q = sqs.requestsPerWebhook;
  return [
    `  Lambda: ${lambda.fanoutRecordsPerInvocation.toFixed(1)} records per fan-out invocation; per consumer invocation: ${fills(lambda.consumerRecordsPerInvocation)}`,
    `  SQS: ${sqs.messagesPerSendMessageBatch.toFixed(1)} messages per SendMessageBatch; per receive: ${fills(sqs.messagesPerReceive)}; per webhook ${q.sendMessageBatch.toFixed(2)} sends + ${q.receiveMessage.toFixed(2)} receives + ${q.deleteMessageBatch.toFixed(2)} deletes + ${q.emptyReceives.toFixed(2)} empty receives`,
  ];
}
