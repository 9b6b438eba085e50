/**
 * Where a stored body costs least: in its payload item or in the payload bucket. The arithmetic
 * behind DEFAULT_INLINE_PAYLOAD_BYTES (core/blobs.ts) and docs/configuration.md's "Where a body is stored", and
 * the model the large-body rows (bench/large-bodies.ts) compare their measured store with.
 *
 * Per webhook, only what differs between the two stores (the receipt, the deliveries and the ledger
 * cost the same either way):
 *   item:   the payload item's write (1 WRU per started KB of item), the fan-out's strongly
 *           consistent read of it (1 RRU per started 4 KB) and DynamoDB storage until TTL deletes it;
 *   bucket: a reference item (key, encoding, object key: 1 WRU, 1 RRU), one S3 PUT at intake, one
 *           S3 GET at the fan-out, S3 Standard storage until the lifecycle rule expires the object.
 * TTL deletes and lifecycle expirations bill nothing; storage runs for the retention (`retention.payloadDays`).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT as ROOT } from '../core/paths';
import type { PriceTable } from '../ops/cost-model';

interface Price {
  readonly usd: number;
  readonly sources: readonly string[];
}

export interface StoragePriceTable {
  readonly date: string;
  readonly prices: Record<
    's3StandardPerMillionPuts' | 's3StandardPerMillionGets' | 's3StandardPerGbMonth' | 'dynamodbStandardPerGbMonth',
    Price
  >;
  readonly daysPerMonth: number;
}

export const STORAGE_PRICES_FILE = 'bench/prices-storage.json';

export function loadStoragePrices(): StoragePriceTable {
  return JSON.parse(readFileSync(path.join(ROOT, STORAGE_PRICES_FILE), 'utf8')) as StoragePriceTable;
}

/**
 * Bytes a payload item holds besides its body, by DynamoDB's size rules (names + values): `pk`
 * (`pay#<source>#<eventId>#<payloadHmac>`, about 90), `kind`, `encoding`, `expiresAt`, `body`'s name.
 */
export const PAYLOAD_ITEM_OVERHEAD_BYTES = 128;
/** A payload item that names its object instead: the overhead plus `s3Key` (about 100) and `storedBytes`. */
export const REFERENCE_ITEM_BYTES = 256;

export interface StoreCost {
  readonly store: 'item' | 'bucket';
  /** Per webhook. */
  readonly writeUnits: number;
  readonly readUnits: number;
  readonly s3Puts: number;
  readonly s3Gets: number;
  /** USD per million webhooks: units, requests and storage for the retention. */
  readonly usdPerMillion: number;
  /** Of which storage (DynamoDB and S3) for the retention. */
  readonly storageUsdPerMillion: number;
}

export interface StoreCostOptions {
  readonly retentionDays: number;
  /** Reads of the stored body per webhook (the fan-out's one; a replay reads again). @default 1 */
  readonly reads?: number;
}

const GB = 1024 ** 3;

/** What keeping one body of `storedBytes` in `store` costs, per webhook and per million. */
export function storeCost(
  storedBytes: number,
  store: 'item' | 'bucket',
  table: PriceTable,
  storage: StoragePriceTable,
  options: StoreCostOptions,
): StoreCost {
  const reads = options.reads ?? 1;
  const p = table.prices;
  const s = storage.prices;
  const months = options.retentionDays / storage.daysPerMonth;
  const itemBytes = store === 'item' ? storedBytes + PAYLOAD_ITEM_OVERHEAD_BYTES : REFERENCE_ITEM_BYTES;
  const writeUnits = Math.ceil(itemBytes / 1024);
  const readUnits = reads * Math.ceil(itemBytes / 4096);
  const s3Puts = store === 'bucket' ? 1 : 0;
  const s3Gets = store === 'bucket' ? reads : 0;
  const M = 1e6;
  const storageUsdPerMillion =
    ((M * itemBytes) / GB) * months * s.dynamodbStandardPerGbMonth.usd +
    (store === 'bucket' ? ((M * storedBytes) / GB) * months * s.s3StandardPerGbMonth.usd : 0);
  const usdPerMillion =
    writeUnits * p.dynamodbOnDemandPerMillionWriteUnits.usd +
    readUnits * p.dynamodbOnDemandPerMillionReadUnits.usd +
    s3Puts * s.s3StandardPerMillionPuts.usd +
    s3Gets * s.s3StandardPerMillionGets.usd +
    storageUsdPerMillion;
  return { store, writeUnits, readUnits, s3Puts, s3Gets, usdPerMillion, storageUsdPerMillion };
}

/**
 * The largest stored size for which the item costs no more than the bucket: above it, every size up
 * to the item limit is cheaper in the bucket (the item's cost grows by at least a write unit per KB,
 * the bucket's by storage only).
 */
export function breakEvenStoredBytes(table: PriceTable, storage: StoragePriceTable, options: StoreCostOptions): number {
  for (let bytes = 0; bytes <= 300_000; bytes++) {
    const item = storeCost(bytes, 'item', table, storage, options).usdPerMillion;
    const bucket = storeCost(bytes, 'bucket', table, storage, options).usdPerMillion;
    if (item > bucket) return bytes - 1;
  }
  return 300_000;
}
