import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ArnFormat, Duration, Names, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { assertConsumerRules } from '../../core/config/consumer-rules';
import { FIFO_SUFFIX, isOrdered, transformWorkerSource, workerEntry } from '../../core/config/consumers';
import type { ConsumerConfig } from '../../core/config/schema';
import { ENV } from '../../core/env';
import { ConfigurationError } from '../../core/errors';
import { keyPattern, ledgerKeyPatternOf } from '../../core/model';
import { PROJECT_ROOT, privateDir } from '../../core/paths';
import { consumerRetentionSeconds, QUEUE_RETENTION, retentionNeededSeconds } from '../../core/queues';
import { deadLetterQueueProps, workQueueProps } from './defaults';
import { HookledgerFunction } from './hookledger-function';
import { grantItemsByKeyPattern } from './storage';

export interface ConsumerWorkerProps {
  /** The consumer's entry in hookledger.config.ts (id, entry, retry budget, lease, concurrency). */
  readonly consumer: ConsumerConfig;
  /** The EventStore table: the worker reads `pay#` payload items and `key#` registry items. */
  readonly events: dynamodb.ITable;
  /** The Ledger table: the worker claims and acknowledges its own deliveries (`...#<consumerId>`). */
  readonly ledger: dynamodb.ITable;
  /**
   * How long an unreceived message stays on the queue. Shorter than the DLQ's 14 days, because a
   * message keeps its original enqueue time when it moves to the DLQ; at least the consumer's retry
   * budget (`maxReceiveCount` x `visibilityTimeoutSeconds`) plus a day, so that no failing message
   * expires before it reaches the DLQ.
   * @default 7 days, or longer when the retry budget needs it (core/queues.ts consumerRetentionSeconds)
   */
  readonly queueRetention?: Duration;
  /**
   * Places the worker in a VPC, for HTTP destinations on private endpoints. The role then also gets
   * the managed AWSLambdaVPCAccessExecutionRole (ENI management).
   * @default - not in a VPC
   */
  readonly vpc?: ConsumerVpcPlacement;
}

export interface ConsumerVpcPlacement {
  readonly vpc: ec2.IVpc;
  /** @default - the VPC's private subnets */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /** @default - a new security group allowing all outbound traffic */
  readonly securityGroups?: ec2.ISecurityGroup[];
}

/**
 * One consumer: its queue, its dead-letter queue, and its worker function running under its own IAM
 * role (the consumer's principal, recorded on every read and acknowledgement).
 */
export class ConsumerWorker extends Construct {
  readonly consumerId: string;
  readonly queue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly worker: HookledgerFunction;
  readonly role: iam.Role;
  /** HTTP consumers: the consumer's Standard Webhooks signing secret (its receiver verifies with it). */
  readonly signingSecret?: secretsmanager.ISecret;

  constructor(scope: Construct, id: string, props: ConsumerWorkerProps) {
    super(scope, id);
    const c = props.consumer;
    // The schema's consumer rules, in case the config did not go through defineConfig.
    assertConsumerRules(c);
    const retention = queueRetentionOf(c, props.queueRetention);
    this.consumerId = c.id;
    const { queue, deadLetterQueue } = this.buildQueues(c, retention);
    this.deadLetterQueue = deadLetterQueue;
    this.queue = queue;
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Principal of hookledger consumer ${c.id}`,
    });
    if (c.kind === 'http') this.signingSecret = this.buildSigningSecret(c);
    if (c.kind === 'http' && c.transform) writeTransformWorker(c);
    this.worker = this.buildWorker(c, props);
    this.consumeQueue(c);
    this.grantDeliveries(c, props);
    if (c.kind === 'http' && this.signingSecret) this.grantHttpDestination(this.signingSecret);
  }

  /**
   * The work queue and its DLQ. CloudFormation cannot express "the DLQ only accepts redrives from its
   * source" with generated names: the source's RedrivePolicy needs the DLQ's ARN and the DLQ's
   * RedriveAllowPolicy needs the source's ARN, a cycle. So the source queue gets a name fixed at synth
   * (unique per stack and construct path, like a generated one) and the DLQ names it by that ARN.
   * Ordered consumers: FIFO queue and DLQ (a FIFO queue's DLQ must be FIFO); names at most 80 characters.
   */
  private buildQueues(c: ConsumerConfig, retention: Duration): { queue: sqs.IQueue; deadLetterQueue: sqs.IQueue } {
    const fifo = isOrdered(c);
    const queueName = `${Names.uniqueResourceName(this, { maxLength: fifo ? 69 : 74, separator: '-' })}-queue${fifo ? FIFO_SUFFIX : ''}`;
    const queueArn = Stack.of(this).formatArn({
      service: 'sqs',
      resource: queueName,
      arnFormat: ArnFormat.NO_RESOURCE_NAME,
    });

    // Retained: removing the consumer (or the stack) must not delete poison messages nobody has looked at.
    const deadLetterQueue = new sqs.Queue(
      this,
      'DeadLetterQueue',
      deadLetterQueueProps({
        fifo,
        redriveAllowPolicy: {
          redrivePermission: sqs.RedrivePermission.BY_QUEUE,
          sourceQueues: [sqs.Queue.fromQueueArn(this, 'RedriveTarget', queueArn)],
        },
      }),
    );
    Validations.of(deadLetterQueue).acknowledge({
      id: 'Serverless-SQSRedrivePolicy',
      reason:
        "This is the consumer's terminal dead-letter queue: nothing consumes it, its depth alarms, and operators move messages back with `hookledger redrive`, so a DLQ behind it would never receive anything.",
    });
    const queue = new sqs.Queue(
      this,
      'Queue',
      workQueueProps({
        queueName,
        visibility: Duration.seconds(c.visibilityTimeoutSeconds),
        retention,
        // The fan-out sets the deduplication id (the ledger key).
        fifo,
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: c.maxReceiveCount },
      }),
    );
    return { queue, deadLetterQueue };
  }

  /** An HTTP consumer's Standard Webhooks signing secret: its receiver verifies deliveries with it. */
  private buildSigningSecret(c: ConsumerConfig): secretsmanager.ISecret {
    const secret = new secretsmanager.Secret(this, 'SigningSecret', {
      description: `hookledger signing secret of HTTP consumer "${c.id}": its receiver verifies deliveries with it (hookledger secrets get ${c.id})`,
      // 48 base64-alphabet characters: a Standard Webhooks secret (`secrets get` shows it with whsec_).
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
      // The receiving service holds a copy: deleting the secret would break its verification for good.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The receiving service must be given the new value before it is used, so rotation is an operator step (`hookledger secrets rotate`), during which the worker signs with both secrets for the overlap.',
    });
    return secret;
  }

  private buildWorker(c: ConsumerConfig, props: ConsumerWorkerProps): HookledgerFunction {
    const http = c.kind === 'http';
    const worker = new HookledgerFunction(this, 'Worker', {
      entry: workerEntry(c),
      description: `hookledger consumer ${c.id} (policy ${c.policyVersion})`,
      serviceName: `hookledger-${c.id}`,
      role: this.role,
      timeout: Duration.seconds(c.timeoutSeconds),
      memorySize: c.memoryMb,
      // Opt-in: a reservation that leaves the account under 100 unreserved fails the deploy. The
      // event source's maxConcurrency caps the consumer either way; when reserved, the schema keeps
      // the reservation at or above it, since throttled SQS deliveries still count as receives.
      reservedConcurrentExecutions: c.reservedConcurrency,
      environment: {
        [ENV.consumerId]: c.id,
        [ENV.queueUrl]: this.queue.queueUrl,
        [ENV.dlqUrl]: this.deadLetterQueue.queueUrl,
        [ENV.principal]: this.role.roleArn,
        [ENV.eventsTable]: props.events.tableName,
        [ENV.ledgerTable]: props.ledger.tableName,
        ...(http && this.signingSecret
          ? {
              [ENV.consumerSecret]: this.signingSecret.secretArn,
              [ENV.queueArn]: this.queue.queueArn,
              [ENV.stackName]: Stack.of(this).stackName,
            }
          : {}),
      },
      ...(props.vpc ? { vpc: props.vpc.vpc, vpcSubnets: props.vpc.vpcSubnets, securityGroups: props.vpc.securityGroups } : {}),
    });
    if (props.vpc) {
      this.role.addManagedPolicy(iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'));
    }
    return worker;
  }

  /** The worker consumes its queue; the event source grants the consume actions on this queue only. */
  private consumeQueue(c: ConsumerConfig): void {
    this.worker.function.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: c.batchSize,
        maxConcurrency: c.maxConcurrency,
        // Left out at 0: the shipped template keeps none, and the CDK refuses any window, 0 included, on a FIFO queue.
        ...(c.batchingWindowSeconds > 0 ? { maxBatchingWindow: Duration.seconds(c.batchingWindowSeconds) } : {}),
        reportBatchItemFailures: true,
      }),
    );
    Validations.of(this.worker).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason:
        "Lambda supports on-failure destinations only for stream and Kafka event sources; for this SQS event source the queue's redrive policy sends a message to the consumer's DLQ after maxReceiveCount receives.",
    });
  }

  private grantDeliveries(c: ConsumerConfig, props: ConsumerWorkerProps): void {
    // Permanent errors go straight to the DLQ instead of burning the retry budget.
    this.deadLetterQueue.grantSendMessages(this.role);
    // Ledger keys end in `#<consumerId>`: a consumer can claim and acknowledge only its own deliveries.
    grantItemsByKeyPattern(props.ledger, this.role, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], [ledgerKeyPatternOf(c.id)]);
    // Payloads and key-registry items only; never receipts, re-queues or audit items.
    grantItemsByKeyPattern(props.events, this.role, ['dynamodb:GetItem'], [keyPattern('key')]);
  }

  /** An HTTP consumer reads its signing secret and may open its own circuit breaker. */
  private grantHttpDestination(signingSecret: secretsmanager.ISecret): void {
    signingSecret.grantRead(this.role);
    // The circuit breaker disables this consumer's event source mapping, as `hookledger pause` does.
    // A separate policy: the function does not depend on it, so naming the function here is no cycle.
    const breaker = new iam.Policy(this, 'CircuitBreakerPolicy', {
      roles: [this.role],
      statements: [
        new iam.PolicyStatement({ actions: ['lambda:ListEventSourceMappings'], resources: ['*'] }),
        new iam.PolicyStatement({
          actions: ['lambda:UpdateEventSourceMapping'],
          resources: [
            Stack.of(this).formatArn({
              service: 'lambda',
              resource: 'event-source-mapping',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          ],
          conditions: { StringEquals: { 'lambda:FunctionArn': this.worker.function.functionArn } },
        }),
      ],
    });
    Validations.of(breaker).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'lambda:ListEventSourceMappings has no resource-level permissions and must be granted on "*"; it lists mappings only, so the breaker can find its own queue\'s mapping (its id is not known at synth).',
      },
      {
        id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:event-source-mapping:*]',
        reason:
          "lambda:UpdateEventSourceMapping on any mapping ARN, narrowed by the lambda:FunctionArn condition to this consumer's own function: the breaker can disable only its own mapping, whose id is not known at synth.",
      },
    );
  }
}

/**
 * The queue's retention: within the 13 days that leave a message a day in the 14-day DLQ, and at
 * least the retry budget plus a day, so that no failing message expires before it reaches the DLQ.
 */
function queueRetentionOf(c: ConsumerConfig, given: Duration | undefined): Duration {
  const retention = given ?? Duration.seconds(consumerRetentionSeconds(c));
  if (retention.toSeconds() > QUEUE_RETENTION.consumerMaxSeconds) {
    throw new ConfigurationError(
      `consumer ${c.id}: queueRetention must be at most 13 days so a message still has a day in the 14-day DLQ, got ${retention.toSeconds()} seconds; ` +
        'lower it, or lower maxReceiveCount or visibilityTimeoutSeconds if the retry budget needs more',
    );
  }
  if (retention.toSeconds() < retentionNeededSeconds(c)) {
    throw new ConfigurationError(
      `consumer ${c.id}: queueRetention ${retention.toSeconds()} s is shorter than maxReceiveCount ${c.maxReceiveCount} x visibilityTimeoutSeconds ` +
        `${c.visibilityTimeoutSeconds} plus a day (${retentionNeededSeconds(c)} s): failing messages would expire before reaching the DLQ; ` +
        'leave queueRetention unset (it follows the retry budget) or raise it',
    );
  }
  return retention;
}

/**
 * An HTTP consumer's transform is bundled into its worker through a generated entry (under
 * .hookledger/workers/, git-ignored): the transform module must exist and export `transform`.
 */
function writeTransformWorker(c: ConsumerConfig): void {
  const module = path.join(PROJECT_ROOT, c.transform!);
  if (!existsSync(module)) {
    throw new ConfigurationError(
      `consumer ${c.id}: transform ${c.transform} does not exist; create it, exporting transform({ eventId, eventType, tenantId, keyId, payload })`,
    );
  }
  if (!/export\s+(async\s+)?(function|const|let)\s+transform\b/.test(readFileSync(module, 'utf8'))) {
    throw new ConfigurationError(`consumer ${c.id}: ${c.transform} must export a function named "transform"`);
  }
  const entry = path.join(PROJECT_ROOT, workerEntry(c));
  privateDir(path.dirname(entry));
  const source = transformWorkerSource(c);
  if (!existsSync(entry) || readFileSync(entry, 'utf8') !== source) writeFileSync(entry, source);
}
