/**
 * Integrity at the door, on DynamoDB Local through the real intake handler and the EventStore table's adapters: a
 * captured request re-sent with new unsigned headers, the same event id with other bytes, and any
 * interleaving of two such requests with storage failures between their writes.
 */
import { gunzipSync } from 'node:zlib';
import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import { payloadHmac } from '../../adapters/payload-hash';
import type { SecretsPort } from '../../adapters/secrets';
import { defineConfig } from '../../core/config/schema';
import { type EventItem, type PayloadItem, payloadKey } from '../../core/model';
import { ALL_SCHEMES, signatureHeaders } from '../../core/schemes';
import baseConfig from '../../hookledger.config';
import { createIngestHandler, type IngestHandler } from '../../lambdas/ingest/app';
import issuesOpened from '../fixtures/github/issues-opened.json';
import { createTable, startTestDynamo } from '../support/dynamo';
import { httpEvent, NOW, platformEvent, signedHeaders, TEST_HASH_KEY, TEST_SECRET } from '../support/factories';
import { capturingLogger } from '../support/logs';
import { GITHUB_SOURCE } from '../support/provider-sources';

const GITHUB_SECRET = 'gh_webhook_secret_7Hq2xV9pLm4';
const config = defineConfig({ ...baseConfig, sources: [...baseConfig.sources, GITHUB_SOURCE] });
const secrets: SecretsPort = {
  get: async (source) => ({ current: source === 'github' ? GITHUB_SECRET : TEST_SECRET }),
  refresh: async (source) => ({ current: source === 'github' ? GITHUB_SECRET : TEST_SECRET }),
  payloadHashKey: async () => TEST_HASH_KEY,
};

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let tableNo = 0;

beforeAll(async () => {
  dynamo = await startTestDynamo();
});
afterAll(() => dynamo?.stop());

async function freshTable(): Promise<string> {
  const name = `door-${++tableNo}`;
  await createTable(dynamo.client, name, true);
  return name;
}

function ingest(table: string, client: DynamoDBDocumentClient = dynamo.doc) {
  const outcomes: string[] = [];
  const handler: IngestHandler = createIngestHandler({
    schemes: ALL_SCHEMES,
    config,
    store: intakeStore(eventStores({ client, tableName: table })),
    secrets,
    logger: capturingLogger().logger,
    clock: () => NOW,
    onOutcome: (o) => outcomes.push(o),
  });
  return { handler, outcomes };
}

async function itemsOf(table: string): Promise<Record<string, unknown>[]> {
  return (await dynamo.doc.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? [];
}

const BODY = Buffer.from(JSON.stringify(issuesOpened));

function githubHeaders(delivery: string, event = 'issues', hookId = '501873942'): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-github-delivery': delivery,
    'x-github-event': event,
    'x-github-hook-id': hookId,
    ...signatureHeaders({ type: 'github' }, { body: BODY, secret: GITHUB_SECRET, now: NOW, messageId: delivery }),
  };
}

describe('a captured GitHub request re-sent with new unsigned headers', () => {
  it('makes exactly one event however often it is re-sent, under its first delivery id, type and hook', async () => {
    const table = await freshTable();
    const { handler, outcomes } = ingest(table);
    const first = await handler(httpEvent('github', BODY, githubHeaders('72d3162e-cc78-11e3-81ab-4c9367dc0958')));
    expect(first.statusCode).toBe(202);
    expect(JSON.parse(first.body!)).toEqual({ event_id: '72d3162e-cc78-11e3-81ab-4c9367dc0958', deliveries: 2 });

    // The attacker's replays: fresh delivery ids, a payment type (routes to risk-evaluator, 5 units), another hook id.
    const replays = [
      githubHeaders('0b1e4a52-0d17-4c4b-9a56-5f0c1a1d0001', 'payment.succeeded'),
      githubHeaders('0b1e4a52-0d17-4c4b-9a56-5f0c1a1d0002', 'issues', '999'),
      githubHeaders('72d3162e-cc78-11e3-81ab-4c9367dc0958'),
    ];
    const answers = [];
    for (const headers of replays) answers.push(await handler(httpEvent('github', BODY, headers)));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
    expect(answers.map((a) => JSON.parse(a.body!))).toEqual([
      { status: 'duplicate', event_id: '72d3162e-cc78-11e3-81ab-4c9367dc0958' },
      { status: 'duplicate', event_id: '72d3162e-cc78-11e3-81ab-4c9367dc0958' },
      { status: 'duplicate', event_id: '72d3162e-cc78-11e3-81ab-4c9367dc0958' },
    ]);
    expect(outcomes).toEqual(['recorded', 'duplicate_body', 'duplicate_body', 'duplicate']);

    const receipts = (await itemsOf(table)).filter((i) => i.kind === 'event') as unknown as EventItem[];
    expect(receipts).toHaveLength(1);
    expect(receipts[0]).toMatchObject({
      eventId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      eventType: 'issues',
      tenantId: '48213907',
      keyId: '501873942',
      consumers: ['billing-meter', 'audit-writer'],
    });
  });

  it('records nothing for the same body with its signature cut (401), and a changed byte is a new, unsigned request', async () => {
    const table = await freshTable();
    const { handler } = ingest(table);
    const headers = githubHeaders('5a7f0c64-1f6e-4e0b-b1de-000000000001');
    const tampered = Buffer.from(BODY.toString('utf8').replace('"id":48213907', '"id":48213908'));
    expect(tampered.equals(BODY)).toBe(false);
    expect((await handler(httpEvent('github', tampered, headers))).statusCode).toBe(401);
    const { 'x-hub-signature-256': _, ...unsigned } = headers;
    expect((await handler(httpEvent('github', BODY, unsigned))).statusCode).toBe(401);
    expect(await itemsOf(table)).toEqual([]);
  });
});

describe('the same event id with other bytes', () => {
  it('answers 200 duplicate_conflict, stores nothing of the second body and writes its audit line', async () => {
    const table = await freshTable();
    const { handler, outcomes } = ingest(table);
    const original = JSON.stringify(platformEvent({ id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204' }));
    const forged = JSON.stringify(
      platformEvent({ id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_311', data: { amount: 99_900, currency: 'eur' } }),
    );
    expect((await handler(httpEvent('platform', original, signedHeaders(original)))).statusCode).toBe(202);
    const second = await handler(httpEvent('platform', forged, signedHeaders(forged, { msgId: 'msg_forged01' })));
    expect(second.statusCode).toBe(200);
    expect(JSON.parse(second.body!)).toEqual({ status: 'duplicate_conflict', event_id: 'evt_01J8K7M2Q4' });
    // A plain retry of the original is still a plain duplicate.
    expect(JSON.parse((await handler(httpEvent('platform', original, signedHeaders(original)))).body!).status).toBe('duplicate');
    expect(outcomes).toEqual(['recorded', 'duplicate_conflict', 'duplicate']);

    const items = await itemsOf(table);
    const byKind = (kind: string) => items.filter((i) => i.kind === kind);
    expect(byKind('event')).toHaveLength(1);
    expect(byKind('event')[0]).toMatchObject({ tenantId: 'tenant_204', payloadHmac: payloadHmac(TEST_HASH_KEY, Buffer.from(original)) });
    expect(byKind('payload').map((p) => p.pk)).toEqual([
      `pay#platform#evt_01J8K7M2Q4#${payloadHmac(TEST_HASH_KEY, Buffer.from(original))}`,
    ]);
    const audit = byKind('audit');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      pk: 'cfl#platform#evt_01J8K7M2Q4',
      action: 'intake.duplicate_conflict',
      count: 1,
      entries: [
        { at: NOW, payloadHmac: payloadHmac(TEST_HASH_KEY, Buffer.from(forged)), payloadBytes: forged.length, secretVersion: 'current' },
      ],
    });
  });
});

describe('any interleaving of two bodies with one event id, storage failing between writes', () => {
  const ORIGINAL = Buffer.from(JSON.stringify(platformEvent({ id: 'evt_01J8K7RACE', tenant_id: 'tenant_204' })));
  const OTHER = Buffer.from(JSON.stringify(platformEvent({ id: 'evt_01J8K7RACE', tenant_id: 'tenant_311', data: { amount: 1 } })));

  it('ends with the receipt pointing at a stored payload of exactly its bytes, and at most one receipt', async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
        fc.nat(2),
        fc.nat(2),
        async (s, failures, retriesA, retriesB) => {
          runs++;
          const table = await freshTable();
          let call = 0;
          // Every DynamoDB call waits for the scheduler, which interleaves the two requests; the
          // n-th call fails when failures[n] says so (a throttle: intake answers 503).
          const scheduled = s.scheduleFunction(async function dynamodb(command: Parameters<DynamoDBDocumentClient['send']>[0]) {
            const n = call++;
            if (n < failures.length && failures[n])
              return { error: new ProvisionedThroughputExceededException({ message: 'injected', $metadata: {} }) };
            try {
              return { value: await dynamo.doc.send(command as never) };
            } catch (error) {
              return { error };
            }
          });
          const client = {
            send: async (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
              const out = await scheduled(command);
              if ('error' in out) throw out.error;
              return out.value;
            },
          } as unknown as DynamoDBDocumentClient;
          const { handler } = ingest(table, client);
          const provider = async (body: Buffer, msgId: string, retries: number) => {
            const statuses: number[] = [];
            for (let attempt = 0; attempt <= retries; attempt++) {
              const res = await handler(httpEvent('platform', body, signedHeaders(body.toString('utf8'), { msgId })));
              statuses.push(res.statusCode ?? 0);
              if ((res.statusCode ?? 0) < 500) return { statuses, body: JSON.parse(res.body!) as { status?: string } };
            }
            return { statuses, body: {} as { status?: string } };
          };
          const done = Promise.all([provider(ORIGINAL, 'msg_a', retriesA), provider(OTHER, 'msg_b', retriesB)]);
          await s.waitFor(done);
          const [a, b] = await done;

          const items = await itemsOf(table);
          const receipts = items.filter((i) => i.kind === 'event') as unknown as EventItem[];
          expect(receipts.length).toBeLessThanOrEqual(1);
          const accepted = [a, b].filter((r) => r.statuses.at(-1) === 202);
          expect(accepted.length).toBe(receipts.length);
          if (receipts.length === 1) {
            const receipt = receipts[0]!;
            const stored = (
              await dynamo.doc.send(
                new GetCommand({
                  TableName: table,
                  Key: { pk: payloadKey('platform', 'evt_01J8K7RACE', receipt.payloadHmac) },
                  ConsistentRead: true,
                }),
              )
            ).Item as PayloadItem | undefined;
            expect(stored, 'the receipt names a payload that was never stored').toBeDefined();
            const bytes = stored!.encoding === 'gzip' ? gunzipSync(Buffer.from(stored!.body!)) : Buffer.from(stored!.body!);
            expect(payloadHmac(TEST_HASH_KEY, bytes)).toBe(receipt.payloadHmac);
            // The tenant billed is the tenant of the bytes consumers will read.
            expect(receipt.tenantId).toBe((JSON.parse(bytes.toString('utf8')) as { tenant_id: string }).tenant_id);
            const winner = a.statuses.at(-1) === 202 ? ORIGINAL : OTHER;
            expect(bytes.equals(winner)).toBe(true);
            const loser = winner === ORIGINAL ? b : a;
            if (loser.statuses.at(-1)! < 500) expect(loser.body.status).toBe('duplicate_conflict');
          }
        },
      ),
      { numRuns: Number(process.env.HOOKLEDGER_RACE_RUNS ?? 60), seed: 20261130 },
    );
    expect(runs).toBeGreaterThanOrEqual(60);
  }, 120_000);
});

describe('retention', () => {
  it('never serves a payload past its expiry, though TTL has not deleted the item', async () => {
    const table = await freshTable();
    let now = NOW;
    const store = eventStores({ client: dynamo.doc, tableName: table, clock: () => now });
    const body = Buffer.from(JSON.stringify(platformEvent({ id: 'evt_01J8K7RET1' })));
    const hmac = payloadHmac(TEST_HASH_KEY, body);
    await store.receipts.recordEvent(
      {
        source: 'platform',
        eventId: 'evt_01J8K7RET1',
        eventType: 'payment.succeeded',
        tenantId: 'tenant_204',
        keyId: 'key_42',
        receivedAt: NOW,
        consumers: ['billing-meter'],
        payloadHmac: hmac,
        payloadBytes: body.length,
        secretVersion: 'current',
        payloadExpiresAt: NOW + 30 * 86_400_000,
      },
      body,
    );
    expect((await store.payloads.getPayload('platform', 'evt_01J8K7RET1', hmac))?.equals(body)).toBe(true);
    now = NOW + 30 * 86_400_000;
    expect(await store.payloads.getPayload('platform', 'evt_01J8K7RET1', hmac)).toBeUndefined();
    // Still in the table: only the read refuses it.
    const raw = await dynamo.doc.send(new GetCommand({ TableName: table, Key: { pk: payloadKey('platform', 'evt_01J8K7RET1', hmac) } }));
    expect(raw.Item).toBeDefined();
  });
});
