/**
 * Support for the operations tests: DynamoDB Local and fauxqs on free ports, tables and queues made
 * by the local stack's own provisioning, and seeding through the real write paths (Receipts.
 * recordEvent, Ledger.claim/acknowledge/recordFailure), so the operations read exactly what the
 * handlers write.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ScanCommand as DocScanCommand } from '@aws-sdk/lib-dynamodb';
import { type EventStores, eventStores } from '../../adapters/event-stores';
import { Ledger } from '../../adapters/ledger';
import { payloadHmac } from '../../adapters/payload-hash';
import { subscribedConsumers } from '../../core/config/routing';
import type { HookledgerConfig } from '../../core/config/schema';
import type { DeliveryMessage, EventItem, SecretVersion } from '../../core/model';
import defaultConfig from '../../hookledger.config';
import { localSqsClient } from '../../local/clients';
import { freePort, type SqsEmulator, startSqsEmulator } from '../../local/emulators';
import { type ProvisionedStack, provisionLocalStack } from '../../local/provision';
import { localPrincipal } from '../../local/wiring';
import { startTestDynamo } from '../support/dynamo';
import { TEST_HASH_KEY } from '../support/factories';

export const config = defaultConfig;
export const SOURCE = 'platform';
/** 2026-11-29T10:00:00Z: the start of the hour the seeded events arrive in. */
export const T0 = Date.parse('2026-11-29T10:00:00Z');
export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const OPERATOR = 'ops-test';

export interface OpsEnv {
  readonly dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
  readonly sqsServer: SqsEmulator;
  readonly sqs: SQSClient;
  stop(): Promise<void>;
}

export async function startOpsEnv(): Promise<OpsEnv> {
  const [dynamo, sqsServer] = await Promise.all([startTestDynamo(), freePort().then((port) => startSqsEmulator({ port }))]);
  const sqs = localSqsClient(sqsServer.endpoint);
  return {
    dynamo,
    sqsServer,
    sqs,
    stop: async () => {
      sqs.destroy();
      await Promise.all([dynamo.stop(), sqsServer.stop()]);
    },
  };
}

let counter = 0;

/** A fresh EventStore + Ledger (and queues) per test, named uniquely, made like the local stack's. */
export async function freshStack(env: OpsEnv, cfg: HookledgerConfig = config) {
  const n = ++counter;
  const resources: ProvisionedStack = await provisionLocalStack({
    config: cfg,
    dynamo: env.dynamo.client,
    sqs: env.sqs,
    tables: { events: `events-${n}`, ledger: `ledger-${n}` },
    queuePrefix: `t${n}-`,
  });
  const ddb = env.dynamo.doc;
  const store = eventStores({ client: ddb, tableName: resources.tables.events });
  const ledger = new Ledger({ client: ddb, tableName: resources.tables.ledger });
  const queues = Object.fromEntries(Object.entries(resources.queues).map(([id, q]) => [id, { url: q.url, dlqUrl: q.dlqUrl }]));
  return { resources, tables: resources.tables, queues, ddb, store, ledger, seed: seeder(store, ledger, cfg) };
}

export interface ReceiptSeed {
  readonly eventId: string;
  readonly receivedAt: number;
  readonly type?: string;
  readonly tenant?: string;
  readonly key?: string;
  readonly secretVersion?: SecretVersion;
  /** Default: the consumers subscribed to the type, as intake computes it. */
  readonly consumers?: string[];
  readonly payloadDays?: number;
}

function seeder(store: EventStores, ledger: Ledger, cfg: HookledgerConfig) {
  const receipts = new Map<string, EventItem>();
  const message = (eventId: string, consumerId: string, overrides: Partial<DeliveryMessage> = {}): DeliveryMessage => {
    const receipt = receipts.get(eventId);
    return {
      v: 2,
      source: SOURCE,
      eventId,
      eventType: receipt?.eventType ?? 'payment.succeeded',
      tenantId: receipt?.tenantId ?? 'tenant_204',
      keyId: receipt?.keyId ?? 'key_42',
      receivedAt: receipt?.receivedAt ?? T0,
      consumerId,
      ...(receipt ? { payloadHmac: receipt.payloadHmac, payloadExpiresAt: receipt.payloadExpiresAt } : {}),
      ...overrides,
    };
  };
  const policy = (consumerId: string) => cfg.consumers.find((c) => c.id === consumerId)?.policyVersion ?? 'v1';
  return {
    message,
    /** Intake's write: payload + receipt, through Receipts.recordEvent. */
    async receipt(seed: ReceiptSeed): Promise<EventItem> {
      const type = seed.type ?? 'payment.succeeded';
      const body = JSON.stringify({
        id: seed.eventId,
        type,
        tenant_id: seed.tenant ?? 'tenant_204',
        key_id: seed.key ?? 'key_42',
        data: { amount: 4200, currency: 'eur' },
      });
      const raw = Buffer.from(body);
      const event: Omit<EventItem, 'pk' | 'kind'> = {
        source: SOURCE,
        eventId: seed.eventId,
        eventType: type,
        tenantId: seed.tenant ?? 'tenant_204',
        keyId: seed.key ?? 'key_42',
        receivedAt: seed.receivedAt,
        consumers: seed.consumers ?? subscribedConsumers(cfg, type),
        payloadHmac: payloadHmac(TEST_HASH_KEY, raw),
        payloadBytes: raw.length,
        secretVersion: seed.secretVersion ?? 'current',
        payloadExpiresAt: seed.receivedAt + (seed.payloadDays ?? 30) * 86_400_000,
      };
      await store.receipts.recordEvent(event, raw);
      const item = { ...event, pk: `evt#${SOURCE}#${seed.eventId}`, kind: 'event' as const };
      receipts.set(seed.eventId, item);
      return item;
    },
    /** A worker's claim (attempt n, read logged under the consumer's principal). */
    async claim(eventId: string, consumerId: string, at: number, leaseMs = 60_000, overrides: Partial<DeliveryMessage> = {}) {
      const result = await ledger.claim({
        message: message(eventId, consumerId, overrides),
        now: at,
        leaseMs,
        principal: localPrincipal(consumerId),
      });
      if (result.kind !== 'claimed') throw new Error(`seed claim of ${eventId}#${consumerId} was ${result.kind}`);
      return result.attempt;
    },
    /** Claim then acknowledge: the done marker and usage row, as the runtime writes them. */
    async deliver(eventId: string, consumerId: string, units: number, at: number, overrides: Partial<DeliveryMessage> = {}) {
      const attempt = await this.claim(eventId, consumerId, at, 60_000, overrides);
      const ok = await ledger.acknowledge({
        message: message(eventId, consumerId, overrides),
        attempt,
        replay: false,
        units,
        principal: localPrincipal(consumerId),
        policyVersion: policy(consumerId),
        now: at + 1000,
      });
      if (!ok) throw new Error(`seed acknowledge of ${eventId}#${consumerId} was fenced`);
    },
    /** Claim then fail: retrying, or quarantined on the last attempt. */
    async fail(eventId: string, consumerId: string, at: number, quarantine: boolean) {
      const attempt = await this.claim(eventId, consumerId, at);
      await ledger.recordFailure({
        message: message(eventId, consumerId),
        attempt,
        replay: false,
        category: quarantine ? 'invalid_payload' : 'TimeoutError',
        errorMessage: quarantine ? 'amount is not a number' : 'downstream timed out',
        quarantine,
        now: at + 500,
      });
    },
  };
}

/** Every item of a table exactly as stored (marshalled attribute values), keyed by pk. */
export async function rawItems(env: OpsEnv, table: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await env.dynamo.client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start as never }));
    for (const item of page.Items ?? []) out.set(item.pk?.S ?? '', JSON.stringify(sortDeep(item)));
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

/** Every item of a table, unmarshalled. */
export async function items(env: OpsEnv, table: string): Promise<Record<string, unknown>[]> {
  const out = await env.dynamo.doc.send(new DocScanCommand({ TableName: table }));
  return out.Items ?? [];
}

function sortDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortDeep);
  if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, sortDeep(v)]),
    );
  }
  return value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value;
}
