/**
 * Wires the real handlers (the same code the Lambdas run) to local clients. Used by the local
 * stack, the end-to-end tests and the benchmark. Only the adapters differ from AWS: the secrets
 * port reads a local file, and clients point at the emulators.
 */

import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../adapters/clients';
import { type EventStores, eventStores, intakeStore } from '../adapters/event-stores';
import { Ledger } from '../adapters/ledger';
import { Breakers, VersionWatermarks } from '../adapters/ledger-controls';
import { S3PayloadBlobs } from '../adapters/payload-blobs';
import type { SecretsPort } from '../adapters/secrets';
import type { ConsumedCapacityObserver } from '../adapters/table';
import { HttpVerificationKeys } from '../adapters/verification-keys';
import { workerEntry } from '../core/config/consumers';
import type { ConsumerConfig, HookledgerConfig } from '../core/config/schema';
import { ConfigurationError, WiringError } from '../core/errors';
import { PROJECT_ROOT } from '../core/paths';
import { ALL_SCHEMES } from '../core/schemes';
import type { VerificationKeysPort } from '../core/schemes/types';
import type { Transform } from '../core/transform';
import {
  consumerVersionPaths,
  consumerViews,
  createFanoutHandler,
  FANOUT_READ_RETRY_MS,
  type FanoutHandler,
  sourceBodyFormats,
} from '../lambdas/fanout/app';
import { createIngestHandler, type IngestHandler } from '../lambdas/ingest/app';
import { type ConsumerSecretsPort, createHttpHandle } from '../lambdas/runtime/http';
import type { ConsumerHandle, ConsumerLambdaHandler } from '../lambdas/runtime/runtime';
import { createConsumerHandler } from '../lambdas/runtime/runtime';
import { createLogger, type Logger } from '../lambdas/shared/logger';
import { localDynamoClient, localS3Client, localSqsClient } from './clients';
import type { AccessKey } from './credentials';

export interface LocalEndpoints {
  readonly dynamodb: string;
  readonly sqs: string;
  /** fauxqs serves S3 on its SQS endpoint. Default: `sqs`. */
  readonly s3?: string;
}

export interface LocalResources {
  readonly tables: { readonly events: string; readonly ledger: string };
  readonly queues: Readonly<Record<string, { readonly url: string; readonly dlqUrl: string }>>;
}

/** Signed with this process's per-start key unless `key` is given (a process reading the state folder's). */
export function localDocumentClient(endpoint: string, key?: AccessKey): DynamoDBDocumentClient {
  return createDocumentClient(localDynamoClient(endpoint, key));
}

/** A consumer principal on the local stack, shaped like the role ARN it has on AWS. */
export const localPrincipal = (consumerId: string) => `arn:aws:iam::000000000000:role/hookledger-local-${consumerId}`;

export interface WiringOptions {
  readonly config: HookledgerConfig;
  readonly endpoints: LocalEndpoints;
  readonly resources: LocalResources;
  readonly secrets: SecretsPort;
  /** Replace a consumer's handle (tests inject faults); default: the module named by its `entry`. */
  readonly handles?: Readonly<Record<string, ConsumerHandle>>;
  readonly logger?: (service: string) => Logger;
  readonly clock?: () => number;
  readonly onCapacity?: ConsumedCapacityObserver;
  readonly backoffBaseMs?: number;
  /** Told each intake outcome and the source its path names (see IngestDeps.onOutcome). */
  readonly onIntakeOutcome?: (outcome: string, sourceId: string) => void;
  /** Where `entry` paths are resolved from. Default: the repository root. */
  readonly root?: string;
  /** HTTP consumers' signing secrets (the local secrets file). Required when the config has an HTTP consumer. */
  readonly consumerSecrets?: ConsumerSecretsPort;
  /** What an HTTP consumer's circuit breaker calls to pause it (the local stack's pause). */
  readonly pause?: (consumerId: string) => Promise<void>;
  /** Told when an HTTP consumer's circuit breaker opens. */
  readonly onBreakerOpen?: (consumerId: string, failures: number) => void;
  /**
   * The payload bucket on the S3 emulator (large bodies, claim-checked views).
   * @default - none: bodies that need it are refused 503 and too-large views are marked too_large
   */
  readonly payloadBucket?: string;
  /**
   * Where key-fetching schemes (jwks: Plaid) get their keys.
   * @default - the real adapter, calling each scheme's configured keysUrl (a local key server in tests)
   */
  readonly verificationKeys?: VerificationKeysPort;
}

export interface LocalHandlers {
  readonly ingest: IngestHandler;
  readonly fanout: FanoutHandler;
  readonly consumers: Readonly<Record<string, ConsumerLambdaHandler>>;
  readonly ddb: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  /** The EventStore table's adapters: receipts, payloads, keys, audit, requeues. */
  readonly stores: EventStores;
  readonly ledger: Ledger;
  /** The payload bucket's adapter, when one is wired. */
  readonly blobs?: S3PayloadBlobs;
}

export async function buildHandlers(options: WiringOptions): Promise<LocalHandlers> {
  const { config, endpoints, resources } = options;
  const logger = options.logger ?? ((service: string) => createLogger(service));
  const ddb = localDocumentClient(endpoints.dynamodb);
  const sqs = localSqsClient(endpoints.sqs);
  // One adapter for every role here; on AWS each role's grants confine it (see PayloadBucket).
  const blobs = options.payloadBucket
    ? new S3PayloadBlobs({ client: localS3Client(endpoints.s3 ?? endpoints.sqs), bucket: options.payloadBucket })
    : undefined;
  const stores = eventStores({
    client: ddb,
    tableName: resources.tables.events,
    ...(blobs ? { blobs } : {}),
    inlineMaxBytes: config.payloads.inlineMaxBytes,
    shardsOf: (tenantId) => config.windowIndex.hotTenants[tenantId] ?? 1,
    onCapacity: options.onCapacity,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const ledger = new Ledger({ client: ddb, tableName: resources.tables.ledger, onCapacity: options.onCapacity });
  const versions = new VersionWatermarks({ client: ddb, tableName: resources.tables.ledger });
  const wired: Wired = { options, logger, ddb, sqs, stores, ledger, versions, ...(blobs ? { blobs } : {}) };
  const ingest = createIngestHandler({
    schemes: ALL_SCHEMES,
    config,
    store: intakeStore(stores),
    secrets: options.secrets,
    logger: logger('hookledger-ingest'),
    clock: options.clock,
    onOutcome: options.onIntakeOutcome,
    verificationKeys: options.verificationKeys ?? new HttpVerificationKeys(),
  });
  const fanout = createFanoutHandler({
    sqs,
    payloads: stores.payloads,
    views: consumerViews(config),
    bodyFormats: sourceBodyFormats(config),
    versionPaths: consumerVersionPaths(config),
    readRetryMs: FANOUT_READ_RETRY_MS,
    ...(blobs ? { viewObjects: blobs } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    queueUrls: Object.fromEntries(Object.entries(resources.queues).map(([id, q]) => [id, q.url])),
    logger: logger('hookledger-fanout'),
  });
  const consumers: Record<string, ConsumerLambdaHandler> = {};
  for (const consumer of config.consumers) consumers[consumer.id] = await consumerHandler(wired, consumer);
  return { ingest, fanout, consumers, ddb, sqs, stores, ledger, ...(blobs ? { blobs } : {}) };
}

/** What every consumer handler is built from. */
interface Wired {
  readonly options: WiringOptions;
  readonly logger: (service: string) => Logger;
  readonly ddb: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly stores: EventStores;
  readonly ledger: Ledger;
  readonly versions: VersionWatermarks;
  readonly blobs?: S3PayloadBlobs;
}

/** A consumer's Lambda handler: the runtime around its handle (injected, the built-in HTTP one, or its entry's). */
async function consumerHandler(wired: Wired, consumer: ConsumerConfig): Promise<ConsumerLambdaHandler> {
  const { options, logger, sqs, stores, ledger, versions, blobs } = wired;
  const queue = options.resources.queues[consumer.id];
  if (!queue) throw new WiringError(`no local queue was provisioned for consumer ${consumer.id}`);
  const root = options.root ?? PROJECT_ROOT;
  const handle =
    options.handles?.[consumer.id] ??
    (consumer.kind === 'http' ? await httpHandle(wired, consumer) : await loadHandle(root, workerEntry(consumer)));
  return createConsumerHandler(
    {
      consumer,
      ledger,
      events: stores.keys,
      versions,
      sqs,
      queueUrl: queue.url,
      dlqUrl: queue.dlqUrl,
      principal: localPrincipal(consumer.id),
      logger: logger(`hookledger-${consumer.id}`),
      clock: options.clock,
      backoffBaseMs: options.backoffBaseMs,
      ...(blobs ? { viewObjects: blobs } : {}),
    },
    handle,
  );
}

async function httpHandle({ options, logger, ddb }: Wired, consumer: ConsumerConfig): Promise<ConsumerHandle> {
  if (!options.consumerSecrets) throw new WiringError(`http consumer ${consumer.id} needs consumerSecrets`);
  // Locally the transform is loaded from its module; on AWS it is bundled into the worker.
  const transform = consumer.transform ? await loadTransform(options.root ?? PROJECT_ROOT, consumer.transform) : undefined;
  return createHttpHandle({
    ...(transform ? { transform } : {}),
    consumer,
    secrets: options.consumerSecrets,
    breaker: new Breakers({ client: ddb, tableName: options.resources.tables.ledger }),
    pause: options.pause ?? (async () => undefined),
    onBreakerOpen: options.onBreakerOpen,
    logger: logger(`hookledger-${consumer.id}`),
    clock: options.clock,
  });
}

async function loadTransform(root: string, module: string): Promise<Transform> {
  const loaded = (await import(pathToFileURL(path.join(root, module)).href)) as { transform?: Transform };
  if (typeof loaded.transform !== 'function') throw new ConfigurationError(`${module} must export a function named "transform"`);
  return loaded.transform;
}

async function loadHandle(root: string, entry: string): Promise<ConsumerHandle> {
  const module = (await import(pathToFileURL(path.join(root, entry)).href)) as { handle?: ConsumerHandle };
  if (typeof module.handle !== 'function') throw new ConfigurationError(`${entry} must export a function named "handle"`);
  return module.handle;
}
