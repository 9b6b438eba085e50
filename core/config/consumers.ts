/**
 * What a consumer's kind and ordering mean for the parts that build and run it (the CDK stack, the
 * local stack, the fan-out and the runtime). No zod here: Lambdas import this module.
 */
import { createHash } from 'node:crypto';
import { ConfigurationError } from '../errors';
import { type DeliveryMessage, ledgerKey } from '../model';
import type { ConsumerConfig } from './schema';

/** The shared worker every HTTP destination consumer runs (the consumer runtime with a POSTing handle). */
export const HTTP_WORKER_ENTRY = 'lambdas/runtime/http-worker.ts';

/** Where the stack writes the generated entries of HTTP consumers with a transform (git-ignored). */
export const TRANSFORM_WORKERS_DIR = '.hookledger/workers';

/**
 * The module a consumer's worker runs: its team's `entry`, the shared HTTP worker, or for an HTTP
 * consumer with a `transform` the entry generated for it (`transformWorkerSource`).
 */
export function workerEntry(consumer: ConsumerConfig): string {
  if (consumer.kind === 'http') return consumer.transform ? `${TRANSFORM_WORKERS_DIR}/${consumer.id}.ts` : HTTP_WORKER_ENTRY;
  if (!consumer.entry) {
    throw new ConfigurationError(
      `consumer ${consumer.id} has no entry; set entry: 'lambdas/consumers/${consumer.id}.ts' (or kind: 'http' with its url)`,
    );
  }
  return consumer.entry;
}

/**
 * The generated entry of an HTTP consumer with a transform: the shared worker given the transform's
 * module, so esbuild bundles that module (and only it) into this consumer's function.
 */
export function transformWorkerSource(consumer: ConsumerConfig): string {
  if (consumer.kind !== 'http' || !consumer.transform) {
    throw new ConfigurationError(
      `consumer ${consumer.id} has no transform: only a kind: 'http' consumer with transform: 'transforms/<name>.ts' has a worker entry of its own`,
    );
  }
  const up = TRANSFORM_WORKERS_DIR.split('/')
    .map(() => '..')
    .join('/');
  return [
    `// Generated at synth by lib/constructs/consumer-worker.ts: the HTTP worker of ${consumer.id} with its transform. Do not edit.`,
    `import { httpWorker } from '${up}/${HTTP_WORKER_ENTRY.replace(/\.ts$/, '')}';`,
    `import { transform } from '${up}/${consumer.transform.replace(/\.ts$/, '')}';`,
    '',
    'export const handler = httpWorker(transform);',
    '',
  ].join('\n');
}

export const isOrdered = (consumer: Pick<ConsumerConfig, 'ordering'>): boolean => consumer.ordering !== undefined;

/** SQS names FIFO queues with this suffix; the fan-out recognises a FIFO queue by its URL. */
export const FIFO_SUFFIX = '.fifo';

/** The group of an event whose ordering key could not be read at intake (missing body field). */
export const UNKEYED_GROUP = '_unkeyed';

/** SQS allows at most 128 characters of [A-Za-z0-9] and punctuation in group and deduplication ids. */
function sqsId(value: string): string {
  const clean = /^[\x21-\x7e]{1,128}$/.test(value);
  return clean ? value : `h-${createHash('sha256').update(value).digest('hex')}`;
}

/** The message group of a delivery to an ordered consumer: its ordering key, captured at intake. */
export function orderingGroup(message: Pick<DeliveryMessage, 'orderingKey' | 'tenantId'>): string {
  return messageGroupOf(message.orderingKey ?? message.tenantId ?? UNKEYED_GROUP);
}

/** The FIFO message group of an ordering key: the key itself when SQS accepts it, else `h-` + its SHA-256. */
export function messageGroupOf(key: string): string {
  return sqsId(key);
}

/**
 * The FIFO send parameters of a delivery, or none for a standard queue. The deduplication id is the
 * ledger key, plus the operation for a replay or repair: a re-queue within SQS's 5-minute
 * deduplication window must not be swallowed as a duplicate of the first send.
 */
export function fifoSendParameters(
  queueUrl: string,
  message: DeliveryMessage,
): { MessageGroupId: string; MessageDeduplicationId: string } | Record<string, never> {
  if (!queueUrl.endsWith(FIFO_SUFFIX)) return {};
  const operation = message.replayId ? `#replay:${message.replayId}` : message.repairId ? `#repair:${message.repairId}` : '';
  return {
    MessageGroupId: orderingGroup(message),
    MessageDeduplicationId: sqsId(`${ledgerKey(message.source, message.eventId, message.consumerId)}${operation}`),
  };
}

/**
 * The fair-queue parameters of a send to a standard queue: the event's tenant as its MessageGroupId,
 * which SQS fair queues take as the tenant key, so one tenant's backlog does not hold back the others'
 * deliveries. A tenant id SQS would refuse as a group id (over 128 characters, or characters outside
 * printable ASCII) is sent as the group it maps to (`h-` + its SHA-256, like a FIFO ordering key), so
 * the send is never refused and the tenant still has one group.
 */
export function fairSendParameters(message: Pick<DeliveryMessage, 'tenantId'>): { MessageGroupId: string } {
  return { MessageGroupId: messageGroupOf(message.tenantId) };
}

/**
 * The group parameters of any send of a delivery to a consumer's queue: an ordered consumer's FIFO
 * queue keeps its ordering key and deduplication id, a standard queue gets the tenant (fair queues).
 */
export function queueSendParameters(
  queueUrl: string,
  message: DeliveryMessage,
): ReturnType<typeof fifoSendParameters> | { MessageGroupId: string } {
  return queueUrl.endsWith(FIFO_SUFFIX) ? fifoSendParameters(queueUrl, message) : fairSendParameters(message);
}
