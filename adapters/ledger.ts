/**
 * DynamoDB adapter for the Ledger table: one item per (event, consumer) holding the delivery's lease,
 * its access log and, once acknowledged, its usage row. Each transition is one conditional
 * single-item write, so the item is its own transaction:
 *
 *   claim        leases the delivery and increments `attempt` (the fencing token); appends the read
 *                to the access log. Refused while another worker's lease is live or once done.
 *   acknowledge  done marker + usage row (tenant captured at intake, units) + acknowledging principal,
 *                only if `attempt` is still ours: a worker whose lease was taken over is fenced off.
 *   fail         records the error and attempt; `quarantined` on the last allowed attempt.
 *
 * The access log (`reads`) and the error log (`errors`) keep their first LEDGER_LIST_CAP entries;
 * past that, `readsDropped` / `errorsDropped` count what was not kept, so a row stays far below
 * DynamoDB's 400 KB item limit at any `maxReceiveCount` (the count, not the list, grows).
 *
 * And one operator write, `noteReplayRequest` (hookledger replay), which only appends a note. The
 * consumers' control items (version watermarks, circuit breakers) are in ledger-controls.ts.
 */
import { type AttributeValue, ConditionalCheckFailedException, type ReturnConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand, type UpdateCommandOutput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { WiringError } from '../core/errors';
import {
  type DeliveryMessage,
  eventKey,
  LEDGER_LIST_CAP,
  type LedgerItem,
  type LedgerKeyParts,
  ledgerKey,
  type ReadEntry,
  type ReplayRequestEntry,
} from '../core/model';
import { type ConsumedCapacityObserver, translate } from './table';

export type ClaimResult =
  | { readonly kind: 'claimed'; readonly attempt: number; readonly replay: boolean }
  | { readonly kind: 'done' }
  | { readonly kind: 'busy'; readonly leaseUntil: number }
  /** `hookledger erase` quarantined this delivery (`payload_erased`): never handled, never charged. */
  | { readonly kind: 'erased'; readonly erasedAt: number };

export interface ClaimRequest {
  readonly message: DeliveryMessage;
  readonly now: number;
  readonly leaseMs: number;
  readonly principal: string;
  /**
   * When the claimed message was put on its queue (SQS's SentTimestamp), kept in the access log's
   * entry: the event's timeline times the fan-out's send with it, at no write of its own.
   */
  readonly sentAt?: number;
}

/** The access log's entry of one claim. */
function readEntry({ message, now, principal, sentAt }: ClaimRequest): ReadEntry {
  return { principal, at: now, ...(message.replayId ? { replayId: message.replayId } : {}), ...(sentAt !== undefined ? { sentAt } : {}) };
}

export interface AckRequest {
  readonly message: DeliveryMessage;
  readonly attempt: number;
  readonly replay: boolean;
  readonly units: number;
  readonly outcome?: string;
  readonly principal: string;
  readonly policyVersion: string;
  readonly now: number;
}

export interface FailRequest {
  readonly message: DeliveryMessage;
  readonly attempt: number;
  readonly replay: boolean;
  readonly category: string;
  readonly errorMessage: string;
  readonly quarantine: boolean;
  readonly now: number;
}

/**
 * Every attribute is referred to by alias: several of ours (state, source, reads, errors, units...)
 * are DynamoDB reserved words. Unused aliases are dropped per request in `update`.
 */
const NAMES: Record<string, string> = Object.fromEntries(
  [
    'state',
    'source',
    'reads',
    'errors',
    'units',
    'outcome',
    'principal',
    'attempt',
    'replays',
    'replayId',
    'replayLeaseUntil',
    'leaseUntil',
    'ackAt',
    'ackAttempt',
    'policyVersion',
    'lastErrorCategory',
    'eventKey',
    'eventId',
    'eventType',
    'tenantId',
    'keyId',
    'consumerId',
    'receivedAt',
    'replayRequests',
    'readsDropped',
    'errorsDropped',
    'erasedAt',
  ].map((w) => [`#${w}`, w]),
);

export class Ledger {
  private readonly returnCapacity: ReturnConsumedCapacity | undefined;

  constructor(
    private readonly options: {
      readonly client: DynamoDBDocumentClient;
      readonly tableName: string;
      readonly onCapacity?: ConsumedCapacityObserver;
    },
  ) {
    this.returnCapacity = options.onCapacity ? 'TOTAL' : undefined;
  }

  async claim(request: ClaimRequest, logRead = true): Promise<ClaimResult> {
    const { message, now, leaseMs } = request;
    const read = readEntry(request);
    try {
      const out = await this.update('claim', message, {
        UpdateExpression:
          'SET #state = :leased, #attempt = if_not_exists(#attempt, :zero) + :one, #leaseUntil = :until, ' +
          (logRead
            ? '#reads = list_append(if_not_exists(#reads, :none), :read), '
            : '#readsDropped = if_not_exists(#readsDropped, :zero) + :one, ') +
          '#eventKey = :eventKey, #source = :source, #eventId = :eventId, #eventType = :eventType, ' +
          '#tenantId = :tenantId, #keyId = :keyId, #consumerId = :consumerId, #receivedAt = :receivedAt' +
          (message.replayId ? ', #replayId = :replayId' : ''),
        // Claimable: never claimed, or not done and not under someone else's live lease; and the
        // access log still has room (otherwise the read is counted instead, below).
        // Never an erased delivery (`hookledger erase`): its payload is gone and it is quarantined.
        ConditionExpression:
          '(attribute_not_exists(pk) OR (#state <> :done AND (#state <> :leased OR #leaseUntil < :now)))' +
          ' AND attribute_not_exists(#erasedAt)' +
          (logRead ? ' AND (attribute_not_exists(#reads) OR size(#reads) < :cap)' : ''),
        ExpressionAttributeValues: {
          ':leased': 'leased',
          ':done': 'done',
          ':zero': 0,
          ':one': 1,
          ':until': now + leaseMs,
          ':now': now,
          ...(logRead ? { ':none': [], ':read': [read], ':cap': LEDGER_LIST_CAP } : {}),
          ':eventKey': eventKey(message.source, message.eventId),
          ':source': message.source,
          ':eventId': message.eventId,
          ':eventType': message.eventType,
          ':tenantId': message.tenantId,
          ':keyId': message.keyId,
          ':consumerId': message.consumerId,
          ':receivedAt': message.receivedAt,
          ...(message.replayId ? { ':replayId': message.replayId } : {}),
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return { kind: 'claimed', attempt: Number(out.Attributes?.attempt), replay: false };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw translate(error);
      const old = unmarshallOld(error);
      if (old?.erasedAt !== undefined && old.state !== 'done') return { kind: 'erased', erasedAt: Number(old.erasedAt) };
      const claimable = !old || (old.state !== 'done' && (old.state !== 'leased' || Number(old.leaseUntil) < now));
      if (logRead && claimable && (old?.reads?.length ?? 0) >= LEDGER_LIST_CAP) return this.claim(request, false);
      if (old?.state === 'done') {
        if (message.replayId && !old.replays?.some((r) => r.replayId === message.replayId)) {
          return this.claimReplay(request, old);
        }
        return { kind: 'done' };
      }
      return { kind: 'busy', leaseUntil: Number(old?.leaseUntil ?? now + leaseMs) };
    }
  }

  /** A replay of a done delivery re-runs the handler under a replay lease; the usage row stays as it is. */
  private async claimReplay(request: ClaimRequest, old: Partial<LedgerItem>): Promise<ClaimResult> {
    const { message, now, leaseMs } = request;
    const logRead = (old.reads?.length ?? 0) < LEDGER_LIST_CAP;
    try {
      const out = await this.update('claimReplay', message, {
        UpdateExpression:
          'SET #attempt = #attempt + :one, #replayId = :rid, #replayLeaseUntil = :until, ' +
          (logRead ? '#reads = list_append(#reads, :read)' : '#readsDropped = if_not_exists(#readsDropped, :zero) + :one'),
        ConditionExpression:
          '#state = :done AND #attempt = :seen AND (attribute_not_exists(#replayLeaseUntil) OR #replayLeaseUntil < :now OR #replayId <> :rid)',
        ExpressionAttributeValues: {
          ':one': 1,
          ':rid': message.replayId,
          ':until': now + leaseMs,
          ...(logRead ? { ':read': [readEntry(request)] } : { ':zero': 0 }),
          ':done': 'done',
          ':seen': old.attempt,
          ':now': now,
        },
        ReturnValues: 'ALL_NEW',
      });
      return { kind: 'claimed', attempt: Number(out.Attributes?.attempt), replay: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw translate(error);
      return { kind: 'busy', leaseUntil: Number(old.replayLeaseUntil ?? now + leaseMs) };
    }
  }

  /** Returns false when fenced: the delivery's attempt is no longer ours (lease taken over). */
  async acknowledge(request: AckRequest): Promise<boolean> {
    const { message, attempt, now } = request;
    try {
      if (request.replay) {
        await this.update('acknowledgeReplay', message, {
          UpdateExpression: 'SET #replays = list_append(if_not_exists(#replays, :none), :entry) REMOVE #replayLeaseUntil',
          ConditionExpression: '#attempt = :attempt AND #replayId = :rid AND #state = :done',
          ExpressionAttributeValues: {
            ':none': [],
            ':entry': [
              { replayId: message.replayId, at: now, policyVersion: request.policyVersion, attempt, outcome: request.outcome ?? 'ok' },
            ],
            ':attempt': attempt,
            ':rid': message.replayId,
            ':done': 'done',
          },
        });
        return true;
      }
      // The usage row: written once, by the holder of the current lease, and never again.
      await this.update('acknowledge', message, {
        UpdateExpression:
          'SET #state = :done, #units = :units, #ackAt = :now, #ackAttempt = :attempt, #principal = :principal, ' +
          '#policyVersion = :policy, #outcome = :outcome REMOVE #leaseUntil',
        ConditionExpression: '#attempt = :attempt AND #state = :leased',
        ExpressionAttributeValues: {
          ':done': 'done',
          ':leased': 'leased',
          ':units': request.units,
          ':now': now,
          ':attempt': attempt,
          ':principal': request.principal,
          ':policy': request.policyVersion,
          ':outcome': request.outcome ?? 'ok',
        },
      });
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw translate(error);
    }
  }

  /** Records a failed attempt. Returns false when fenced (someone else holds the delivery now). */
  async recordFailure(request: FailRequest, logError = true): Promise<boolean> {
    const { message, attempt, now } = request;
    const entry = [{ attempt, category: request.category, message: request.errorMessage, at: now }];
    const log = logError
      ? '#errors = list_append(if_not_exists(#errors, :none), :entry)'
      : '#errorsDropped = if_not_exists(#errorsDropped, :zero) + :one';
    const ours = request.replay ? '#attempt = :attempt AND #state = :done' : '#attempt = :attempt AND #state = :leased';
    try {
      await this.update('recordFailure', message, {
        UpdateExpression: request.replay
          ? `SET ${log}, #lastErrorCategory = :category REMOVE #replayLeaseUntil`
          : `SET #state = :state, ${log}, #lastErrorCategory = :category REMOVE #leaseUntil`,
        // The error log keeps its first LEDGER_LIST_CAP entries; past that the error is counted.
        ConditionExpression: logError ? `${ours} AND (attribute_not_exists(#errors) OR size(#errors) < :cap)` : ours,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        ExpressionAttributeValues: {
          ...(logError ? { ':none': [], ':entry': entry, ':cap': LEDGER_LIST_CAP } : { ':zero': 0, ':one': 1 }),
          ':category': request.category,
          ':attempt': attempt,
          ...(request.replay ? { ':done': 'done' } : { ':state': request.quarantine ? 'quarantined' : 'retrying', ':leased': 'leased' }),
        },
      });
      return true;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw translate(error);
      const old = unmarshallOld(error);
      const stillOurs = old?.attempt === attempt && old.state === (request.replay ? 'done' : 'leased');
      if (logError && stillOurs && (old?.errors?.length ?? 0) >= LEDGER_LIST_CAP) return this.recordFailure(request, false);
      return false;
    }
  }

  /**
   * Appends `{replayId, at, operator}` to `replayRequests` of an existing item. Nothing else: state,
   * attempt, lease and units stay exactly as they are, and a missing item is not created (the
   * re-queued delivery creates it when it is claimed). False when there is no item.
   */
  async noteReplayRequest(delivery: LedgerKeyParts, entry: ReplayRequestEntry): Promise<boolean> {
    try {
      await this.update('noteReplayRequest', delivery, {
        UpdateExpression: 'SET #replayRequests = list_append(if_not_exists(#replayRequests, :none), :entry)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':none': [], ':entry': [entry] },
      });
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      // The operator's path: other SDK errors reach the CLI as they are.
      throw error;
    }
  }

  async get(source: string, eventId: string, consumerId: string): Promise<LedgerItem | undefined> {
    const out = await this.options.client.send(
      new GetCommand({ TableName: this.options.tableName, Key: { pk: ledgerKey(source, eventId, consumerId) } }),
    );
    return out.Item as LedgerItem | undefined;
  }

  private async update(
    operation: string,
    delivery: LedgerKeyParts,
    params: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName' | 'Key'>,
  ): Promise<UpdateCommandOutput> {
    let out: UpdateCommandOutput;
    try {
      out = await this.options.client.send(
        new UpdateCommand({
          TableName: this.options.tableName,
          Key: { pk: ledgerKey(delivery.source, delivery.eventId, delivery.consumerId) },
          ReturnConsumedCapacity: this.returnCapacity,
          ...params,
          ExpressionAttributeNames: usedNames(params),
        }),
      );
    } catch (error) {
      const capacity = (error as { $metadata?: unknown; ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity;
      // A failed condition still costs a write unit on AWS.
      this.options.onCapacity?.(operation, capacity?.CapacityUnits ?? (error instanceof ConditionalCheckFailedException ? 1 : 0), 0);
      throw error;
    }
    this.options.onCapacity?.(operation, out.ConsumedCapacity?.CapacityUnits ?? 0, 0);
    return out;
  }
}

function unmarshallOld(error: ConditionalCheckFailedException): Partial<LedgerItem> | undefined {
  const raw = error.Item as Record<string, unknown> | undefined;
  if (!raw) return undefined;
  // The document client may or may not have unmarshalled the returned item, depending on version.
  const marshalled = typeof raw.pk === 'object' && raw.pk !== null;
  return (marshalled ? unmarshall(raw as Record<string, AttributeValue>) : raw) as Partial<LedgerItem>;
}

/** DynamoDB rejects unused ExpressionAttributeNames: keep only the aliases the expressions use. */
function usedNames(params: { UpdateExpression?: string; ConditionExpression?: string }): Record<string, string> {
  const text = `${params.UpdateExpression ?? ''} ${params.ConditionExpression ?? ''}`;
  // Every alias written in the expressions, as `#word`; each maps to its attribute name.
  return Object.fromEntries(
    (text.match(/#[A-Za-z]+/g) ?? []).map((alias) => {
      const name = NAMES[alias];
      if (!name)
        throw new WiringError(`ledger expression uses ${alias}, which NAMES does not define; add it to NAMES (adapters/ledger.ts)`);
      return [alias, name];
    }),
  );
}
