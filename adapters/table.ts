/**
 * What the EventStore table's adapters share (payloads.ts, receipts.ts, key-registry.ts,
 * audit-log.ts, requeues.ts): the table, the document client, the bench's capacity observer, and
 * single-item put and get.
 *
 * Errors: the intake and consumer paths translate SDK errors into StorageUnavailableError (intake
 * answers 503): `get`, and `translate` around their writes. The operator paths (requeue, audit, keys,
 * delivery set, lookups) turn a failed condition into their result and let every other SDK error
 * through as it is, for the CLI to print: `read`. Bulk reads (scans, batch gets) are in table-scan.ts.
 */
import { ConditionalCheckFailedException, type ReturnConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, type PutCommandOutput } from '@aws-sdk/lib-dynamodb';
import { StorageUnavailableError } from './errors';

export type ConsumedCapacityObserver = (operation: string, writeUnits: number, readUnits: number) => void;

export interface TableOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Bench hook: asks DynamoDB for consumed capacity and reports it. */
  readonly onCapacity?: ConsumedCapacityObserver;
}

/** One table's single-item reads and writes; each adapter of the EventStore table extends it. */
export abstract class EventTable {
  protected readonly client: DynamoDBDocumentClient;
  protected readonly tableName: string;
  protected readonly onCapacity?: ConsumedCapacityObserver;
  protected readonly returnCapacity: ReturnConsumedCapacity | undefined;

  constructor(options: TableOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.onCapacity = options.onCapacity;
    this.returnCapacity = options.onCapacity ? 'TOTAL' : undefined;
  }

  protected async put(operation: string, item: object, condition?: string, returnOld = false): Promise<void> {
    let out: PutCommandOutput;
    try {
      out = await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item as Record<string, unknown>,
          ConditionExpression: condition,
          ReturnConsumedCapacity: this.returnCapacity,
          // The item that failed the condition comes back with the error: no second read.
          ...(returnOld ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
        }),
      );
    } catch (error) {
      // AWS bills a failed condition as a write; DynamoDB Local reports nothing for it.
      if (error instanceof ConditionalCheckFailedException) this.onCapacity?.(operation, 1, 0);
      throw error;
    }
    this.onCapacity?.(operation, out.ConsumedCapacity?.CapacityUnits ?? 0, 0);
  }

  /**
   * Strongly consistent: a consumer may read a payload milliseconds after intake wrote it, and an
   * eventually consistent miss would look like an expired payload.
   */
  protected async get(operation: string, pk: string): Promise<Record<string, unknown> | undefined> {
    try {
      return await this.read(operation, pk);
    } catch (error) {
      throw translate(error);
    }
  }

  /** `get` for the operator paths: SDK errors pass through untranslated. */
  protected async read(operation: string, pk: string, projection?: string): Promise<Record<string, unknown> | undefined> {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk },
        ConsistentRead: true,
        ReturnConsumedCapacity: this.returnCapacity,
        ...(projection ? { ProjectionExpression: projection } : {}),
      }),
    );
    this.onCapacity?.(operation, 0, out.ConsumedCapacity?.CapacityUnits ?? 0);
    return out.Item;
  }
}

/** Anything DynamoDB throws that is not a condition failure means "try again later". */
export function translate(error: unknown): Error {
  if (error instanceof StorageUnavailableError) return error;
  const name = error instanceof Error ? error.name : 'unknown';
  return new StorageUnavailableError(`event store unavailable (${name})`, { cause: error });
}
