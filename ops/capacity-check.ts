/**
 * Can the configured stack carry a rate? Each AWS limit on the path (ops/aws-limits.ts) against the
 * load a steady rate, and a burst on top of it, put on it, from the per-webhook units the bench
 * measured (bench/results.json, through the cost model) and the batching ops/batching.ts models.
 * `hookledger doctor --rate` warns with it; docs/scale.md walks through it at 100, 1,000 and 10,000
 * webhooks/s and a 50x burst.
 *
 * A limit is "met" when the load reaches it (utilization >= 1): past it intake answers 429/503 and
 * providers retry (API Gateway, Lambda, DynamoDB), or a queue grows while its consumer cannot keep up
 * (SQS keeps every message; deliveries come late, none is lost).
 */
import type { HookledgerConfig } from '../core/config/schema';
import { FANOUT_EVENT_SOURCE } from '../core/queues';
import { API_GATEWAY_LIMITS, DYNAMODB_LIMITS, LAMBDA_LIMITS, streamShardsOf } from './aws-limits';
import { AWS_POLLERS } from './batching';
import { type CostFiles, costInputs } from './cost';
import { type FullPriceTable, perWebhookOf, type UnitsByTable } from './cost-model';
import type { Check } from './doctor-check';

/** The burst docs/scale.md and doctor read: this many times the steady rate, all at once. */
export const DEFAULT_BURST_FACTOR = 50;

export interface LimitRow {
  /** Stable key: `apiGateway`, `lambdaConcurrency`, `consumer:<id>`, `table:<table>`, ... */
  readonly id: string;
  /** The limit in words. */
  readonly limit: string;
  readonly load: number;
  readonly capacity: number;
  readonly unit: string;
  /** load / capacity: at 1 the limit is met. */
  readonly utilization: number;
  /** The setting or quota that raises it. */
  readonly raisedBy: string;
}

export interface CapacityCheck {
  readonly ratePerSecond: number;
  readonly burstFactor: number;
  /** Every limit at the steady rate, the most used first. */
  readonly steady: readonly LimitRow[];
  /**
   * At the burst's first seconds (burstFactor x the rate arriving at once), the most used first: the
   * limits that refuse requests (intake answers 429/503, providers retry), not the consumers' queues.
   */
  readonly burst: readonly LimitRow[];
  /** The limits the steady rate meets or passes: what doctor warns about. */
  readonly exceeded: readonly LimitRow[];
  /** The most used limit at the steady rate and in the burst. */
  readonly first: { readonly steady: LimitRow; readonly burst: LimitRow };
  /** One tenant above this many webhooks/s fills its window-index partition (windowIndex.hotTenants spreads it). */
  readonly perTenantCeiling: number;
}

/** What the limits are computed from, at one rate. */
export interface CapacityInputs {
  readonly rate: number;
  readonly units: UnitsByTable;
  readonly invocations: { readonly fanout: number; readonly consumers: Readonly<Record<string, number>> };
  readonly durationsMs: { readonly ingest: number; readonly fanout: number; readonly consumer: number };
  readonly consumers: readonly { readonly id: string; readonly maxConcurrency: number; readonly batchSize: number }[];
  readonly capacity: HookledgerConfig['capacity'];
  readonly parallelizationFactor: number;
  readonly streamBatchSize: number;
  readonly streamShards: number;
}

/** The configured stack at `rate` (and a burst of `burstFactor` x), from bench/results.json and bench/prices.json. */
export function checkCapacity(config: HookledgerConfig, rate: number, files: CostFiles, burstFactor = DEFAULT_BURST_FACTOR): CapacityCheck {
  const { prices, results, consumers, stack } = costInputs(config, { rate }, files);
  const w = perWebhookOf(prices, results, stack.shape);
  const queues = stack.batching?.estimate.queues ?? [];
  const f = (prices as FullPriceTable).assumptions.functions;
  return capacityOf(
    {
      rate,
      units: w.units,
      invocations: { fanout: w.invocations.fanout, consumers: Object.fromEntries(queues.map((q) => [q.id, q.invocations])) },
      durationsMs: {
        ingest: f.ingest.durationMsPerInvocation,
        fanout: f.fanout.durationMsPerInvocation,
        consumer: f.consumer.durationMsPerInvocation,
      },
      consumers: consumers.map((c) => ({ id: c.id, maxConcurrency: c.maxConcurrency, batchSize: c.batchSize })),
      capacity: config.capacity,
      parallelizationFactor: FANOUT_EVENT_SOURCE.parallelizationFactor,
      streamBatchSize: FANOUT_EVENT_SOURCE.batchSize,
      streamShards: streamShardsOf(config.capacity.eventStore),
    },
    burstFactor,
    Math.max(1, ...Object.values(config.windowIndex.hotTenants)),
  );
}

/** The limits at the inputs' rate and in a burst of `burstFactor` x it; pure. */
export function capacityOf(inputs: CapacityInputs, burstFactor: number, hotTenantShards = 1): CapacityCheck {
  const byUse = (rows: LimitRow[]) => [...rows].sort((a, b) => b.utilization - a.utilization);
  const steady = byUse(steadyLimits(inputs));
  const burst = byUse(burstLimits(inputs, burstFactor));
  return {
    ratePerSecond: inputs.rate,
    burstFactor,
    steady,
    burst,
    exceeded: steady.filter((r) => r.utilization >= 1),
    first: { steady: steady[0]!, burst: burst[0]! },
    perTenantCeiling: (DYNAMODB_LIMITS.partitionWriteUnits / Math.max(inputs.units.byTenantDay.write, 1e-9)) * hotTenantShards,
  };
}

const row = (r: Omit<LimitRow, 'utilization'>): LimitRow => ({ ...r, utilization: r.load / r.capacity });

const QUOTA = 'a Service Quotas increase';

/** Every limit against a steady `inputs.rate`. */
function steadyLimits(i: CapacityInputs): LimitRow[] {
  const lambdaLoad =
    (i.rate * i.durationsMs.ingest + i.rate * i.invocations.fanout * i.durationsMs.fanout) / 1000 +
    i.consumers.reduce(
      (s, c) => s + Math.min(c.maxConcurrency, (i.rate * (i.invocations.consumers[c.id] ?? 1) * i.durationsMs.consumer) / 1000),
      0,
    );
  const cycleSeconds = (AWS_POLLERS.streamPauseMs + i.durationsMs.fanout) / 1000;
  // The stream has a shard per partition, and the table splits partitions as its writes grow.
  const shards = Math.max(
    i.streamShards,
    Math.ceil((i.rate * (i.units.eventStore.write + i.units.byTenantDay.write)) / DYNAMODB_LIMITS.partitionWriteUnits),
  );
  return [
    row({
      id: 'apiGateway',
      limit: "API Gateway's account throttle (every API of the account in the Region)",
      load: i.rate,
      capacity: API_GATEWAY_LIMITS.accountRps,
      unit: 'requests/s',
      raisedBy: `${QUOTA} of API Gateway's throttle quota per account and Region (default ${API_GATEWAY_LIMITS.accountRps.toLocaleString('en-US')} rps)`,
    }),
    row({
      id: 'lambdaConcurrency',
      limit: "Lambda's concurrent executions per account and Region (intake, fan-out and consumers together)",
      load: lambdaLoad,
      capacity: LAMBDA_LIMITS.accountConcurrency,
      unit: 'concurrent executions',
      raisedBy: `${QUOTA} of Lambda's concurrent executions (default ${LAMBDA_LIMITS.accountConcurrency.toLocaleString('en-US')})`,
    }),
    row({
      id: 'fanout',
      limit: `the fan-out's stream reading (${shards} shard(s) x parallelizationFactor ${i.parallelizationFactor} x batchSize ${i.streamBatchSize} per cycle)`,
      load: i.rate,
      capacity: (shards * i.parallelizationFactor * i.streamBatchSize) / cycleSeconds,
      unit: 'webhooks/s',
      raisedBy: `FANOUT_EVENT_SOURCE.parallelizationFactor (core/queues.ts, up to ${LAMBDA_LIMITS.maxParallelizationFactor}) or its batchSize`,
    }),
    ...i.consumers.map((c) =>
      row({
        id: `consumer:${c.id}`,
        limit: `consumer ${c.id}: maxConcurrency ${c.maxConcurrency} batches of up to ${c.batchSize}, ${i.durationsMs.consumer} ms each`,
        load: i.rate,
        capacity: (c.maxConcurrency * c.batchSize * 1000) / i.durationsMs.consumer,
        unit: 'deliveries/s',
        raisedBy: `consumers[${c.id}].maxConcurrency in hookledger.config.ts (up to ${LAMBDA_LIMITS.sqsEventSourceMaxConcurrency}; reservedConcurrency with it when set)`,
      }),
    ),
    ...tableLimits(i, 1),
  ];
}

/** The tables' write limits: on demand the table quota, provisioned the configured maxWrite. */
function tableLimits(i: CapacityInputs, factor: number): LimitRow[] {
  const tables = [
    ['eventStore', 'EventStore', i.units.eventStore.write, i.capacity.eventStore],
    ['byTenantDay', 'the window index (byTenantDay)', i.units.byTenantDay.write, i.capacity.eventStore],
    ['ledger', 'Ledger', i.units.ledger.write, i.capacity.ledger],
  ] as const;
  return tables.map(([id, name, perWebhook, capacity]) => {
    const provisioned = capacity.mode === 'provisioned';
    const max = provisioned
      ? id === 'byTenantDay'
        ? (capacity.indexes.byTenantDay?.maxWrite ?? capacity.maxWrite)
        : capacity.maxWrite
      : undefined;
    return row({
      id: `table:${id}`,
      limit: provisioned ? `${name} writes: the configured maxWrite` : `${name} writes: DynamoDB's per-table quota (on demand)`,
      load: i.rate * factor * perWebhook,
      capacity: max ?? DYNAMODB_LIMITS.tableQuotaUnits,
      unit: 'WRU/s',
      raisedBy: provisioned
        ? `capacity.${id === 'ledger' ? 'ledger' : 'eventStore'}.maxWrite in hookledger.config.ts (up to the ${DYNAMODB_LIMITS.tableQuotaUnits.toLocaleString('en-US')} per-table quota)`
        : `${QUOTA} of DynamoDB's table-level write throughput (default ${DYNAMODB_LIMITS.tableQuotaUnits.toLocaleString('en-US')} WRU/s)`,
    });
  });
}

/** The limits the first seconds of a burst meet: burstFactor x the rate, arriving at once. */
function burstLimits(i: CapacityInputs, factor: number): LimitRow[] {
  const peak = i.rate * factor;
  const ingestStep = ((peak - i.rate) * i.durationsMs.ingest) / 1000;
  const onDemand = (id: 'eventStore' | 'ledger', perWebhook: number, name: string) =>
    row({
      id: `burst:${id}`,
      limit: `${name} writes: an on-demand table serves at once twice its previous peak (a new one ${DYNAMODB_LIMITS.onDemandInitialWriteUnits.toLocaleString('en-US')} WRU/s)`,
      load: peak * perWebhook,
      capacity: Math.max(2 * i.rate * perWebhook, DYNAMODB_LIMITS.onDemandInitialWriteUnits),
      unit: 'WRU/s',
      raisedBy: "the table's warm throughput (pre-warm it for the peak), or provisioned capacity with minWrite at the peak",
    });
  return [
    row({
      id: 'burst:apiGateway',
      limit: `API Gateway's account throttle plus its ${API_GATEWAY_LIMITS.accountBurst.toLocaleString('en-US')}-request burst bucket`,
      load: peak,
      capacity: API_GATEWAY_LIMITS.accountRps + API_GATEWAY_LIMITS.accountBurst,
      unit: 'requests/s',
      raisedBy: `${QUOTA} of API Gateway's throttle quota (the bucket follows it)`,
    }),
    row({
      id: 'burst:lambdaScaling',
      limit: `Lambda's scaling rate: ${LAMBDA_LIMITS.scalingEnvironments.toLocaleString('en-US')} new execution environments per function every ${LAMBDA_LIMITS.scalingPeriodSeconds} s (intake's step)`,
      load: ingestStep,
      capacity: LAMBDA_LIMITS.scalingEnvironments,
      unit: 'new environments in 10 s',
      raisedBy: "none (a fixed rate): provisioned concurrency on intake holds environments ready; providers' retries carry the rest",
    }),
    ...(i.capacity.eventStore.mode === 'on-demand'
      ? [onDemand('eventStore', i.units.eventStore.write + i.units.byTenantDay.write, 'EventStore')]
      : []),
    ...(i.capacity.ledger.mode === 'on-demand' ? [onDemand('ledger', i.units.ledger.write, 'Ledger')] : []),
    ...tableLimits(i, factor)
      .filter((r) => r.limit.includes('maxWrite'))
      .map((r) => ({ ...r, id: `burst:${r.id}` })),
    // Consumers behind a burst are not refused anything: their queues keep the backlog (docs/scale.md).
    ...steadyLimits({ ...i, rate: peak })
      .filter((r) => r.id === 'lambdaConcurrency')
      .map((r) => ({ ...r, id: `burst:${r.id}` })),
  ];
}

/**
 * `hookledger doctor --rate`: a warning per limit the steady rate meets (what raises it as the fix),
 * else one ok row naming the most used one; an info row for the first limit a burst meets.
 */
export function rateChecks(config: HookledgerConfig, rate: number, files: CostFiles): Check[] {
  const c = checkCapacity(config, rate, files);
  const pct = (r: LimitRow) => `${(100 * r.utilization).toFixed(0)}%`;
  const numbers = (r: LimitRow) =>
    `${r.load.toLocaleString('en-US', { maximumFractionDigits: 0 })} of ${r.capacity.toLocaleString('en-US', { maximumFractionDigits: 0 })} ${r.unit}`;
  const burst = c.first.burst;
  return [
    ...(c.exceeded.length === 0
      ? [
          {
            id: 'rate',
            status: 'ok' as const,
            message: `carries ${rate}/s steady: the most used limit is ${c.first.steady.limit}, ${numbers(c.first.steady)} (${pct(c.first.steady)})`,
          },
        ]
      : c.exceeded.map((r) => ({
          id: `rate:${r.id}`,
          status: 'warning' as const,
          message: `cannot carry ${rate}/s steady: ${r.limit}: ${numbers(r)} (${pct(r)})`,
          fix: `raise ${r.raisedBy}`,
        }))),
    {
      id: 'rate:burst',
      status: burst.utilization >= 1 ? ('warning' as const) : ('info' as const),
      message: `a ${c.burstFactor}x burst (${(rate * c.burstFactor).toLocaleString('en-US')}/s at once) first meets ${burst.limit}: ${numbers(burst)} (${pct(burst)})`,
      ...(burst.utilization >= 1 ? { fix: `raise ${burst.raisedBy}` } : {}),
    },
  ];
}
