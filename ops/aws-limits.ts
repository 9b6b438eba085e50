/**
 * The AWS service limits the estimates read, in one place: published quotas and rates that decide
 * how much traffic a deployment can carry (ops/capacity-check.ts, `hookledger doctor --rate`) and how
 * its batches fill (ops/batching.ts). Sources: ../shared/AWS-FACTS.md and the services' quota pages
 * (Lambda "scaling behavior", API Gateway "quotas", Lambda "SQS scaling"); re-check the live pages.
 */
import type { TableCapacity } from '../core/config/capacity';

export const DYNAMODB_LIMITS = {
  /** One partition serves at most this many write units a second. */
  partitionWriteUnits: 1_000,
  /** And this many (strongly consistent) read units a second. */
  partitionReadUnits: 3_000,
  /** What a new on-demand table serves at once (its warm throughput): about 4 partitions. */
  onDemandInitialWriteUnits: 4_000,
  /** The default per-table quota, each way (a Service Quotas increase raises it). */
  tableQuotaUnits: 40_000,
  /** Processes that may read one stream shard at once; the fan-out is one of them. */
  streamReadersPerShard: 2,
} as const;

export const LAMBDA_LIMITS = {
  /** The account's concurrent executions per Region by default (a Service Quotas increase raises it). */
  accountConcurrency: 1_000,
  /** Per function: at most this many new execution environments ... */
  scalingEnvironments: 1_000,
  /** ... every this many seconds. */
  scalingPeriodSeconds: 10,
  /** Concurrent batches one SQS event source can run. */
  sqsEventSourceMaxConcurrency: 1_000,
  /** Concurrent batches per stream shard at most (parallelizationFactor). */
  maxParallelizationFactor: 10,
} as const;

export const API_GATEWAY_LIMITS = {
  /** Requests per second across the account's APIs in a Region (most Regions; a quota increase raises it). */
  accountRps: 10_000,
  /** The token bucket's size on top of it: a burst of this many requests passes at once. */
  accountBurst: 5_000,
} as const;

/**
 * About how many shards the EventStore's stream has: one per table partition. A new on-demand table
 * starts with enough partitions for its warm throughput; a provisioned one with enough for its
 * minimum capacity. Tables split partitions as they grow and never merge them, so an older, busier
 * table has at least as many.
 */
export function streamShardsOf(capacity: TableCapacity): number {
  if (capacity.mode === 'on-demand') return Math.ceil(DYNAMODB_LIMITS.onDemandInitialWriteUnits / DYNAMODB_LIMITS.partitionWriteUnits);
  return Math.max(
    1,
    Math.ceil(capacity.minWrite / DYNAMODB_LIMITS.partitionWriteUnits),
    Math.ceil(capacity.minRead / DYNAMODB_LIMITS.partitionReadUnits),
  );
}
