/**
 * What a target is (the local stack or a deployed one): the types ops/target.ts and
 * ops/target-aws.ts both build, apart so the deployed-stack module imports no code of the local one.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ErasableBlobs, PayloadBlobs } from '../adapters/payload-blobs';
import type { StreamBatchPort } from '../adapters/stream-batch';
import type { HookledgerConfig } from '../core/config/schema';
import type { SignatureFailureCounts } from '../core/metrics';
import type { SigningSecrets } from '../core/schemes/types';
import type { QueuePair, TableNames } from './deps';
import type { PauseControl } from './pause';
import type { SecretRotator } from './secrets';

export interface Target {
  readonly kind: 'local' | 'aws';
  /** `local (<state file>)` or `stack <name> (<region>)`, for messages. */
  readonly label: string;
  /** What the operator should know about the target before anything else (stderr, once): e.g. a configuration changed since the local stack started. */
  readonly notices?: readonly string[];
  readonly ddb: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly tables: TableNames;
  readonly queues: Readonly<Record<string, QueuePair>>;
  /** The fan-out's on-failure queue (stream batches it gave up on), when the stack names it. */
  readonly fanoutFailureQueueUrl?: string;
  /** Reads back the EventStore stream records an on-failure record names (repair decodes them). */
  readonly streamBatches: StreamBatchPort;
  webhookUrl(sourceId: string): string;
  signingSecret(sourceId: string): Promise<string>;
  readonly rotator: SecretRotator;
  /** HTTP consumers' signing secrets: read (for their receivers) and rotated like the sources'. */
  readonly consumerSecrets: { get(consumerId: string): Promise<SigningSecrets>; readonly rotator: SecretRotator };
  /** The deployment's payload-hash key (verify-payload); never printed. */
  payloadHashKey(): Promise<Buffer>;
  /** Where a source's provider API key (gap check) lives, for messages: never the value. */
  apiKeyLocation(sourceId: string): string;
  /** The source's provider API key (gap check); never printed. */
  providerApiKey(sourceId: string): Promise<string>;
  readonly pauseControl: PauseControl;
  /**
   * The payload bucket: bodies over `payloads.inlineMaxBytes` (read by the commands that read payloads,
   * written by `gaps --recover`) and erasure (list under an event's prefixes, delete); undefined when
   * the stack names none.
   */
  readonly payloadBucket?: PayloadBlobs & ErasableBlobs;
  /**
   * Where a source's rotation stands: whether a previous secret exists and until when it verifies.
   * Read from metadata (the secrets file's dates, Secrets Manager's version list); never a value.
   */
  secretRotation(sourceId: string): Promise<SecretRotationState>;
  /** Intake requests by outcome, where the target keeps them (the local stack); undefined on AWS. */
  intakeOutcomes(): Promise<Record<string, number> | undefined>;
  /**
   * The running intake's verification failures per source and minute (the local stack's admin
   * endpoint); absent on AWS, where each source's SignatureFailures alarm counts them.
   */
  intakeSignatureFailures?(): Promise<SignatureFailureCounts | undefined>;
  destroy(): void;
}

export interface SecretRotationState {
  readonly source: string;
  /** A previous secret is kept (it verifies until `previousUntil`, when that is in the future). */
  readonly hasPrevious: boolean;
  readonly previousUntil?: number;
}

export interface TargetOptions {
  readonly config: HookledgerConfig;
  /** Repository root: where .hookledger/ lives. */
  readonly root: string;
  readonly stack?: string;
  readonly region?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** What a target gives for secrets: sources' and HTTP consumers' signing secrets, the payload-hash key, provider API keys. */
export type TargetSecrets = Pick<
  Target,
  'signingSecret' | 'rotator' | 'consumerSecrets' | 'payloadHashKey' | 'secretRotation' | 'apiKeyLocation' | 'providerApiKey'
>;
