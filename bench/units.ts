/**
 * Section 1: DynamoDB units, SQS requests and Lambda invocations per webhook, at N consumers.
 *  - low traffic: one webhook at a time, the next sent only after every consumer acknowledged the
 *    previous one, so nothing batches;
 *  - high traffic: a burst sent concurrently, so sends, receives and deletes batch;
 *  - backlog: the same burst queued while the pollers are stopped, then released (full batches).
 */
import { type AttributeValue, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { eventKey, ledgerKey, payloadKey } from '../core/model';
import { signatureHeaders } from '../core/schemes';
import { localDynamoClient } from '../local/clients';
import type { LocalStack } from '../local/stack';
import { BenchRunError } from './errors';
import type { Meters } from './meters';
import { paymentEvent, type SignedRequest, signedPayments } from './payload';

export interface TrafficResult {
  readonly webhooks: number;
  readonly seconds: number;
  /** All per webhook. */
  readonly writeUnits: number;
  readonly readUnits: number;
  /** Bytes of application log lines (INFO), per webhook, all functions together. */
  readonly logBytes: number;
  readonly capacityByOperation: Record<string, { calls: number; writeUnits: number; readUnits: number }>;
  readonly sqsRequests: number;
  /** Delivery messages the fan-out sent: N when nothing was sent twice. */
  readonly messagesSent: number;
  /** Records the consumer handlers were invoked with: N when each message was handled once. */
  readonly consumerRecords: number;
  readonly sqsByCommand: Record<string, number>;
  /** Not per webhook: the pollers' empty long polls during the phase (a fixed cost, see the notes). */
  readonly sqsEmptyReceives: number;
  readonly invocations: { readonly ingest: number; readonly fanout: number; readonly consumers: number; readonly total: number };
  readonly recordsPerBatch: {
    readonly fanout: number;
    readonly consumer: number;
    readonly sqsReceive: number;
    readonly sqsSendBatch: number;
  };
}

export const SOURCE = 'platform';

/** A GitHub-style source: body-only signature, attribution from unsigned headers, replay protection by body. */
export const BODY_PROTECTED_SOURCE = {
  id: 'github-bench',
  scheme: { type: 'github' as const },
  replayProtection: 'body' as const,
  attribution: {
    eventId: { header: 'x-github-delivery' },
    eventType: { header: 'x-github-event' },
    tenantId: { body: 'tenant_id' },
    keyId: { body: 'key_id' },
  },
};

export interface BodyProtectionResult {
  /** The low-traffic phase again, through the body-protected source. */
  readonly traffic: TrafficResult;
  /** Re-sending each captured request with a new delivery id: answered 200 duplicate, units per request. */
  readonly replay: { readonly requests: number; readonly duplicates: number; readonly accepted: number; readonly writeUnits: number };
}

/**
 * The same 1 KB payment events, one at a time, through a source with replay protection by body,
 * then each re-sent as an attacker would: the captured bytes and signature under a fresh delivery id.
 */
export async function bodyProtection(
  stack: LocalStack,
  m: Meters,
  runId: string,
  count: number,
  consumers: number,
): Promise<BodyProtectionResult> {
  const secret = (await stack.secrets.get(BODY_PROTECTED_SOURCE.id)).current;
  const requests = Array.from({ length: count }, (_, i) => {
    const { eventId, body } = paymentEvent(i, runId);
    const bytes = Buffer.from(body);
    const signature = signatureHeaders(BODY_PROTECTED_SOURCE.scheme, { body: bytes, secret, now: Date.now(), messageId: eventId });
    return {
      eventId,
      body,
      headers: (delivery: string) => ({
        'content-type': 'application/json',
        'x-github-delivery': delivery,
        'x-github-event': 'payment.succeeded',
        ...signature,
      }),
    };
  });
  const postTo = async (headers: Record<string, string>, body: string) => {
    const res = await fetch(stack.webhookUrl(BODY_PROTECTED_SOURCE.id), { method: 'POST', headers, body });
    return { status: res.status, text: await res.text() };
  };
  await stack.drain();
  resetAll(m);
  const t0 = performance.now();
  for (const r of requests) {
    const acked = m.deliveries.allProcessed(r.eventId, consumers);
    const res = await postTo(r.headers(r.eventId), r.body);
    if (res.status !== 202) throw new BenchRunError(`webhook ${r.eventId} answered ${res.status}, not 202: ${res.text}`);
    await acked;
  }
  await stack.drain();
  const traffic = snapshot(m, count, (performance.now() - t0) / 1000);

  resetAll(m);
  let duplicates = 0;
  let accepted = 0;
  for (const r of requests) {
    const res = await postTo(r.headers(`${r.eventId}-replayed`), r.body);
    if (res.status === 202) accepted++;
    if (res.status === 200 && JSON.parse(res.text).event_id === r.eventId) duplicates++;
  }
  await stack.drain();
  // Failed conditions are billed as 1 WRU each on AWS; the adapters report them so.
  return { traffic, replay: { requests: count, duplicates, accepted, writeUnits: m.capacity.writeUnits / count } };
}

export async function post(stack: LocalStack, request: SignedRequest): Promise<void> {
  const res = await fetch(stack.webhookUrl(SOURCE), { method: 'POST', headers: request.headers, body: request.body });
  const text = await res.text();
  if (res.status !== 202) throw new BenchRunError(`webhook ${request.eventId} answered ${res.status}, not 202: ${text}`);
}

export function resetAll(m: Meters): void {
  m.logs.reset();
  m.capacity.reset();
  m.sqs.reset();
  m.invocations.reset();
}

export function snapshot(m: Meters, webhooks: number, seconds: number): TrafficResult {
  const per = (n: number) => n / webhooks;
  const consumerRecords = [...m.invocations.consumers.values()].reduce((s, c) => s + c.records, 0);
  const receives = m.sqs.count('ReceiveMessageCommand');
  const sendBatches = m.sqs.count('SendMessageBatchCommand');
  const consumers = m.invocations.consumerInvocations();
  return {
    webhooks,
    seconds,
    writeUnits: per(m.capacity.writeUnits),
    readUnits: per(m.capacity.readUnits),
    logBytes: per(m.logs.bytes),
    capacityByOperation: Object.fromEntries(
      [...m.capacity.byOperation].map(([op, v]) => [
        op,
        { calls: per(v.calls), writeUnits: per(v.writeUnits), readUnits: per(v.readUnits) },
      ]),
    ),
    sqsRequests: per(m.sqs.billedRequests()),
    messagesSent: per(m.sqs.messagesSent),
    consumerRecords: per(consumerRecords),
    sqsByCommand: Object.fromEntries([...m.sqs.byCommand].map(([name, n]) => [name.replace(/Command$/, ''), per(n)])),
    sqsEmptyReceives: m.sqs.emptyReceives,
    invocations: {
      ingest: 1, // one gateway request per webhook, each answered 202 (checked in post)
      fanout: per(m.invocations.fanout),
      consumers: per(consumers),
      total: 1 + per(m.invocations.fanout) + per(consumers),
    },
    recordsPerBatch: {
      fanout: m.invocations.fanoutRecords / Math.max(1, m.invocations.fanout),
      consumer: consumerRecords / Math.max(1, consumers),
      sqsReceive: m.sqs.messagesReceived / Math.max(1, receives),
      sqsSendBatch: m.sqs.messagesSent / Math.max(1, sendBatches),
    },
  };
}

export async function lowTraffic(
  stack: LocalStack,
  m: Meters,
  secret: string,
  runId: string,
  count: number,
  consumers: number,
): Promise<TrafficResult> {
  await stack.drain();
  resetAll(m);
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const [request] = signedPayments(secret, runId, 1, i);
    const acked = m.deliveries.allProcessed(request!.eventId, consumers);
    await post(stack, request!);
    await acked;
  }
  await stack.drain();
  return snapshot(m, count, (performance.now() - t0) / 1000);
}

/**
 * A burst sent concurrently. With `backlog`, the pipeline must be stopped (and the stream hold nothing
 * older: local/stack.ts's restarted fan-out poller reads the stream from TRIM_HORIZON); the burst is
 * queued, then the pipeline is started, so the fan-out and the consumers find it all waiting: the
 * fullest batches the event sources allow, the limit sustained heavy traffic approaches.
 */
export async function burst(
  stack: LocalStack,
  m: Meters,
  secret: string,
  runId: string,
  count: number,
  consumers: number,
  options: { backlog?: boolean } = {},
): Promise<TrafficResult> {
  const requests = signedPayments(secret, runId, count);
  if (!options.backlog) await stack.drain();
  resetAll(m);
  const t0 = performance.now();
  const acked = requests.map((r) => m.deliveries.allProcessed(r.eventId, consumers, 120_000));
  await Promise.all(requests.map((r) => post(stack, r)));
  if (options.backlog) await stack.startPipeline();
  await Promise.all(acked);
  await stack.drain();
  return snapshot(m, count, (performance.now() - t0) / 1000);
}

// --- item sizes, to check the measured units against AWS's size rules -----------------------

export interface ItemSizes {
  readonly payload: number;
  readonly receipt: number;
  /** The largest ledger item of the event (after acknowledgement). */
  readonly ledger: number;
  /** Units AWS would charge for these sizes: writes by 1 KB, strongly consistent reads by 4 KB. */
  readonly awsRules: { readonly writeUnits: number; readonly readUnits: number };
}

export async function itemSizes(stack: LocalStack, eventId: string, consumerIds: readonly string[]): Promise<ItemSizes> {
  const ddb = localDynamoClient(stack.endpoints.dynamodb);
  const read = async (table: string, pk: string) => {
    const out = await ddb.send(new GetItemCommand({ TableName: table, Key: { pk: { S: pk } }, ConsistentRead: true }));
    if (!out.Item) throw new BenchRunError(`item ${pk} not found in ${table}`);
    return out.Item;
  };
  const get = async (table: string, pk: string) => itemSize(await read(table, pk));
  const { events, ledger } = stack.resources.tables;
  const receiptItem = await read(events, eventKey(SOURCE, eventId));
  const receipt = itemSize(receiptItem);
  // The payload item's key names the receipt's keyed hash.
  const payload = await get(events, payloadKey(SOURCE, eventId, receiptItem.payloadHmac?.S));
  const ledgerSizes = await Promise.all(consumerIds.map((c) => get(ledger, ledgerKey(SOURCE, eventId, c))));
  ddb.destroy();
  const kb = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
  return {
    payload,
    receipt,
    ledger: Math.max(...ledgerSizes),
    awsRules: {
      // claim (item after claim <= final size) + acknowledge (the larger of before and after) per consumer
      writeUnits: kb(payload) + kb(receipt) + ledgerSizes.reduce((s, size) => s + 2 * kb(size), 0),
      // one strongly consistent read of the payload by the fan-out, whatever the number of consumers
      readUnits: Math.max(1, Math.ceil(payload / 4096)),
    },
  };
}

/** DynamoDB's item size: attribute names plus values (numbers ~1 byte per 2 digits + 1; +3 per list/map, +1 per element). */
export function itemSize(item: Record<string, AttributeValue>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += Buffer.byteLength(name) + valueSize(value);
  return size;
}

function valueSize(v: AttributeValue): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S);
  if (v.N !== undefined) return Math.ceil(v.N.replace(/^-|\.|^0+/g, '').length / 2) + 1;
  if (v.B !== undefined) return v.B.length;
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.L !== undefined) return 3 + v.L.reduce((s, e) => s + 1 + valueSize(e), 0);
  if (v.M !== undefined) return 3 + Object.entries(v.M).reduce((s, [k, e]) => s + 1 + Buffer.byteLength(k) + valueSize(e), 0);
  if (v.SS !== undefined) return v.SS.reduce((s, e) => s + Buffer.byteLength(e), 0);
  if (v.NS !== undefined) return v.NS.reduce((s, e) => s + Math.ceil(e.length / 2) + 1, 0);
  if (v.BS !== undefined) return v.BS.reduce((s, e) => s + e.length, 0);
  return 0;
}
