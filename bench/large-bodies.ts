/**
 * Large bodies (core/blobs.ts): intake latency and DynamoDB units per webhook for 64 KiB, 512 KiB and
 * 2 MiB bodies, sent one at a time through the gateway with the pipeline running (each webhook is
 * delivered to every subscribed consumer before the next is sent, so the units include the fan-out's
 * payload read and the latencies are not contended). Bodies past MAX_INLINE_PAYLOAD_BYTES stored
 * (gzip) go to the payload bucket; the units then count only the payload item's reference.
 */
import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { type PayloadItem, payloadKey } from '../core/model';
import type { LocalStack } from '../local/stack';
import { paymentEvent, signRequest } from './payload';
import { percentile, round } from './stats';
import { type Meters, SOURCE } from './units';

export const LARGE_BODY_SIZES = [64 * 1024, 512 * 1024, 2 * 1024 * 1024] as const;

export interface LargeBodyRow {
  readonly bytes: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly writeUnitsPerWebhook: number;
  readonly readUnitsPerWebhook: number;
  /** Where the sampled payload was stored: `item` (inline) or `bucket`. */
  readonly stored: 'item' | 'bucket';
  readonly requests: number;
}

/** A payment event padded to exactly `bytes` with hex of a hash chain (gzip keeps about half). */
function largeEvent(index: number, runId: string, bytes: number): { eventId: string; body: string } {
  const { eventId, body } = paymentEvent(index, runId);
  const event = JSON.parse(body) as { data: Record<string, unknown> };
  event.data.attachment = '';
  const room = bytes - JSON.stringify(event).length;
  const parts: string[] = [];
  for (let i = 0, size = 0; size < room; i++) {
    const chunk = createHash('sha256').update(`${eventId}-${i}`).digest('hex');
    parts.push(chunk);
    size += chunk.length;
  }
  event.data.attachment = parts.join('').slice(0, room);
  return { eventId, body: JSON.stringify(event) };
}

export async function largeBodies(
  stack: LocalStack,
  m: Meters,
  secret: string,
  runId: string,
  options: { requests: number; consumers: number },
): Promise<LargeBodyRow[]> {
  const rows: LargeBodyRow[] = [];
  for (const bytes of LARGE_BODY_SIZES) {
    await stack.drain();
    m.capacity.reset();
    const latencies: number[] = [];
    let sample: { eventId: string; hmac?: string } | undefined;
    for (let i = 0; i < options.requests; i++) {
      const { eventId, body } = largeEvent(i, `${runId}-${bytes}`, bytes);
      const request = signRequest(secret, eventId, body);
      const acked = m.deliveries.allProcessed(eventId, options.consumers);
      const t0 = performance.now();
      const res = await fetch(stack.webhookUrl(SOURCE), { method: 'POST', headers: request.headers, body: request.body });
      const text = await res.text();
      latencies.push(performance.now() - t0);
      if (res.status !== 202) throw new Error(`large body ${eventId} (${bytes} bytes) answered ${res.status}: ${text}`);
      await acked;
      sample ??= { eventId };
    }
    await stack.drain();
    const per = (n: number) => n / options.requests;
    const writeUnits = per(m.capacity.writeUnits);
    const readUnits = per(m.capacity.readUnits);
    const receipt = await stack.handlers.ddb.send(
      new GetCommand({ TableName: stack.resources.tables.events, Key: { pk: `evt#${SOURCE}#${sample!.eventId}` } }),
    );
    const item = (
      await stack.handlers.ddb.send(
        new GetCommand({
          TableName: stack.resources.tables.events,
          Key: { pk: payloadKey(SOURCE, sample!.eventId, receipt.Item?.payloadHmac as string) },
        }),
      )
    ).Item as PayloadItem | undefined;
    rows.push({
      bytes,
      p50Ms: round(percentile(latencies, 50)),
      p99Ms: round(percentile(latencies, 99)),
      writeUnitsPerWebhook: round(writeUnits),
      readUnitsPerWebhook: round(readUnits),
      stored: item?.s3Key ? 'bucket' : 'item',
      requests: options.requests,
    });
  }
  return rows;
}
