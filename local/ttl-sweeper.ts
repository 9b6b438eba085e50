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
  type ScanCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { TTL_ATTRIBUTE } from '../core/model';
import { consoleLogger, type PollerLogger } from './support';

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

/** Period of the interval runner when the options name none. */
const DEFAULT_INTERVAL_MS = 5000;

/** One sweeper: its options with defaults filled in, the table's key names once read, and the interval runner. */
interface SweeperState {
  readonly dynamo: DynamoDBClient;
  readonly tableName: string;
  readonly attribute: string;
  readonly clock: () => number;
  readonly intervalMs: number;
  readonly logger: PollerLogger;
  keyNames: string[] | undefined;
  timer: NodeJS.Timeout | undefined;
  /** The pass the interval runner started last: stop() waits for it. */
  pass: Promise<unknown>;
  sweeping: boolean;
}

export function createTtlSweeper(options: TtlSweeperOptions): TtlSweeper {
  const state: SweeperState = {
    dynamo: options.dynamo,
    tableName: options.tableName,
    attribute: options.attribute ?? TTL_ATTRIBUTE,
    clock: options.now ?? Date.now,
    intervalMs: options.intervalMs ?? DEFAULT_INTERVAL_MS,
    logger: options.logger ?? consoleLogger('ttl-sweeper'),
    keyNames: undefined,
    timer: undefined,
    pass: Promise.resolve(),
    sweeping: false,
  };
  return {
    sweepOnce: (now) => sweepOnce(state, now),
    start: () => startSweeping(state),
    stop: () => stopSweeping(state),
  };
}

async function keys(state: SweeperState): Promise<string[]> {
  if (!state.keyNames) {
    const { Table } = await state.dynamo.send(new DescribeTableCommand({ TableName: state.tableName }));
    state.keyNames = (Table?.KeySchema ?? []).map((key) => key.AttributeName as string);
  }
  return state.keyNames;
}

async function sweepOnce(state: SweeperState, now = state.clock()): Promise<SweepResult> {
  const nowSeconds = Math.floor(now / 1000);
  const keyAttributes = await keys(state);
  let expired = 0;
  let deleted = 0;
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await scanExpired(state, keyAttributes, nowSeconds, startKey);
    for (const item of page.Items ?? []) {
      expired += 1;
      if (await deleteIfStillExpired(state, keyAttributes, item)) deleted += 1;
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { expired, deleted };
}

/** One page of the items expired at `nowSeconds`: their keys and TTL attribute. */
function scanExpired(
  state: SweeperState,
  keyAttributes: readonly string[],
  nowSeconds: number,
  startKey: Record<string, AttributeValue> | undefined,
): Promise<ScanCommandOutput> {
  const names: Record<string, string> = { '#ttl': state.attribute };
  keyAttributes.forEach((name, i) => {
    names[`#k${i}`] = name;
  });
  return state.dynamo.send(
    new ScanCommand({
      TableName: state.tableName,
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
}

/** Deletes the item unless its TTL changed since the scan; true when it was deleted. */
async function deleteIfStillExpired(
  state: SweeperState,
  keyAttributes: readonly string[],
  item: Record<string, AttributeValue>,
): Promise<boolean> {
  const key = Object.fromEntries(keyAttributes.map((name) => [name, item[name] as AttributeValue]));
  try {
    await state.dynamo.send(
      new DeleteItemCommand({
        TableName: state.tableName,
        Key: key,
        // AWS re-checks before deleting: an item whose TTL was just extended stays.
        ConditionExpression: '#ttl = :seen',
        ExpressionAttributeNames: { '#ttl': state.attribute },
        ExpressionAttributeValues: { ':seen': item[state.attribute] as AttributeValue },
      }),
    );
    return true;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return false;
  }
}

function startSweeping(state: SweeperState): void {
  if (state.timer) return;
  state.timer = setInterval(() => {
    if (state.sweeping) return; // a slow pass is not stacked on
    state.sweeping = true;
    state.pass = sweepOnce(state)
      .catch((error: unknown) =>
        state.logger.error('TTL sweep failed', {
          tableName: state.tableName,
          error: error instanceof Error ? error.message : String(error),
        }),
      )
      .finally(() => {
        state.sweeping = false;
      });
  }, state.intervalMs);
  state.timer.unref();
}

async function stopSweeping(state: SweeperState): Promise<void> {
  if (state.timer) clearInterval(state.timer);
  state.timer = undefined;
  await state.pass;
}
