/**
 * The intake invariant under arbitrary input (fast-check, fixed seed, bounded runs in CI):
 * either 2xx and exactly one stored receipt, or 4xx and nothing stored, and never a secret in a log
 * line. Runs the real handler against DynamoDB Local.
 *
 * Mutation mode: valid signed requests (a Standard Webhooks source, and a GitHub source with replay
 * protection by body) with any header set, changed or removed and the body's bytes changed; the
 * receipts never outnumber the distinct signed identities accepted ((source, body id) for the
 * first, (source, body bytes) for the second), and a refused request stores nothing at all.
 *
 * Longer run: HOOKLEDGER_FUZZ_RUNS=5000 npx vitest run test/integration/intake-fuzz.test.ts
 */
import { createHash } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeaders } from '../../core/schemes';
import config from '../../hookledger.config';
import { defineConfig } from '../../core/config/schema';
import { GITHUB_SOURCE } from '../support/provider-sources';
import { createIngestHandler, type IngestHandler } from '../../lambdas/ingest/app';
import { EventStore } from '../../lambdas/shared/event-store';
import { httpEvent, NOW, OLD_SECRET, TEST_HASH_KEY, TEST_SECRET } from '../support/factories';
import { capturingLogger } from '../support/logs';
import { createTable, startTestDynamo } from '../support/dynamo';

const RUNS = Number(process.env.HOOKLEDGER_FUZZ_RUNS ?? 300);
const SEED = Number(process.env.HOOKLEDGER_FUZZ_SEED ?? 20261129);

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let handler: IngestHandler;
let lines: string[];

beforeAll(async () => {
  dynamo = await startTestDynamo();
  await createTable(dynamo.client, 'events', true);
  const captured = capturingLogger('fuzz');
  lines = captured.lines;
  handler = createIngestHandler({
    config,
    store: new EventStore({ client: dynamo.doc, tableName: 'events' }),
    secrets: {
      get: async () => ({ current: TEST_SECRET, previous: OLD_SECRET, previousUntil: NOW + 3_600_000 }),
      refresh: async () => ({ current: TEST_SECRET, previous: OLD_SECRET, previousUntil: NOW + 3_600_000 }),
      payloadHashKey: async () => TEST_HASH_KEY,
    },
    logger: captured.logger,
    clock: () => NOW,
  });
});
afterAll(() => dynamo?.stop());

/** The Standard Webhooks signature of the exact bytes (send's signer, proved against the verifier). */
function sign(body: Buffer, msgId: string, ts: string, secret = TEST_SECRET): string {
  return signatureHeaders({ type: 'standard-webhooks' }, { body, secret, now: Number(ts) * 1000, messageId: msgId })['webhook-signature']!;
}

async function receiptCount(table = 'events', kind: string | undefined = 'event'): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await dynamo.doc.send(
      new ScanCommand({
        TableName: table,
        ...(kind ? { FilterExpression: 'kind = :e', ExpressionAttributeValues: { ':e': kind } } : {}),
        ExclusiveStartKey: start,
        Select: 'COUNT',
      }),
    );
    count += out.Count ?? 0;
    start = out.LastEvaluatedKey;
  } while (start);
  return count;
}

const attributionValue = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', ' ', 'evt 1', 'x'.repeat(201), '__proto__', 'tenant_204', 'key_42', 'payment.succeeded'),
  fc.integer(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
);

/** Bodies that get past the signature (signed right) as often as not, so parsing is exercised. */
const request = fc.record({
  body: fc.oneof(
    // Well-formed events with arbitrary extra data: these should be accepted (or be duplicates).
    fc
      .record({
        id: fc.stringMatching(/^evt_[A-Za-z0-9]{1,10}$/),
        type: fc.constantFrom('payment.succeeded', 'invoice.paid', 'scoped_key.created', 'customer.updated'),
        tenant_id: fc.constantFrom('tenant_204', 'tenant_311'),
        key_id: fc.constantFrom('key_42', 'key_77'),
        data: fc.jsonValue({ maxDepth: 3 }),
      })
      .map((o) => Buffer.from(JSON.stringify(o))),
    fc.json().map((j) => Buffer.from(j)),
    fc
      .record(
        { id: attributionValue, type: attributionValue, tenant_id: attributionValue, key_id: attributionValue, data: fc.jsonValue() },
        { requiredKeys: [] },
      )
      .map((o) => Buffer.from(JSON.stringify(o))),
    fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
    fc.constantFrom(
      Buffer.from('{"id":"evt_p","type":"a","tenant_id":"t","key_id":"k","__proto__":{"x":1}}'),
      Buffer.from(`{"id":"evt_d","type":"a","tenant_id":"t","key_id":"k","x":${'['.repeat(100)}${']'.repeat(100)}}`),
      Buffer.from([0xc3, 0x28]),
    ),
  ),
  signing: fc.constantFrom('valid', 'valid', 'previous', 'wrong', 'none', 'garbage', 'stale'),
  msgId: fc.oneof(fc.string({ maxLength: 20 }), fc.constant('msg_2Kp7QeWd9')),
  extraHeader: fc.option(fc.tuple(fc.constantFrom('x-a', 'user-agent', 'webhook-id'), fc.string({ maxLength: 20 })), { nil: undefined }),
  base64: fc.boolean(),
  source: fc.constantFrom('platform', 'platform', 'platform', 'nope', ''),
});

describe('intake under arbitrary input', () => {
  it(`keeps its invariant over ${RUNS} generated requests (seed ${SEED})`, async () => {
    const stats = { accepted: 0, duplicate: 0, rejected: 0 };
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const ts = r.signing === 'stale' ? String(Math.floor(NOW / 1000) - 3600) : String(Math.floor(NOW / 1000));
        const headers: Record<string, string> = { 'content-type': 'application/json', 'webhook-id': r.msgId, 'webhook-timestamp': ts };
        if (r.signing === 'valid' || r.signing === 'stale') headers['webhook-signature'] = sign(r.body, r.msgId, ts);
        if (r.signing === 'previous') headers['webhook-signature'] = sign(r.body, r.msgId, ts, OLD_SECRET);
        if (r.signing === 'wrong') headers['webhook-signature'] = sign(r.body, r.msgId, ts, 'whsec_d3JvbmcgYnV0IHZhbGlkIGJhc2U2NA==');
        if (r.signing === 'garbage') headers['webhook-signature'] = 'v1,%%%';
        if (r.extraHeader) headers[r.extraHeader[0]] = r.extraHeader[1];
        const before = await receiptCount();
        const logStart = lines.length;
        const res = await handler(httpEvent(r.source, r.body, headers, { base64: r.base64 }));
        const after = await receiptCount();
        const body = JSON.parse(res.body ?? '{}') as { error?: string; message?: string; status?: string };

        expect(res.statusCode, JSON.stringify(body)).toBeLessThan(500);
        if (res.statusCode === 202) {
          stats.accepted++;
          expect(after).toBe(before + 1);
        } else if (res.statusCode === 200) {
          stats.duplicate++;
          expect(after).toBe(before);
        } else {
          stats.rejected++;
          expect(res.statusCode).toBeGreaterThanOrEqual(400);
          expect(after).toBe(before);
          expect(typeof body.error).toBe('string');
          expect(typeof body.message).toBe('string');
        }
        const logged = lines.slice(logStart).join('\n') + (body.message ?? '');
        for (const secret of [TEST_SECRET, OLD_SECRET, TEST_SECRET.slice(6), OLD_SECRET.slice(6), headers['webhook-signature']].filter(
          Boolean,
        )) {
          expect(logged).not.toContain(secret as string);
        }
      }),
      { numRuns: RUNS, seed: SEED, verbose: 1 },
    );
    console.log(
      `intake fuzz: ${RUNS} requests, seed ${SEED}: ${stats.accepted} accepted, ${stats.duplicate} duplicates, ${stats.rejected} rejected`,
    );
    expect(stats.accepted).toBeGreaterThan(5);
    expect(stats.rejected).toBeGreaterThan(RUNS / 2);
  }, 120_000);
});

const GITHUB_SECRET = 'gh_webhook_secret_7Hq2xV9pLm4';
const HEADER_NAMES = [
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'x-hub-signature-256',
  'x-github-delivery',
  'x-github-event',
  'x-github-hook-id',
  'user-agent',
  'x-forwarded-for',
] as const;

const mutation = fc.oneof(
  fc.record({
    kind: fc.constant('set' as const),
    header: fc.constantFrom(...HEADER_NAMES),
    value: fc.oneof(fc.string({ maxLength: 24 }), fc.uuid(), fc.constantFrom('payment.succeeded', 'v1,AAAA', 'sha256=00')),
  }),
  fc.record({ kind: fc.constant('remove' as const), header: fc.constantFrom(...HEADER_NAMES) }),
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('append' as const), text: fc.string({ minLength: 1, maxLength: 8 }) }),
);

const signedRequest = fc.record({
  source: fc.constantFrom('platform', 'github'),
  id: fc.constantFrom('evt_01J8K7MUT1', 'evt_01J8K7MUT2', 'evt_01J8K7MUT3'),
  tenant: fc.constantFrom('tenant_204', 'tenant_311'),
  amount: fc.constantFrom(100, 4200),
  delivery: fc.constantFrom('1f0c2a9e-0001', '1f0c2a9e-0002', '1f0c2a9e-0003'),
  mutations: fc.array(mutation, { maxLength: 3 }),
});

describe('intake under mutated signed requests', () => {
  it(`never makes more receipts than distinct signed identities over ${RUNS} mutated requests (seed ${SEED})`, async () => {
    await createTable(dynamo.client, 'mutations', true);
    const mutationConfig = defineConfig({ ...config, sources: [...config.sources, GITHUB_SOURCE] });
    const mutated = createIngestHandler({
      config: mutationConfig,
      store: new EventStore({ client: dynamo.doc, tableName: 'mutations' }),
      secrets: {
        get: async (source) => ({ current: source === 'github' ? GITHUB_SECRET : TEST_SECRET }),
        refresh: async (source) => ({ current: source === 'github' ? GITHUB_SECRET : TEST_SECRET }),
        payloadHashKey: async () => TEST_HASH_KEY,
      },
      logger: capturingLogger('mutations').logger,
      clock: () => NOW,
    });
    const identities = new Set<string>();
    const stats = { accepted: 0, duplicate: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(signedRequest, async (r) => {
        const ts = String(Math.floor(NOW / 1000));
        let body = Buffer.from(
          JSON.stringify(
            r.source === 'platform'
              ? { id: r.id, type: 'payment.succeeded', tenant_id: r.tenant, key_id: 'key_42', data: { amount: r.amount } }
              : {
                  action: 'opened',
                  issue: { id: 2649812237, title: r.id },
                  installation: { id: r.tenant === 'tenant_204' ? 48213907 : 48213911 },
                  amount: r.amount,
                },
          ),
        );
        const headers: Record<string, string> =
          r.source === 'platform'
            ? {
                'content-type': 'application/json',
                'webhook-id': `msg_${r.delivery}`,
                'webhook-timestamp': ts,
                'webhook-signature': sign(body, `msg_${r.delivery}`, ts),
              }
            : {
                'content-type': 'application/json',
                'x-github-delivery': r.delivery,
                'x-github-event': 'issues',
                'x-github-hook-id': '501873942',
                ...signatureHeaders({ type: 'github' }, { body, secret: GITHUB_SECRET, now: NOW, messageId: r.delivery }),
              };
        for (const m of r.mutations) {
          if (m.kind === 'set') headers[m.header] = m.value;
          else if (m.kind === 'remove') delete headers[m.header];
          else if (m.kind === 'flip' && body.length > 0) {
            body = Buffer.from(body);
            body[m.at % body.length] = body[m.at % body.length]! ^ (1 << m.bit);
          } else if (m.kind === 'append') body = Buffer.concat([body, Buffer.from(m.text)]);
        }
        const itemsBefore = await receiptCount('mutations', undefined);
        const res = await mutated(httpEvent(r.source, body, headers));
        expect(res.statusCode, res.body).toBeLessThan(500);
        if ((res.statusCode ?? 0) < 300) {
          // Accepted: a signed identity. Platform events are identified by their signed body id,
          // GitHub's (replay protection by body) by their exact bytes.
          const parsed = JSON.parse(body.toString('utf8')) as { id?: unknown };
          identities.add(
            r.source === 'platform' ? `platform|${String(parsed.id)}` : `github|${createHash('sha256').update(body).digest('hex')}`,
          );
          if (res.statusCode === 202) stats.accepted++;
          else stats.duplicate++;
        } else {
          stats.refused++;
          expect(await receiptCount('mutations', undefined), `refused ${res.statusCode} ${res.body} stored something`).toBe(itemsBefore);
        }
        expect(await receiptCount('mutations')).toBeLessThanOrEqual(identities.size);
      }),
      { numRuns: RUNS, seed: SEED, verbose: 1 },
    );
    const receipts = await receiptCount('mutations');
    console.log(
      `intake mutations: ${RUNS} requests, seed ${SEED}: ${stats.accepted} accepted, ${stats.duplicate} duplicates, ${stats.refused} refused; ` +
        `${receipts} receipts for ${identities.size} signed identities`,
    );
    expect(receipts).toBe(stats.accepted);
    expect(receipts).toBeLessThanOrEqual(identities.size);
    expect(stats.accepted).toBeGreaterThan(3);
    expect(stats.duplicate).toBeGreaterThan(10);
    expect(stats.refused).toBeGreaterThan(RUNS / 4);
  }, 180_000);
});
