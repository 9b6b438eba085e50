/**
 * TTL on demand. DynamoDB Local 3.3.0 does delete expired items itself (a pass about every 10 s,
 * against the real clock; the stream poller turns its odd stream records into AWS's TTL REMOVE).
 * What it cannot do is expire things at another time: `sweepOnce(now)` deletes every item whose
 * TTL attribute (a Number, epoch seconds) is before `now`, so a test or demo can jump past the
 * payload retention. Deletes are ordinary DeleteItem calls, so the stream gets a REMOVE for each.
 *
 * Differences from AWS: a sweep deletes at once (AWS takes up to a few days), and its REMOVE
 * records carry no `userIdentity` (a TTL delete on AWS has { type: 'Service', principalId:
 * 'dynamodb.amazonaws.com' }). Items more than five years past their TTL are left alone, as on AWS.
 */
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { TTL_ATTRIBUTE } from '../core/model';
import type { PollerLogger } from './support';

/** AWS leaves alone items whose TTL is more than five years in the past. */
const FIVE_YEARS_SECONDS = 5 * 365 * 24 * 3600;

export interface TtlSweeperOptions {
  readonly dynamo: DynamoDBClient;
  readonly tableName: string;
  /** Default `expiresAt`. */
  readonly attribute?: string;
  /** Period of the interval runner. Default 5000 ms. */
  readonly intervalMs?: number;
  /** Epoch milliseconds. Default Date.now. */
  readonly now?: () => number;
  readonly logger?: PollerLogger;
}

export interface SweepResult {
  readonly expired: number;
  readonly deleted: number;
}

export interface TtlSweeper {
  /** One pass at `now` (epoch milliseconds; default the clock). */
  sweepOnce(now?: number): Promise<SweepResult>;
  start(): void;
  /** Stops the interval runner and waits for a pass in progress. */
  stop(): Promise<void>;
}

export function createTtlSweeper(options: TtlSweeperOptions): TtlSweeper {
  const { dynamo, tableName } = options;
  const attribute = options.attribute ?? TTL_ATTRIBUTE;
  const clock = options.now ?? Date.now;
  const logger = options.logger ?? {
    warn: (message: string, extra?: Record<string, unknown>) => console.warn(`[ttl-sweeper] ${message}`, extra ?? ''),
    error: (message: string, extra?: Record<string, unknown>) => console.error(`[ttl-sweeper] ${message}`, extra ?? ''),
  };
  let keyNames: string[] | undefined;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<unknown> = Promise.resolve();
  let sweeping = false;

  async function keys(): Promise<string[]> {
    if (!keyNames) {
      const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
      keyNames = (Table?.KeySchema ?? []).map((key) => key.AttributeName as string);
    }
    return keyNames;
  }

  async function sweepOnce(now = clock()): Promise<SweepResult> {
    const nowSeconds = Math.floor(now / 1000);
    const keyAttributes = await keys();
    const names: Record<string, string> = { '#ttl': attribute };
    keyAttributes.forEach((name, i) => {
      names[`#k${i}`] = name;
    });
    let expired = 0;
    let deleted = 0;
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await dynamo.send(
        new ScanCommand({
          TableName: tableName,
          // Only Number values expire, as on AWS; anything else in the attribute is ignored.
          FilterExpression: 'attribute_type(#ttl, :number) AND #ttl < :now AND #ttl > :floor',
          ProjectionExpression: [...keyAttributes.map((_, i) => `#k${i}`), '#ttl'].join(', '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ':number': { S: 'N' },
            ':now': { N: String(nowSeconds) },
            ':floor': { N: String(nowSeconds - FIVE_YEARS_SECONDS) },
          },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        expired += 1;
        const key = Object.fromEntries(keyAttributes.map((name) => [name, item[name] as AttributeValue]));
        try {
          await dynamo.send(
            new DeleteItemCommand({
              TableName: tableName,
              Key: key,
              // AWS re-checks before deleting: an item whose TTL was just extended stays.
              ConditionExpression: '#ttl = :seen',
              ExpressionAttributeNames: { '#ttl': attribute },
              ExpressionAttributeValues: { ':seen': item[attribute] as AttributeValue },
            }),
          );
          deleted += 1;
        } catch (error) {
          if (!(error instanceof ConditionalCheckFailedException)) throw error;
        }
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return { expired, deleted };
  }

  return {
    sweepOnce,
    start() {
      if (timer) return;
      timer = setInterval(() => {
        if (sweeping) return; // a slow pass is not stacked on
        sweeping = true;
        pass = sweepOnce()
          .catch((error: unknown) =>
            logger.error('TTL sweep failed', { tableName, error: error instanceof Error ? error.message : String(error) }),
          )
          .finally(() => {
            sweeping = false;
          });
      }, options.intervalMs ?? 5000);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await pass;
    },
  };
}
