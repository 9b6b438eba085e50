/**
 * Erasure on the Ledger table (`hookledger erase`): a delivery that is not done becomes quarantined
 * `payload_erased`, so the consumer runtime never claims it again (Ledger.claim refuses a row with
 * `erasedAt`) and nothing is charged for it. And on every row of the event, done or not, the messages
 * of its failed attempts are replaced by `erased`: a handler's or a transform's message may quote the
 * body (`card 4242 of Zoë Quist declined`), and trace and the console show it. Their category, attempt
 * and time stay, as do a done row's usage and access log: the evidence erasure keeps. Every write is
 * one conditional single-item write, as every ledger write.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { HookledgerError } from '../core/errors';
import { type ErrorEntry, eventKey, type LedgerItem, type LedgerKeyParts, ledgerKey, PAYLOAD_ERASED } from '../core/model';

/** What `markErased` found: `quarantined` now, `done` (left as it is), or `already` erased by an earlier run. */
export type EraseMark = 'quarantined' | 'done' | 'already';

export interface ErasedDelivery extends LedgerKeyParts, Pick<LedgerItem, 'eventType' | 'tenantId' | 'keyId' | 'receivedAt'> {}

export interface Erasure {
  readonly at: number;
  readonly erasureId: string;
  readonly operator: string;
}

/** What an erased attempt's message becomes. */
export const ERASED_ERROR_MESSAGE = 'erased';
/**
 * Reads and conditional writes of one row's error list before giving up: each retry means an error was
 * appended in between, which only a worker still running an attempt of a done row's replay can do.
 */
const SCRUB_TRIES = 5;

/** The error log with every message that may quote the body replaced, and how many were. */
export function scrubbedErrors(errors: readonly ErrorEntry[]): { readonly errors: ErrorEntry[]; readonly scrubbed: number } {
  let scrubbed = 0;
  const out = errors.map((e) => {
    // Erasure's own entry names the operator and the run, never the body.
    if (e.category === PAYLOAD_ERASED || e.message === ERASED_ERROR_MESSAGE) return e;
    scrubbed++;
    return { ...e, message: ERASED_ERROR_MESSAGE };
  });
  return { errors: out, scrubbed };
}

/** A row's error log kept changing under erasure: nothing is lost, the same erase run again resumes. */
export class ErrorScrubConflictError extends HookledgerError {
  override readonly name = 'ErrorScrubConflictError';
}

export class LedgerErasure {
  constructor(private readonly options: { readonly client: DynamoDBDocumentClient; readonly tableName: string }) {}

  /**
   * Erases one delivery: quarantined `payload_erased` unless done (`markErased`), then its failed
   * attempts' messages scrubbed. Returns the mark and how many messages were replaced. Idempotent.
   */
  async eraseDelivery(delivery: ErasedDelivery, erasure: Erasure): Promise<{ readonly mark: EraseMark; readonly scrubbed: number }> {
    const { mark, errors } = await this.mark(delivery, erasure);
    return { mark, scrubbed: await this.scrubErrors(delivery, errors) };
  }

  /**
   * Quarantines one delivery `payload_erased` (created with the receipt's attribution when no worker
   * claimed it yet, so reconcile finds it present and explained). Idempotent. A live lease is ended
   * too: its worker's acknowledgement then fails its condition (state leased) and the message comes
   * back to a claim that refuses it, so nothing is charged. Other SDK errors reach the CLI as they are.
   */
  async markErased(delivery: ErasedDelivery, erasure: Erasure): Promise<EraseMark> {
    return (await this.mark(delivery, erasure)).mark;
  }

  /**
   * Replaces the message of every failed attempt of one delivery with `erased`. `seen`: the error
   * log as last read, if any. The write is conditional on the log's length, so an error appended in
   * between is read and scrubbed too. Returns how many messages were replaced.
   */
  async scrubErrors(delivery: LedgerKeyParts, seen?: readonly ErrorEntry[]): Promise<number> {
    let errors = seen ?? (await this.errorsOf(delivery));
    for (let tries = 0; tries < SCRUB_TRIES; tries++) {
      const next = scrubbedErrors(errors);
      if (next.scrubbed === 0) return 0;
      try {
        await this.options.client.send(
          new UpdateCommand({
            TableName: this.options.tableName,
            Key: { pk: ledgerKey(delivery.source, delivery.eventId, delivery.consumerId) },
            UpdateExpression: 'SET #errors = :errors',
            ConditionExpression: 'attribute_exists(pk) AND size(#errors) = :count',
            ExpressionAttributeNames: { '#errors': 'errors' },
            ExpressionAttributeValues: { ':errors': next.errors, ':count': errors.length },
          }),
        );
        return next.scrubbed;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        errors = await this.errorsOf(delivery);
      }
    }
    throw new ErrorScrubConflictError(
      `the error log of ${ledgerKey(delivery.source, delivery.eventId, delivery.consumerId)} changed ${SCRUB_TRIES} times while ` +
        'erase scrubbed it; run the same erase again (it resumes and scrubs what is left)',
    );
  }

  private async errorsOf(delivery: LedgerKeyParts): Promise<ErrorEntry[]> {
    const out = await this.options.client.send(
      new GetCommand({
        TableName: this.options.tableName,
        Key: { pk: ledgerKey(delivery.source, delivery.eventId, delivery.consumerId) },
        ProjectionExpression: '#errors',
        ExpressionAttributeNames: { '#errors': 'errors' },
        ConsistentRead: true,
      }),
    );
    return (out.Item?.errors as ErrorEntry[] | undefined) ?? [];
  }

  /** The mark, with the row's error log as the write left it (or found it): the scrub's first read. */
  private async mark(delivery: ErasedDelivery, erasure: Erasure): Promise<{ mark: EraseMark; errors: ErrorEntry[] }> {
    const entry = [
      { attempt: 0, category: PAYLOAD_ERASED, message: `payload erased by ${erasure.operator} (${erasure.erasureId})`, at: erasure.at },
    ];
    try {
      const out = await this.options.client.send(
        new UpdateCommand({
          TableName: this.options.tableName,
          Key: { pk: ledgerKey(delivery.source, delivery.eventId, delivery.consumerId) },
          UpdateExpression:
            'SET #state = :quarantined, lastErrorCategory = :category, erasedAt = :at, erasureId = :eid, ' +
            '#errors = list_append(if_not_exists(#errors, :none), :entry), attempt = if_not_exists(attempt, :zero), ' +
            '#reads = if_not_exists(#reads, :none), eventKey = :eventKey, #source = :source, eventId = :eventId, ' +
            'eventType = if_not_exists(eventType, :eventType), tenantId = if_not_exists(tenantId, :tenantId), ' +
            'keyId = if_not_exists(keyId, :keyId), consumerId = :consumerId, receivedAt = if_not_exists(receivedAt, :receivedAt) ' +
            'REMOVE leaseUntil',
          ConditionExpression: '(attribute_not_exists(pk) OR #state <> :done) AND attribute_not_exists(erasedAt)',
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          // Reserved words in DynamoDB.
          ExpressionAttributeNames: { '#state': 'state', '#errors': 'errors', '#reads': 'reads', '#source': 'source' },
          ExpressionAttributeValues: {
            ':quarantined': 'quarantined',
            ':done': 'done',
            ':category': PAYLOAD_ERASED,
            ':at': erasure.at,
            ':eid': erasure.erasureId,
            ':none': [],
            ':entry': entry,
            ':zero': 0,
            ':eventKey': eventKey(delivery.source, delivery.eventId),
            ':source': delivery.source,
            ':eventId': delivery.eventId,
            ':eventType': delivery.eventType,
            ':tenantId': delivery.tenantId,
            ':keyId': delivery.keyId,
            ':consumerId': delivery.consumerId,
            ':receivedAt': delivery.receivedAt,
          },
        }),
      );
      return { mark: 'quarantined', errors: (out.Attributes?.errors as ErrorEntry[] | undefined) ?? [] };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const raw = error.Item as Record<string, unknown> | undefined;
      const old = (raw && typeof raw.pk === 'object' ? unmarshall(raw as never) : raw) as Partial<LedgerItem> | undefined;
      return { mark: old?.state === 'done' ? 'done' : 'already', errors: old?.errors ?? [] };
    }
  }
}
