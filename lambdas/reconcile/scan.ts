/**
 * Read-only table scans shared by reconcile (the scheduled Lambda) and the operator CLI.
 *
 * Scale: neither table has an index on time, so every window query is a paginated Scan with a
 * filter: it reads (and is billed for) the whole table, whatever the window. Fine up to a few
 * million items (minutes, a few dollars per run at on-demand read prices); beyond that add a GSI on
 * (kind, receivedAt) to the EventStore and on ackAt to the Ledger, and query those instead.
 */
import {
  BatchGetCommand,
  type BatchGetCommandInput,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
  ScanCommand,
  type ScanCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { EventItem, LedgerItem } from '../../core/model';

/** Called after every page: items read so far; `total` when known. */
export type Progress = (done: number, total: number | undefined) => void;

export interface TableNames {
  readonly events: string;
  readonly ledger: string;
}

export interface ScanDeps {
  readonly ddb: DynamoDBDocumentClient;
  readonly tables: TableNames;
}

/** A half-open window of epoch milliseconds, [from, to). */
export interface Window {
  readonly from: number;
  readonly to: number;
}

/** Every item a filtered Scan returns, following LastEvaluatedKey to the end. */
export async function scanAll<T>(ddb: DynamoDBDocumentClient, input: ScanCommandInput, onProgress?: Progress): Promise<T[]> {
  const items: T[] = [];
  let scanned = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(new ScanCommand({ ...input, ExclusiveStartKey: start }));
    for (const item of page.Items ?? []) items.push(item as T);
    scanned += page.ScannedCount ?? 0;
    onProgress?.(scanned, undefined);
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

export interface ReceiptFilter {
  readonly window?: Window;
  /** Only receipts whose delivery set includes this consumer. */
  readonly consumer?: string;
  readonly tenant?: string;
  readonly type?: string;
  readonly source?: string;
}

/** Receipts (`kind = event`), optionally limited to a receivedAt window and attribution filters. */
export async function scanReceipts(deps: ScanDeps, filter: ReceiptFilter = {}, onProgress?: Progress): Promise<EventItem[]> {
  const clauses = ['kind = :event'];
  const values: Record<string, unknown> = { ':event': 'event' };
  const names: Record<string, string> = {};
  if (filter.window) {
    clauses.push('receivedAt >= :from AND receivedAt < :to');
    values[':from'] = filter.window.from;
    values[':to'] = filter.window.to;
  }
  if (filter.consumer !== undefined) {
    clauses.push('contains(consumers, :consumer)');
    values[':consumer'] = filter.consumer;
  }
  if (filter.tenant !== undefined) {
    clauses.push('tenantId = :tenant');
    values[':tenant'] = filter.tenant;
  }
  if (filter.type !== undefined) {
    clauses.push('eventType = :type');
    values[':type'] = filter.type;
  }
  if (filter.source !== undefined) {
    clauses.push('#source = :source');
    names['#source'] = 'source';
    values[':source'] = filter.source;
  }
  return scanAll<EventItem>(
    deps.ddb,
    {
      TableName: deps.tables.events,
      FilterExpression: clauses.join(' AND '),
      ExpressionAttributeValues: values,
      ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
    },
    onProgress,
  );
}

/** Ledger items whose receivedAt (copied from the receipt at claim) lies in the window; all when none. */
export async function scanLedger(deps: ScanDeps, window?: Window, onProgress?: Progress): Promise<LedgerItem[]> {
  return scanAll<LedgerItem>(
    deps.ddb,
    {
      TableName: deps.tables.ledger,
      ...(window
        ? {
            FilterExpression: 'receivedAt >= :from AND receivedAt < :to',
            ExpressionAttributeValues: { ':from': window.from, ':to': window.to },
          }
        : {}),
    },
    onProgress,
  );
}

/** Items by key (BatchGetItem, 100 keys a call, unprocessed keys retried); missing keys are absent. */
export async function batchGet<T extends { pk: string }>(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  pks: readonly string[],
  options: { readonly projection?: string; readonly names?: Record<string, string> } = {},
): Promise<Map<string, T>> {
  const found = new Map<string, T>();
  const unique = [...new Set(pks)];
  for (let i = 0; i < unique.length; i += 100) {
    let request: BatchGetCommandInput['RequestItems'] = {
      [tableName]: {
        Keys: unique.slice(i, i + 100).map((pk) => ({ pk })),
        ...(options.projection ? { ProjectionExpression: options.projection } : {}),
        ...(options.names ? { ExpressionAttributeNames: options.names } : {}),
      },
    };
    for (let round = 0; request && Object.keys(request).length > 0; round++) {
      if (round > 0) await sleep(Math.min(1000, 50 * 2 ** round));
      const out: BatchGetCommandOutput = await ddb.send(new BatchGetCommand({ RequestItems: request }));
      for (const item of out.Responses?.[tableName] ?? []) found.set(String(item.pk), item as T);
      request = out.UnprocessedKeys;
    }
  }
  return found;
}

export interface LedgerKeyParts {
  readonly source: string;
  readonly eventId: string;
  readonly consumerId: string;
}

/**
 * `<source>:<eventId>#<consumerId>` split back into its parts. The key is the truth (a planted or
 * damaged item may lack its attribute copies); source ids have no ':' and consumer ids no '#'.
 */
export function parseLedgerKey(pk: string): LedgerKeyParts | undefined {
  const colon = pk.indexOf(':');
  const hash = pk.lastIndexOf('#');
  if (colon <= 0 || hash <= colon + 1 || hash === pk.length - 1) return undefined;
  return { source: pk.slice(0, colon), eventId: pk.slice(colon + 1, hash), consumerId: pk.slice(hash + 1) };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
