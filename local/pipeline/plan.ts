/**
 * What a pipeline runs, the same shape whether it was read from hookledger.config.ts (plain
 * `npm start`) or from a synthesized template (assembly mode, the bench): intake's function and
 * what is in front of it (the HTTP API or its function URL), the stream and queue event source
 * mappings, the tables the start-up repair reads. The steps take it from here and never look at the
 * config or the template themselves.
 */

import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SignatureFailureCounts } from '../../core/metrics';
import type { DynamoStreamsApi } from '../streams/dynamodb-streams';
import type { FilterPattern } from '../streams/filter-criteria';

/** A table stream's event source mapping (the fan-out's). */
export interface StreamMapping {
  /** The mapping's id (its UUID on the Lambda endpoint; locally its logical id). */
  readonly id: string;
  readonly functionId: string;
  /** `functionName` of the records (the function's name on AWS). */
  readonly functionName: string;
  readonly functionArn: string;
  readonly tableName: string;
  readonly eventSourceArn: string;
  readonly filters: readonly (FilterPattern | string)[];
  readonly batchSize?: number;
  /** MaximumBatchingWindowInSeconds; absent or 0: none. */
  readonly batchingWindowSeconds?: number;
  readonly maxRetryAttempts?: number;
  readonly maxRecordAgeSeconds?: number;
  readonly bisectBatchOnFunctionError?: boolean;
  readonly reportBatchItemFailures?: boolean;
  /** The on-failure destination's queue URL. */
  readonly onFailureQueueUrl?: string;
  readonly startingPosition?: 'TRIM_HORIZON' | 'LATEST';
  /** File name of its checkpoints in the data folder (file-backed data resumes where it stopped). */
  readonly checkpointFile: string;
  /** The tag of its poller's log lines. */
  readonly logName: string;
}

/** A consumer queue's event source mapping. */
export interface QueueMapping {
  readonly id: string;
  readonly consumerId: string;
  readonly functionId: string;
  readonly functionArn: string;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly batchSize?: number;
  readonly batchingWindowSeconds?: number;
  readonly filters?: readonly (FilterPattern | string)[];
  readonly maxConcurrency: number;
  readonly reportBatchItemFailures?: boolean;
  readonly logName: string;
}

export interface PipelinePlan {
  readonly tables: { readonly events: string; readonly ledger: string };
  /**
   * The function behind the HTTP API and the routes it serves (default: the gateway's two), or, with
   * `functionUrl`, the function behind its function URL: every path and method, the URL's event.
   */
  readonly gateway: {
    readonly functionId: string;
    readonly routeKeys?: readonly string[];
    readonly functionUrl?: { readonly urlId: string };
  };
  readonly streams: readonly StreamMapping[];
  readonly queues: readonly QueueMapping[];
}

/** The clients an event source mapping reads and deletes with: its function role's, where IAM is checked. */
export interface MappingClients {
  readonly sqs: SQSClient;
  readonly streams: DynamoStreamsApi;
}

/**
 * Where the functions come from: handlers built in this process from the sources (local/wiring.ts)
 * or the assembly's bundles, each in its own process (local/assembly/functions.ts).
 */
export interface PipelineFunctions {
  /** Calls the function's current handler (looked up per call, so instrumentation can wrap it after start). */
  invoke(functionId: string, event: unknown): Promise<unknown>;
  mappingClients(functionId: string): MappingClients;
  /** Intake requests by outcome since start. */
  intakeOutcomes(): Record<string, number>;
  /** Intake's verification failures per source and minute, the last hour (local/signature-failures.ts). */
  signatureFailures(): SignatureFailureCounts;
}
