import { type App, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { payloadRetentionValues } from '../core/config/routing';
import { defineConfig, type HookledgerConfig, type HookledgerConfigInput } from '../core/config/schema';
import { ENV } from '../core/env';
import { ConfigurationError } from '../core/errors';
import {
  assertDistinctOutputSuffixes,
  consumerSecretArnOutput,
  DEFAULT_STACK_NAME,
  dlqUrlOutput,
  gapApiKeySecretArnOutput,
  OUTPUT,
  queueUrlOutput,
  secretArnOutput,
} from '../core/outputs';
import { type ConsumerVpcPlacement, ConsumerWorker } from './constructs/consumer-worker';
import { FanOut } from './constructs/fan-out';
import { GapCheck } from './constructs/gap-check';
import { BUNDLED_CONFIG_CONTEXT } from './constructs/hookledger-function';
import { IngestApi } from './constructs/ingest-api';
import { Observability } from './constructs/observability';
import { PayloadBucket } from './constructs/payload-bucket';
import { Reconciler } from './constructs/reconciler';
import { Storage } from './constructs/storage';

export interface HookledgerStackProps extends StackProps {
  /**
   * Sources and consumers (hookledger.config.ts, or any object of that shape). Validated here with
   * `defineConfig`, so a bad value fails synth with a message naming it.
   */
  readonly config: HookledgerConfigInput;
  /**
   * VPC placement of consumer workers by consumer id (HTTP destinations on private endpoints).
   * @default - no worker in a VPC
   */
  readonly consumerVpcs?: Readonly<Record<string, ConsumerVpcPlacement>>;
}

/**
 * Webhook intake and fan-out: HTTP API (or intake's function URL) -> ingest -> EventStore -> stream -> fan-out -> one queue,
 * DLQ and worker per consumer; a scheduled reconcile; alarms and a dashboard.
 */
export class HookledgerStack extends Stack {
  readonly config: HookledgerConfig;
  readonly storage: Storage;
  readonly payloadBucket: PayloadBucket;
  readonly ingest: IngestApi;
  readonly fanOut: FanOut;
  readonly consumers: readonly ConsumerWorker[];
  readonly reconciler: Reconciler;
  /** One per source with `gapCheck`, by source id. */
  readonly gapChecks: ReadonlyMap<string, GapCheck>;
  readonly observability: Observability;

  constructor(scope: Construct, id: string, props: HookledgerStackProps) {
    super(scope, id, props);
    const config = defineConfig(props.config);
    this.config = config;
    // Every function bundle inlines the validated configuration (see HookledgerFunction).
    this.node.setContext(BUNDLED_CONFIG_CONTEXT, JSON.stringify(config));
    assertDistinctOutputSuffixes(
      config.consumers.map((c) => c.id),
      'consumer',
    );
    assertDistinctOutputSuffixes(
      config.sources.map((s) => s.id),
      'source',
    );

    // The id is a contract: the tables' logical ids derive from it.
    this.storage = new Storage(this, 'EventStore', { capacity: config.capacity });
    this.payloadBucket = new PayloadBucket(this, 'PayloadBucket', {
      retentionDays: config.retention.payloadDays,
      retentionValues: payloadRetentionValues(config),
    });
    this.ingest = this.buildIngest(config);
    this.consumers = this.buildConsumers(config, props.consumerVpcs);
    this.fanOut = this.buildFanOut(config);
    this.reconciler = this.buildReconciler(config);
    this.observability = this.buildObservability(config);
    this.gapChecks = this.buildGapChecks(config);
    this.addOutputs();
  }

  private buildIngest(config: HookledgerConfig): IngestApi {
    const ingest = new IngestApi(this, 'Ingest', {
      endpoint: config.intake.endpoint,
      reservedConcurrency: config.intake.reservedConcurrency,
      sourceIds: config.sources.map((s) => s.id),
      events: this.storage.events,
    });
    ingest.handler.function.addEnvironment(ENV.payloadBucket, this.payloadBucket.bucket.bucketName);
    this.payloadBucket.grantPayloadWrite(ingest.handler);
    return ingest;
  }

  private buildConsumers(config: HookledgerConfig, vpcs: HookledgerStackProps['consumerVpcs']): ConsumerWorker[] {
    const { events, ledger } = this.storage;
    const consumersScope = new Construct(this, 'Consumers');
    const consumers = config.consumers.map(
      (consumer) => new ConsumerWorker(consumersScope, consumer.id, { consumer, events, ledger, vpc: vpcs?.[consumer.id] }),
    );
    // Claim check: each worker reads its own views/<id>/* and nothing else in the bucket.
    for (const w of consumers) {
      w.worker.function.addEnvironment(ENV.payloadBucket, this.payloadBucket.bucket.bucketName);
      this.payloadBucket.grantViewRead(w.consumerId, w.role);
    }
    return consumers;
  }

  private buildFanOut(config: HookledgerConfig): FanOut {
    const fanOut = new FanOut(this, 'FanOut', {
      events: this.storage.events,
      consumerQueues: this.consumers.map((w) => ({ consumerId: w.consumerId, queue: w.queue })),
      maxBatchingWindow: Duration.seconds(config.fanout.batchingWindowSeconds),
    });
    fanOut.handler.function.addEnvironment(ENV.payloadBucket, this.payloadBucket.bucket.bucketName);
    this.payloadBucket.grantPayloadRead(fanOut.handler);
    this.payloadBucket.grantViewWrite(fanOut.handler);
    return fanOut;
  }

  private buildReconciler(config: HookledgerConfig): Reconciler {
    const { events, ledger } = this.storage;
    return new Reconciler(this, 'Reconciler', {
      events,
      ledger,
      ...(config.reconcile.repair
        ? {
            repair: {
              maxPerRun: config.reconcile.maxRepairsPerRun,
              consumerQueues: this.consumers.map((w) => ({ consumerId: w.consumerId, queue: w.queue })),
              fanOutFailureQueue: this.fanOut.failureQueue,
            },
          }
        : {}),
    });
  }

  private buildObservability(config: HookledgerConfig): Observability {
    return new Observability(this, 'Observability', {
      api: this.ingest.metrics,
      intake: this.ingest.handler.function,
      fanOut: this.fanOut.handler.function,
      fanOutFailureQueue: this.fanOut.failureQueue,
      reconciler: this.reconciler.handler.function,
      reconcileInterval: this.reconciler.interval,
      reconcileDeadLetterQueue: this.reconciler.deadLetterQueue,
      alarmEmail: config.alarms.email,
      alarmSlack: config.alarms.slack,
      alarmHttpsEndpoints: config.alarms.https,
      sourceIds: config.sources.map((s) => s.id),
      signatureFailures: config.alarms.signatureFailures,
      consumers: this.consumers.map((w, i) => ({
        consumerId: w.consumerId,
        queue: w.queue,
        deadLetterQueue: w.deadLetterQueue,
        worker: w.worker.function,
        alarmAgeSeconds: config.consumers[i]!.alarmAgeSeconds,
        circuitBreaker: config.consumers[i]!.kind === 'http',
      })),
    });
  }

  /** The provider gap check of each source that has one (`gapCheck`): its own function, schedule, API-key secret and alarm. */
  private buildGapChecks(config: HookledgerConfig): Map<string, GapCheck> {
    const gapChecks = new Map<string, GapCheck>();
    const gapScope = new Construct(this, 'GapChecks');
    for (const source of config.sources) {
      if (!source.gapCheck) continue;
      const check = new GapCheck(gapScope, source.id, {
        source: { ...source, gapCheck: source.gapCheck },
        events: this.storage.events,
        ledgerTableName: this.storage.ledger.tableName,
        alarmTopic: this.observability.alarmTopic,
        payloadHashKey: this.ingest.payloadHashKey,
        payloadBucket: this.payloadBucket,
        webhookBaseUrl: this.ingest.webhookBaseUrl,
      });
      gapChecks.set(source.id, check);
      new CfnOutput(this, gapApiKeySecretArnOutput(source.id), {
        value: check.apiKeySecret.secretArn,
        description: `The ${source.gapCheck.api} API key of source ${source.id}'s gap check: put it here (created empty, retained)`,
      });
    }
    return gapChecks;
  }

  /** The outputs the CLI and operators read (core/outputs.ts names them). */
  private addOutputs(): void {
    const { events, ledger } = this.storage;
    new CfnOutput(this, OUTPUT.webhookUrl, {
      value: this.ingest.webhookBaseUrl,
      description: 'Webhook endpoint; append the source id (POST)',
    });
    new CfnOutput(this, OUTPUT.eventStoreTable, { value: events.tableName });
    new CfnOutput(this, OUTPUT.ledgerTable, { value: ledger.tableName });
    for (const w of this.consumers) {
      new CfnOutput(this, queueUrlOutput(w.consumerId), { value: w.queue.queueUrl, description: `Queue of consumer ${w.consumerId}` });
      new CfnOutput(this, dlqUrlOutput(w.consumerId), {
        value: w.deadLetterQueue.queueUrl,
        description: `DLQ of consumer ${w.consumerId}`,
      });
    }
    for (const w of this.consumers) {
      if (!w.signingSecret) continue;
      new CfnOutput(this, consumerSecretArnOutput(w.consumerId), {
        value: w.signingSecret.secretArn,
        description: `Signing secret of HTTP consumer ${w.consumerId}`,
      });
    }
    for (const [sourceId, secret] of this.ingest.secrets) {
      new CfnOutput(this, secretArnOutput(sourceId), {
        value: secret.secretArn,
        description: `Signing secret of source ${sourceId}`,
      });
    }
    new CfnOutput(this, OUTPUT.fanoutFailureQueueUrl, {
      value: this.fanOut.failureQueue.queueUrl,
      description: 'On-failure queue of the fan-out (stream batches it gave up on); `hookledger reconcile --repair` clears it',
    });
    new CfnOutput(this, OUTPUT.payloadHashKeySecretArn, {
      value: this.ingest.payloadHashKey.secretArn,
      description: 'The payload-hash key (hookledger verify-payload reads it)',
    });
    new CfnOutput(this, OUTPUT.alarmTopicArn, { value: this.observability.alarmTopic.topicArn });
    new CfnOutput(this, OUTPUT.payloadBucket, {
      value: this.payloadBucket.bucket.bucketName,
      description: 'Bodies too large for a payload item (payloads/) and claim-checked consumer views (views/<consumer>/); retained',
    });
  }
}

/** Context key naming the stack (`cdk synth -c stackName=HookledgerStaging`). */
export const STACK_NAME_CONTEXT = 'stackName';

/** What bin/app.ts does: one HookledgerStack, named by the `stackName` context (default `Hookledger`). */
export function addHookledgerStack(app: App, config: HookledgerConfigInput): HookledgerStack {
  const stackName: unknown = app.node.tryGetContext(STACK_NAME_CONTEXT) ?? DEFAULT_STACK_NAME;
  if (typeof stackName !== 'string' || !/^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(stackName)) {
    throw new ConfigurationError(
      `context ${STACK_NAME_CONTEXT} must be a CloudFormation stack name (a letter, then up to 127 letters, digits or '-'), got ${JSON.stringify(stackName)}; ` +
        `pass one with -c ${STACK_NAME_CONTEXT}=HookledgerStaging`,
    );
  }
  return new HookledgerStack(app, stackName, {
    config,
    description: 'hookledger: webhook intake, fan-out to consumers, delivery ledger',
  });
}
