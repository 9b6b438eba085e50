/**
 * The intake invariant under arbitrary input (fast-check, fixed seed, bounded runs in CI):
 * either 2xx and exactly one stored receipt, or 4xx and nothing stored, and never a secret in a log
 * line. Runs the real handler against DynamoDB Local.
 *
 * Longer run: HOOKLEDGER_FUZZ_RUNS=5000 npx vitest run test/integration/intake-fuzz.test.ts
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeaders } from '../../cli/ops/sign';
import config from '../../hookledger.config';
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

async function receiptCount(): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await dynamo.doc.send(
      new ScanCommand({ TableName: 'events', FilterExpression: 'kind = :e', ExpressionAttributeValues: { ':e': 'event' }, ExclusiveStartKey: start, Select: 'COUNT' }),
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
    fc.record({ id: attributionValue, type: attributionValue, tenant_id: attributionValue, key_id: attributionValue, data: fc.jsonValue() }, { requiredKeys: [] }).map((o) => Buffer.from(JSON.stringify(o))),
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
        for (const secret of [TEST_SECRET, OLD_SECRET, TEST_SECRET.slice(6), OLD_SECRET.slice(6), headers['webhook-signature']].filter(Boolean)) {
          expect(logged).not.toContain(secret as string);
        }
      }),
      { numRuns: RUNS, seed: SEED, verbose: 1 },
    );
    console.log(`intake fuzz: ${RUNS} requests, seed ${SEED}: ${stats.accepted} accepted, ${stats.duplicate} duplicates, ${stats.rejected} rejected`);
    expect(stats.accepted).toBeGreaterThan(5);
    expect(stats.rejected).toBeGreaterThan(RUNS / 2);
  }, 120_000);
});
