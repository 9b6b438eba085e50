/**
 * Section 6, bodies by size (core/blobs.ts): for 1, 8, 16, 64 and 512 KiB and 2 MiB, with realistic
 * JSON (an order's line items: gzip keeps a fifth or less, like real webhook bodies) and with
 * incompressible content (base64 of hash output: gzip keeps about three quarters), sent one at a
 * time through the gateway with the pipeline running (each webhook is delivered to every subscribed
 * consumer before the next is sent, so the units include the fan-out's payload read and the
 * latencies are not contended). Per row: where the body was stored, DynamoDB units, S3 requests,
 * intake p50/p99 and USD per million webhooks, set against what the other store would have cost
 * (bench/body-store.ts), so the threshold (`payloads.inlineMaxBytes`) is checked by measurement.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { type PayloadItem, payloadKey } from '../core/model';
import type { LocalStack } from '../local/stack';
import { type PriceTable, usdPerMillion } from '../ops/cost-model';
import { type StoragePriceTable, storeCost } from './body-store';
import { BenchRunError } from './errors';
import type { Meters, S3Meter } from './meters';
import { paymentEvent, signRequest } from './payload';
import { percentile, round } from './stats';
import { resetAll, SOURCE, snapshot } from './units';

export const LARGE_BODY_SIZES = [1024, 8 * 1024, 16 * 1024, 64 * 1024, 512 * 1024, 2 * 1024 * 1024] as const;
export const BODY_CONTENTS = ['json', 'incompressible'] as const;
export type BodyContent = (typeof BODY_CONTENTS)[number];

export interface LargeBodyRow {
  readonly bytes: number;
  readonly content: BodyContent;
  /** The sampled body's stored size (gzip when smaller), and where it was kept. */
  readonly storedBytes: number;
  readonly stored: 'item' | 'bucket';
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Per webhook, the whole pipeline (intake, fan-out read, claims, acknowledgements); tenant-day registry writes left out. */
  readonly writeUnitsPerWebhook: number;
  readonly readUnitsPerWebhook: number;
  readonly s3RequestsPerWebhook: { readonly put: number; readonly get: number };
  readonly usdPerMillion: {
    /** As measured: every request of the pipeline (section 2's model) + S3 requests + the body's storage for the retention. */
    readonly total: number;
    /** The same webhook with the body in the other store (modelled: bench/body-store.ts). */
    readonly otherStore: number;
    /** total / the cheaper of the two: 1.00 when the threshold chose the cheaper store. */
    readonly ratioToCheaper: number;
  };
  readonly requests: number;
}

/** mulberry32, as bench/payload.ts: reproducible variety. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PRODUCTS = [
  'Pallet shipment, Hamburg to Rotterdam, standard',
  'Express parcel, next business day, insured',
  'Warehouse storage, per pallet and week',
  'Customs clearance, EU import, per declaration',
  'Cold chain surcharge, 2-8 degrees',
  'Fuel surcharge, monthly index',
  'Pick and pack, per order line',
  'Returns handling, inspection and restock',
] as const;
const REGIONS = ['eu-central', 'eu-west', 'us-east', 'ap-south'] as const;

/** A base64 run of `chars` characters from a hash chain: high entropy, as an encoded attachment. */
function incompressibleText(seed: string, chars: number): string {
  const parts: string[] = [];
  for (let i = 0, size = 0; size < chars; i++) {
    const chunk = createHash('sha512').update(`${seed}-${i}`).digest('base64');
    parts.push(chunk);
    size += chunk.length;
  }
  return parts.join('').slice(0, chars);
}

/**
 * A payment event of exactly `bytes` of JSON. `json`: the order behind it as line items (ids,
 * amounts, dates, products, regions), as an order or invoice webhook carries them; `incompressible`:
 * an attachment of base64 text.
 */
export function bodyOf(content: BodyContent, index: number, runId: string, bytes: number): { eventId: string; body: string } {
  const { eventId, body } = paymentEvent(index, runId);
  const event = JSON.parse(body) as { data: Record<string, unknown> };
  event.data.description = '';
  const base = JSON.stringify(event).length;
  if (base > bytes) return { eventId, body };
  if (content === 'incompressible') {
    event.data.attachment = '';
    event.data.attachment = incompressibleText(eventId, bytes - JSON.stringify(event).length);
    return { eventId, body: JSON.stringify(event) };
  }
  const r = rng(index + 7);
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join('');
  const items: unknown[] = [];
  event.data.line_items = items;
  let size = JSON.stringify(event).length;
  for (let i = 0; ; i++) {
    const start = 1_764_547_200 + Math.floor(r() * 2_592_000);
    const item = {
      id: `li_${hex(14)}`,
      object: 'line_item',
      description: PRODUCTS[Math.floor(r() * PRODUCTS.length)],
      quantity: 1 + Math.floor(r() * 40),
      unit_amount: 100 + Math.floor(r() * 50_000),
      currency: 'eur',
      period: { start, end: start + 86_400 * (1 + Math.floor(r() * 30)) },
      tax_rates: [{ id: `txr_${hex(10)}`, percentage: 19, inclusive: false }],
      metadata: { order_ref: `ord_${hex(8)}`, region: REGIONS[Math.floor(r() * REGIONS.length)], line: i + 1 },
    };
    const grown = size + JSON.stringify(item).length + (i > 0 ? 1 : 0);
    if (grown > bytes) break;
    items.push(item);
    size = grown;
  }
  // The rest, to the exact size: the order's free-text note.
  event.data.description = 'Consolidated monthly logistics invoice. '.repeat(1 + Math.ceil((bytes - size) / 40)).slice(0, bytes - size);
  return { eventId, body: JSON.stringify(event) };
}

export interface LargeBodyOptions {
  readonly requests: number;
  readonly consumers: number;
  readonly prices: PriceTable;
  readonly storagePrices: StoragePriceTable;
  readonly retentionDays: number;
  readonly platformLogLevel: 'WARN' | 'INFO' | 'DEBUG';
}

export async function largeBodies(
  stack: LocalStack,
  m: Meters,
  s3: S3Meter,
  secret: string,
  runId: string,
  options: LargeBodyOptions,
): Promise<LargeBodyRow[]> {
  const rows: LargeBodyRow[] = [];
  for (const content of BODY_CONTENTS) {
    for (const bytes of LARGE_BODY_SIZES) {
      await stack.drain();
      resetAll(m);
      s3.reset();
      const latencies: number[] = [];
      let sample: { eventId: string; storedBytes: number } | undefined;
      const t0 = performance.now();
      for (let i = 0; i < options.requests; i++) {
        const { eventId, body } = bodyOf(content, i, `${runId}-${content}-${bytes}`, bytes);
        if (body.length !== bytes) throw new BenchRunError(`${content} body ${eventId} is ${body.length} bytes, not ${bytes}`);
        const request = signRequest(secret, eventId, body);
        const acked = m.deliveries.allProcessed(eventId, options.consumers);
        const started = performance.now();
        const res = await fetch(stack.webhookUrl(SOURCE), { method: 'POST', headers: request.headers, body: request.body });
        const text = await res.text();
        latencies.push(performance.now() - started);
        if (res.status !== 202) throw new BenchRunError(`${content} body ${eventId} (${bytes} bytes) answered ${res.status}: ${text}`);
        await acked;
        sample ??= { eventId, storedBytes: Math.min(gzipSync(Buffer.from(body)).length, bytes) };
      }
      await stack.drain();
      const traffic = snapshot(m, options.requests, (performance.now() - t0) / 1000);
      // Once per tenant per day per environment in production: not a per-webhook cost (see section 7).
      const registry = traffic.capacityByOperation.registerTenantDay?.writeUnits ?? 0;
      const writeUnits = traffic.writeUnits - registry;
      const stored = await storedIn(stack, sample!.eventId);
      const put = s3.count('PutObject') / options.requests;
      const get = s3.count('GetObject') / options.requests;
      const pipeline = usdPerMillion(
        options.prices,
        { ...traffic, deliveries: options.consumers, writeUnits },
        { platformLogLevel: options.platformLogLevel },
      ).total;
      const sp = options.storagePrices.prices;
      const model = (store: 'item' | 'bucket') =>
        storeCost(sample!.storedBytes, store, options.prices, options.storagePrices, { retentionDays: options.retentionDays });
      const here = model(stored);
      const there = model(stored === 'item' ? 'bucket' : 'item');
      // Measured requests and units; storage for the retention from the model (it is not a request).
      const storage = here.storageUsdPerMillion;
      const total = pipeline + put * sp.s3StandardPerMillionPuts.usd + get * sp.s3StandardPerMillionGets.usd + storage;
      const otherStore = total - here.usdPerMillion + there.usdPerMillion;
      rows.push({
        bytes,
        content,
        storedBytes: sample!.storedBytes,
        stored,
        p50Ms: round(percentile(latencies, 50)),
        p99Ms: round(percentile(latencies, 99)),
        writeUnitsPerWebhook: round(writeUnits),
        readUnitsPerWebhook: round(traffic.readUnits),
        s3RequestsPerWebhook: { put: round(put), get: round(get) },
        usdPerMillion: {
          total: round4(total),
          otherStore: round4(otherStore),
          ratioToCheaper: round(total / Math.min(total, otherStore)),
        },
        requests: options.requests,
      });
    }
  }
  return rows;
}

const round4 = (v: number) => Number(v.toFixed(4));

/** Where the sampled event's body is: its payload item names an object, or holds the bytes. */
async function storedIn(stack: LocalStack, eventId: string): Promise<'item' | 'bucket'> {
  const table = stack.resources.tables.events;
  const receipt = await stack.handlers.ddb.send(new GetCommand({ TableName: table, Key: { pk: `evt#${SOURCE}#${eventId}` } }));
  const item = (
    await stack.handlers.ddb.send(
      new GetCommand({ TableName: table, Key: { pk: payloadKey(SOURCE, eventId, receipt.Item?.payloadHmac as string) } }),
    )
  ).Item as PayloadItem | undefined;
  if (!item) throw new BenchRunError(`no payload item for ${eventId}`);
  return item.s3Key ? 'bucket' : 'item';
}
