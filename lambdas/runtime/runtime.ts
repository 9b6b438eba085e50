/**
 * The shared consumer runtime. It wraps a team's `handle` function with the delivery protocol:
 *
 *   claim (the read, on record under this consumer's principal) -> handle the narrowed payload the
 *   message carries (or, claim check, its own object in the payload bucket) -> acknowledge (usage row + done marker + access log in one conditional write)
 *
 * The payload arrives already narrowed to this consumer's `fields` (the fan-out reads it once and
 * narrows it per consumer): a consumer's role has no access to stored payloads at all.
 *
 * Failures are recorded with their category and attempt, backed off through the message's
 * visibility, and reported one by one (partial batch response). On the last allowed receive the
 * delivery is marked quarantined before SQS moves the message to this consumer's DLQ; a
 * PermanentError quarantines at once and sends the message to the DLQ itself (an ordered
 * consumer's FIFO DLQ: in the message's own group, so its key is released after one attempt).
 * A delivery refused for retention (`payload_expired`) goes there without its payload: the DLQ keeps
 * messages 14 days, and retention must not be outlived by a copy kept for a redrive that cannot succeed.
 */
import { BatchProcessor, EventType, processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { KeyRegistry } from '../../adapters/key-registry';
import type { Ledger } from '../../adapters/ledger';
import type { VersionWatermarks } from '../../adapters/ledger-controls';
import type { PayloadBlobs } from '../../adapters/payload-blobs';
import { FIFO_SUFFIX, orderingGroup } from '../../core/config/consumers';
import type { ConsumerConfig } from '../../core/config/schema';
import { HookledgerError } from '../../core/errors';
import { type Attribution, type DeliveryMessage, ledgerKey, PAYLOAD_EXPIRED } from '../../core/model';
import { maxRetryHoldSeconds } from '../../core/queues';
import type { Logger } from '../shared/logger';
import { errorCategory, errorMessage, PermanentError, RetryableError } from './errors';

export type KeyStatus = 'active' | 'revoked' | 'unknown';

export interface DeliveryContext {
  /** Captured at intake; never look the tenant up again. */
  readonly attribution: Attribution;
  readonly consumerId: string;
  /** Only the fields this consumer's config lets it see. */
  readonly payload: Readonly<Record<string, unknown>>;
  /** 1 on the first claim; increments with every claim of this delivery. */
  readonly attempt: number;
  /** Pass this to every external side effect: the same value on every attempt and replay. */
  readonly idempotencyKey: string;
  /** Set when an operator re-queued this delivery (replay or backfill). */
  readonly replayId?: string;
  /** The key's status now (not at intake): never authorize a new action with a revoked key. */
  keyStatus(): Promise<KeyStatus>;
  readonly logger: Logger;
}

export interface DeliveryResult {
  /** Billable units for this (event, consumer); 0 is allowed. */
  readonly units: number;
  /** A short word on what the handler did (e.g. `action_declined_key_revoked`), kept on the ledger row. */
  readonly outcome?: string;
}

export type ConsumerHandle = (delivery: DeliveryContext) => Promise<DeliveryResult>;

export interface ConsumerRuntimeDeps {
  readonly consumer: ConsumerConfig;
  readonly ledger: Pick<Ledger, 'claim' | 'acknowledge' | 'recordFailure'>;
  readonly events: Pick<KeyRegistry, 'getKey'>;
  /**
   * Ordered consumers with a `version`: the per-key watermark of acknowledged versions.
   * @default - no stale dropping
   */
  readonly versions?: Pick<VersionWatermarks, 'isStaleVersion' | 'advanceVersion'>;
  /**
   * Used only off the success path (retry backoff, quarantine to the DLQ); its commands load on that
   * first use, so a consumer's cold start carries no SQS code (lambdas/runtime/lambda.ts).
   */
  readonly sqs: Pick<SQSClient, 'send'>;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  /** This consumer's principal (its IAM role ARN on AWS). */
  readonly principal: string;
  readonly logger: Logger;
  readonly clock?: () => number;
  /** Backoff base, ms (default 2 s); doubled per attempt, capped at the lease. */
  readonly backoffBaseMs?: number;
  /**
   * Claim check: reads a narrowed view the fan-out put in the payload bucket (`payloadObject`); on
   * AWS this consumer's role may read only `views/<its id>/*`.
   * @default - none: such a delivery is quarantined (`payload_too_large`)
   */
  readonly viewObjects?: Pick<PayloadBlobs, 'get'>;
}

export type ConsumerLambdaHandler = (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse>;

/** Raised for a record so that it is reported as a batch item failure. */
class RetryLater extends HookledgerError {
  override readonly name = 'RetryLater';
}

/** How long a claim outlasts the invocation that made it: the final acknowledgement's write. */
export const LEASE_MARGIN_MS = 1000;

/**
 * The lease runs from the claim for the function's timeout plus a margin: no invocation can hold
 * a delivery longer than it can run. SQS makes the message visible again only after the queue's
 * visibility timeout (at least 6x the function timeout), counted from the poller's receive, which
 * comes before the claim by at most the cold start; so a message redelivered after a worker died
 * finds the lease over and is taken over on that receive, never wasted on a live lease.
 */
export function leaseMsFor(consumer: Pick<ConsumerConfig, 'timeoutSeconds'>): number {
  return consumer.timeoutSeconds * 1000 + LEASE_MARGIN_MS;
}

/**
 * The Lambda handler of a consumer: its batch, record by record (partial batch response), through
 * the delivery protocol of ConsumerRuntime.
 */
export function createConsumerHandler(deps: ConsumerRuntimeDeps, handle: ConsumerHandle): ConsumerLambdaHandler {
  const runtime = new ConsumerRuntime(deps, handle);
  const processRecord = (record: SQSRecord) => runtime.processRecord(record);
  return async (event, context) => {
    if (deps.consumer.ordering) {
      // FIFO: one record at a time in queue order; after a failure the rest of its group in this
      // batch is failed unprocessed (it must not overtake), while other groups go on.
      const processor = new SqsFifoPartialProcessorAsync();
      return processPartialResponse(event, processRecord, processor, {
        context,
        skipGroupOnError: true,
        throwOnFullBatchFailure: false,
      }) as Promise<SQSBatchResponse>;
    }
    const processor = new BatchProcessor(EventType.SQS);
    return processPartialResponse(event, processRecord, processor, {
      context,
      throwOnFullBatchFailure: false,
    }) as Promise<SQSBatchResponse>;
  };
}

/** A delivery this worker holds the lease of: what the steps after the claim share. */
interface ClaimedDelivery {
  readonly record: SQSRecord;
  readonly message: DeliveryMessage;
  /** SQS's receive count: the last allowed receive quarantines. */
  readonly receiveCount: number;
  /** The fencing token: the acknowledgement and the failure record are refused once another claim took over. */
  readonly attempt: number;
  /** A replay of a done delivery: acknowledged without charging again. */
  readonly replay: boolean;
  /** The ids on every log line of this delivery. */
  readonly log: Record<string, unknown>;
}

/**
 * The delivery protocol for one record: parseMessage → claim → deliver (handle, acknowledge, advance
 * the version watermark) → on a failure, onFailure (record it; quarantine, or back off).
 */
class ConsumerRuntime {
  private readonly clock: () => number;
  private readonly leaseMs: number;
  private readonly backoffBaseMs: number;

  constructor(
    private readonly deps: ConsumerRuntimeDeps,
    private readonly handle: ConsumerHandle,
  ) {
    this.clock = deps.clock ?? Date.now;
    this.leaseMs = leaseMsFor(deps.consumer);
    this.backoffBaseMs = deps.backoffBaseMs ?? 2000;
  }

  async processRecord(record: SQSRecord): Promise<void> {
    const delivery = await this.claim(record, parseMessage(record, this.deps.consumer.id));
    if (!delivery) return;
    try {
      await this.deliver(delivery);
    } catch (error) {
      if (error instanceof RetryLater) throw error;
      await this.onFailure(delivery, error);
    }
  }

  /** The claim, under this consumer's principal; undefined when there is nothing to do. A live lease elsewhere is waited for. */
  private async claim(record: SQSRecord, message: DeliveryMessage): Promise<ClaimedDelivery | undefined> {
    const { consumer, logger } = this.deps;
    const receiveCount = Number(record.attributes.ApproximateReceiveCount ?? '1');
    const ids = {
      event_id: message.eventId,
      tenant_id: message.tenantId,
      consumer_id: consumer.id,
      ...(message.repairId ? { repair_id: message.repairId } : {}),
    };
    const claim = await this.deps.ledger.claim({
      message,
      now: this.clock(),
      leaseMs: this.leaseMs,
      principal: this.deps.principal,
      ...sentAtOf(record),
    });
    if (claim.kind === 'done') {
      logger.info('already acknowledged; nothing to do', ids);
      return undefined;
    }
    if (claim.kind === 'erased') {
      // `hookledger erase` quarantined it (payload_erased) on the ledger: never handled, never
      // charged, and the message is dropped here rather than copied to the DLQ (it carries the view).
      logger.info('payload erased; delivery quarantined, message dropped unread', { ...ids, erased_at: claim.erasedAt });
      return undefined;
    }
    if (claim.kind === 'busy') {
      // Another worker holds a live lease: look again when it ends, without touching its work.
      const waitS = Math.max(1, Math.ceil((claim.leaseUntil - this.clock()) / 1000));
      await this.setVisibility(record, waitS);
      throw new RetryLater(`delivery leased by another worker for ${waitS}s`);
    }
    const { attempt, replay } = claim;
    return {
      record,
      message,
      receiveCount,
      attempt,
      replay,
      log: { ...ids, attempt, ...(message.replayId ? { replay_id: message.replayId } : {}) },
    };
  }

  /** The team's `handle` on the narrowed payload, then the acknowledgement; a stale version is acknowledged unhandled. */
  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const { consumer, logger } = this.deps;
    const { message } = delivery;
    const payload = await deliveredPayload(message, this.clock(), this.deps.viewObjects);
    const version = this.versionOf(message);
    const orderingKey = version === undefined ? undefined : orderingGroup(message);
    if (
      version !== undefined &&
      orderingKey !== undefined &&
      (await this.deps.versions?.isStaleVersion(consumer.id, orderingKey, version))
    ) {
      // Older than an event already acknowledged for this key: recorded, never handled, never charged.
      await this.acknowledgeOrFence(delivery, { units: 0, outcome: 'stale' });
      logger.info('stale version dropped', { ...delivery.log, units: 0 });
      return;
    }
    // Called as a plain function, as the team wrote it (no `this` of the runtime's). The assembly's fault
    // tests wrap this very call in the bundle (test/assembly/assembly-edits.test.ts): keep its shape.
    const { handle } = this;
    const result = await handle(this.deliveryContext(delivery, payload));
    const units = validUnits(result?.units);
    await this.acknowledgeOrFence(delivery, {
      units,
      outcome: typeof result?.outcome === 'string' ? result.outcome.slice(0, 64) : undefined,
    });
    // After the acknowledgement: a crash in between leaves the watermark behind, never ahead.
    if (version !== undefined && orderingKey !== undefined)
      await this.deps.versions?.advanceVersion(consumer.id, orderingKey, version, this.clock());
    // The ledger row is the durable record of the acknowledgement; the line is DEBUG (logs.applicationLevel).
    logger.debug('acknowledged', { ...delivery.log, units: delivery.replay ? 0 : units, replay: delivery.replay });
  }

  /** What the team's `handle` is given: the attribution captured at intake, never looked up again. */
  private deliveryContext({ message, attempt }: ClaimedDelivery, payload: Readonly<Record<string, unknown>>): DeliveryContext {
    const { consumer, events, logger } = this.deps;
    return {
      attribution: {
        source: message.source,
        eventId: message.eventId,
        eventType: message.eventType,
        tenantId: message.tenantId,
        keyId: message.keyId,
      },
      consumerId: consumer.id,
      payload,
      attempt,
      idempotencyKey: ledgerKey(message.source, message.eventId, consumer.id),
      replayId: message.replayId,
      keyStatus: async () => {
        const key = await events.getKey(message.keyId);
        return key ? key.status : 'unknown';
      },
      logger,
    };
  }

  private async acknowledgeOrFence(delivery: ClaimedDelivery, result: { units: number; outcome: string | undefined }): Promise<void> {
    const acked = await this.deps.ledger.acknowledge({
      message: delivery.message,
      attempt: delivery.attempt,
      replay: delivery.replay,
      units: result.units,
      outcome: result.outcome,
      principal: this.deps.principal,
      policyVersion: this.deps.consumer.policyVersion,
      now: this.clock(),
    });
    if (!acked) {
      // Our lease was taken over; the message now belongs to the new lease holder.
      this.deps.logger.warn('fenced: lease taken over, acknowledgement refused', delivery.log);
      throw new RetryLater('fenced');
    }
  }

  /** The event's version for stale dropping: read by the fan-out from the full payload (`ordering.version`); undefined when absent or not a number or string. */
  private versionOf(message: DeliveryMessage): string | number | undefined {
    if (!this.deps.consumer.ordering?.version || !this.deps.versions) return undefined;
    const value = message.orderingVersion;
    return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? value : undefined;
  }

  /**
   * Records the failure on the ledger (fenced by `attempt`), then: a PermanentError goes to the DLQ
   * at once (the record is then reported processed); otherwise the message is held back for its
   * backoff (none on the last receive: SQS moves it to the DLQ) and the record reported failed.
   */
  private async onFailure(delivery: ClaimedDelivery, error: unknown): Promise<void> {
    const { consumer, logger } = this.deps;
    const { attempt, receiveCount } = delivery;
    const permanent = error instanceof PermanentError;
    const last = receiveCount >= consumer.maxReceiveCount;
    const category = errorCategory(error);
    const stillOurs = await this.deps.ledger.recordFailure({
      message: delivery.message,
      attempt,
      replay: delivery.replay,
      category,
      errorMessage: errorMessage(error),
      quarantine: permanent || last,
      now: this.clock(),
    });
    logger.warn('delivery failed', { ...delivery.log, category, quarantined: permanent || last, receive_count: receiveCount });
    if (!stillOurs) throw new RetryLater('fenced');
    if (permanent) {
      await this.sendToDeadLetterQueue(delivery, category);
      return;
    }
    if (!last) {
      // A destination's Retry-After lengthens the backoff, up to this consumer's share of its queue's
      // retention per receive (at most SQS's 12 h): Retry-Afters never add up past the retention.
      const asked =
        error instanceof RetryableError && error.retryAfterMs !== undefined
          ? Math.min(Math.ceil(error.retryAfterMs / 1000), maxRetryHoldSeconds(consumer))
          : 0;
      await this.setVisibility(delivery.record, Math.max(this.backoffSeconds(attempt), asked));
    }
    throw new RetryLater(`attempt ${attempt} failed: ${category}`);
  }

  /**
   * Straight to this consumer's DLQ with its history kept on the ledger item; the source message is
   * then deleted (reported as processed).
   */
  private async sendToDeadLetterQueue({ record, message, attempt }: ClaimedDelivery, category: string): Promise<void> {
    const { SendMessageCommand } = await import('@aws-sdk/client-sqs');
    await this.deps.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.deps.dlqUrl,
        MessageBody: category === PAYLOAD_EXPIRED ? JSON.stringify(withoutPayload(message)) : record.body,
        MessageAttributes: {
          quarantineReason: { DataType: 'String', StringValue: category },
          attempt: { DataType: 'Number', StringValue: String(attempt) },
        },
        ...dlqFifoParameters(this.deps.dlqUrl, record, message),
        // The trace its message came with (the webhook's, from the fan-out); none from a bundle built for tracing off.
        ...(process.env.HOOKLEDGER_BUNDLED_TRACING !== 'false' && record.attributes.AWSTraceHeader
          ? { MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: record.attributes.AWSTraceHeader } } }
          : {}),
      }),
    );
  }

  private backoffSeconds(attempt: number): number {
    const ms = Math.min(this.deps.consumer.visibilityTimeoutSeconds * 1000 - 1000, this.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
    return Math.max(0, Math.round(ms / 1000));
  }

  private async setVisibility(record: SQSRecord, seconds: number): Promise<void> {
    try {
      const { ChangeMessageVisibilityCommand } = await import('@aws-sdk/client-sqs');
      await this.deps.sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: this.deps.queueUrl,
          ReceiptHandle: record.receiptHandle,
          VisibilityTimeout: Math.min(seconds, 43_200),
        }),
      );
    } catch (error) {
      // The message then simply comes back after the queue's visibility timeout.
      this.deps.logger.warn('could not change visibility', { consumer_id: this.deps.consumer.id, error: errorCategory(error) });
    }
  }
}

/**
 * An ordered consumer's DLQ is FIFO (SQS requires it of a FIFO queue's DLQ) and refuses a send
 * without a group: the message keeps its own group (a redrive puts it back in its key's order),
 * and its SQS message id deduplicates a send retried after a crash before the source message was
 * deleted, while a later quarantine of the same delivery (redriven, replayed) is a new message.
 */
function dlqFifoParameters(
  dlqUrl: string,
  record: SQSRecord,
  message: DeliveryMessage,
): { MessageGroupId: string; MessageDeduplicationId: string } | Record<string, never> {
  if (!dlqUrl.endsWith(FIFO_SUFFIX)) return {};
  return {
    MessageGroupId: record.attributes.MessageGroupId ?? orderingGroup(message),
    MessageDeduplicationId: `quarantine-${record.messageId}`.slice(0, 128),
  };
}

/**
 * A delivery refused for retention, as its DLQ keeps it: the attribution that explains the quarantine
 * (and raises the DLQ's alarm), none of the payload: no view, no claim-check key, no ordering key or
 * version (both read from the body). A redrive of it is quarantined `payload_expired` again, never handled.
 */
function withoutPayload(message: DeliveryMessage): DeliveryMessage {
  const { payload: _view, payloadObject: _object, orderingKey: _key, orderingVersion: _version, ...attribution } = message;
  return { ...attribution, payloadUnavailable: 'expired' };
}

export class MalformedMessageError extends HookledgerError {
  override readonly name = 'MalformedMessageError';
}

/** When SQS took the message (the fan-out's send, or a re-queue's): the timeline's `queued` time. */
function sentAtOf(record: SQSRecord): { sentAt?: number } {
  const sentAt = Number(record.attributes.SentTimestamp);
  return Number.isFinite(sentAt) && sentAt > 0 ? { sentAt } : {};
}

function parseMessage(record: SQSRecord, consumerId: string): DeliveryMessage {
  let body: Partial<DeliveryMessage>;
  try {
    body = JSON.parse(record.body) as Partial<DeliveryMessage>;
  } catch {
    throw new MalformedMessageError(`message ${record.messageId} is not JSON`);
  }
  for (const field of ['source', 'eventId', 'eventType', 'tenantId', 'keyId', 'consumerId'] as const) {
    if (typeof body[field] !== 'string' || body[field] === '') {
      throw new MalformedMessageError(`message ${record.messageId} lacks ${field}`);
    }
  }
  if (body.consumerId !== consumerId) {
    throw new MalformedMessageError(`message ${record.messageId} is for ${body.consumerId}, not ${consumerId}`);
  }
  return body as DeliveryMessage;
}

/**
 * The narrowed payload the message carries. Past retention is past retention, whatever TTL has
 * deleted yet (it may lag by days): a message that sat in its queue beyond it is refused too.
 */
async function deliveredPayload(
  message: DeliveryMessage,
  now: number,
  viewObjects: Pick<PayloadBlobs, 'get'> | undefined,
): Promise<Readonly<Record<string, unknown>>> {
  const expired = message.payloadExpiresAt !== undefined && message.payloadExpiresAt <= now;
  if (expired || message.payloadUnavailable === 'expired') {
    throw new PermanentError('the payload has expired (retention) or was never stored', PAYLOAD_EXPIRED);
  }
  if (message.payloadObject !== undefined) {
    if (!viewObjects)
      throw new PermanentError('the narrowed payload was sent by claim check and this worker has no payload bucket', 'payload_too_large');
    // A storage error is thrown as it is: an ordinary failure, retried.
    const view = await viewObjects.get(message.payloadObject);
    if (!view) throw new PermanentError('the claim-checked payload is gone (bucket lifecycle: retention)', PAYLOAD_EXPIRED);
    return JSON.parse(view.toString('utf8')) as Record<string, unknown>;
  }
  if (message.payloadUnavailable === 'unreadable') {
    throw new PermanentError(
      "the stored payload cannot be read in its source's body format (bodyFormat); fix the source's bodyFormat and replay",
      'payload_unreadable',
    );
  }
  if (message.payloadUnavailable === 'too_large') {
    throw new PermanentError("the narrowed payload does not fit in a queue message; narrow the consumer's fields", 'payload_too_large');
  }
  if (!message.payload || typeof message.payload !== 'object') {
    throw new PermanentError(
      'the message carries no payload (sent before the fan-out narrowed payloads); replay the delivery',
      'payload_missing',
    );
  }
  return message.payload;
}

function validUnits(units: unknown): number {
  if (typeof units !== 'number' || !Number.isFinite(units) || units < 0) {
    throw new PermanentError(`handler returned invalid units ${String(units)}; expected a number >= 0`, 'invalid_units');
  }
  return units;
}
