/**
 * The intake invariant under arbitrary input (fast-check, fixed seed, bounded runs in CI):
 * either 2xx and exactly one stored receipt, or 4xx and nothing stored, and never a secret in a log
 * line. Runs the real handler against DynamoDB Local.
 *
 * Mutation mode: valid signed requests (a Standard Webhooks source, a GitHub source with replay
 * protection by body, and a Twilio form source) with any header set, changed or removed, the
 * Content-Type set to any media type or removed, the body's bytes changed, and its `&`-separated
 * fields reordered, added (past the source's maxFormFields too), dropped or repeated; an accepted
 * request is recorded under the id that was signed, the receipts never outnumber the distinct signed
 * identities accepted ((source, body id) for the first, (source, body bytes) for the second,
 * (source, MessageSid) for the third), and a refused request stores nothing at all.
 *
 * Longer run: HOOKLEDGER_FUZZ_RUNS=5000 npx vitest run test/integration/intake-fuzz.test.ts
 */
import { createHash } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import { defineConfig } from '../../core/config/schema';
import { ALL_SCHEMES, signatureHeaders } from '../../core/schemes';
import config from '../../hookledger.config';
import { createIngestHandler, type IngestHandler } from '../../lambdas/ingest/app';
import { createTable, startTestDynamo } from '../support/dynamo';
import { httpEvent, NOW, OLD_SECRET, TEST_HASH_KEY, TEST_SECRET } from '../support/factories';
import { capturingLogger } from '../support/logs';
import { GITHUB_SOURCE } from '../support/provider-sources';

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
    schemes: ALL_SCHEMES,
    config,
    store: intakeStore(eventStores({ client: dynamo.doc, tableName: 'events' })),
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
const TWILIO_TOKEN = '9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a';
/** The URL intake rebuilds for httpEvent's requests (no Host header: the request context's domain). */
const TWILIO_URL = 'https://localhost/hooks/twilio-sms';
/** A Twilio source with a small field bound, so the field-count mutations cross it. */
const TWILIO_SOURCE = {
  id: 'twilio-sms',
  provider: 'twilio',
  attribution: { keyId: { body: 'MessagingServiceSid' } },
  maxFormFields: 12,
} as const;
const SECRETS: Record<string, string> = { platform: TEST_SECRET, github: GITHUB_SECRET, 'twilio-sms': TWILIO_TOKEN };
/** Free text that reads as attribution if a JSON body is ever read as a form. */
const INJECTION = 'thanks&id=evt_01J8K7MUTX&tenant_id=tenant_VICTIM&type=payment.succeeded&key_id=key_42&z=';
const HEADER_NAMES = [
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'x-hub-signature-256',
  'x-github-delivery',
  'x-github-event',
  'x-github-hook-id',
  'x-twilio-signature',
  'user-agent',
  'x-forwarded-for',
] as const;
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/webhook+json',
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=utf-8',
  'multipart/form-data; boundary=x',
  'text/plain',
  'application/octet-stream',
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
  // The unsigned Content-Type: set to any media type, or removed.
  fc.record({ kind: fc.constant('content-type' as const), value: fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined }) }),
  // Form field order (Twilio signs the fields sorted, so a reordered form still verifies), and counts.
  fc.record({ kind: fc.constant('reorder' as const), seed: fc.nat() }),
  fc.record({ kind: fc.constant('add-fields' as const), count: fc.constantFrom(1, 3, 12, 2000) }),
  fc.record({ kind: fc.constant('drop-field' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('repeat-field' as const), at: fc.nat() }),
);

const signedRequest = fc.record({
  source: fc.constantFrom('platform', 'github', 'twilio-sms'),
  id: fc.constantFrom('evt_01J8K7MUT1', 'evt_01J8K7MUT2', 'evt_01J8K7MUT3'),
  tenant: fc.constantFrom('tenant_204', 'tenant_311'),
  amount: fc.constantFrom(100, 4200),
  delivery: fc.constantFrom('1f0c2a9e-0001', '1f0c2a9e-0002', '1f0c2a9e-0003'),
  note: fc.constantFrom('thanks', INJECTION),
  /** The unsigned Content-Type, before any other mutation: as signed, removed, or any media type. */
  contentType: fc.oneof(fc.constantFrom('as signed', 'removed'), fc.constantFrom(...CONTENT_TYPES)),
  /** Twilio only: the provider sent this many fields besides the attribution (within, at and past the bound). */
  extraFields: fc.constantFrom(0, 2, 8, 9),
  mutations: fc.array(mutation, { maxLength: 3 }),
});

/** The pairs of a form in a seeded order (Fisher-Yates with a small LCG: reproducible from the seed). */
function reorder(pairs: string[], seed: number): string[] {
  const out = [...pairs];
  let state = seed >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('intake under mutated signed requests', () => {
  it(`never makes more receipts than distinct signed identities over ${RUNS} mutated requests (seed ${SEED})`, async () => {
    await createTable(dynamo.client, 'mutations', true);
    const mutationConfig = defineConfig({ ...config, sources: [...config.sources, GITHUB_SOURCE, TWILIO_SOURCE] });
    const mutated = createIngestHandler({
      schemes: ALL_SCHEMES,
      config: mutationConfig,
      store: intakeStore(eventStores({ client: dynamo.doc, tableName: 'mutations' })),
      secrets: {
        get: async (source) => ({ current: SECRETS[source]! }),
        refresh: async (source) => ({ current: SECRETS[source]! }),
        payloadHashKey: async () => TEST_HASH_KEY,
      },
      logger: capturingLogger('mutations').logger,
      clock: () => NOW,
    });
    const identities = new Set<string>();
    const stats = { accepted: 0, duplicate: 0, refused: 0, mediaType: 0, tooManyFields: 0, formAccepted: 0 };
    await fc.assert(
      fc.asyncProperty(signedRequest, async (r) => {
        const ts = String(Math.floor(NOW / 1000));
        let body: Buffer;
        let headers: Record<string, string>;
        if (r.source === 'twilio-sms') {
          const form = new URLSearchParams({
            AccountSid: r.tenant === 'tenant_204' ? 'AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c' : 'AC9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b',
            MessageSid: r.id,
            MessageStatus: 'delivered',
            MessagingServiceSid: 'MG9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d',
          });
          for (let i = 0; i < r.extraFields; i++) form.append(`Extra${i}`, `${r.note} ${i}`);
          body = Buffer.from(form.toString());
          headers = signatureHeaders({ type: 'twilio' }, { body, secret: TWILIO_TOKEN, now: NOW, messageId: r.delivery, url: TWILIO_URL });
        } else {
          body = Buffer.from(
            JSON.stringify(
              r.source === 'platform'
                ? { id: r.id, type: 'payment.succeeded', tenant_id: r.tenant, key_id: 'key_42', data: { amount: r.amount, note: r.note } }
                : {
                    action: 'opened',
                    issue: { id: 2649812237, title: r.id, body: r.note },
                    installation: { id: r.tenant === 'tenant_204' ? 48213907 : 48213911 },
                    amount: r.amount,
                  },
            ),
          );
          headers =
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
        }
        if (r.contentType === 'removed') delete headers['content-type'];
        else if (r.contentType !== 'as signed') headers['content-type'] = r.contentType;
        for (const m of r.mutations) {
          if (m.kind === 'set') headers[m.header] = m.value;
          else if (m.kind === 'remove') delete headers[m.header];
          else if (m.kind === 'content-type') {
            if (m.value === undefined) delete headers['content-type'];
            else headers['content-type'] = m.value;
          } else if (m.kind === 'flip' && body.length > 0) {
            body = Buffer.from(body);
            body[m.at % body.length] = body[m.at % body.length]! ^ (1 << m.bit);
          } else if (m.kind === 'append') body = Buffer.concat([body, Buffer.from(m.text)]);
          else {
            // Form-level mutations act on the body's `&`-separated pairs, whatever its format.
            const pairs = body.toString('utf8').split('&');
            if (m.kind === 'reorder') body = Buffer.from(reorder(pairs, m.seed).join('&'));
            else if (m.kind === 'add-fields') {
              body = Buffer.from([...pairs, ...Array.from({ length: m.count }, (_, i) => `Added${i}=v${i}`)].join('&'));
            } else if (m.kind === 'drop-field' && pairs.length > 1) {
              body = Buffer.from(pairs.filter((_, i) => i !== m.at % pairs.length).join('&'));
            } else if (m.kind === 'repeat-field') {
              body = Buffer.from([...pairs, pairs[m.at % pairs.length]!].join('&'));
            }
          }
        }
        const itemsBefore = await receiptCount('mutations', undefined);
        const res = await mutated(httpEvent(r.source, body, headers));
        expect(res.statusCode, res.body).toBeLessThan(500);
        const answer = JSON.parse(res.body ?? '{}') as { event_id?: string; error?: string };
        if ((res.statusCode ?? 0) < 300) {
          // Accepted: a signed identity, under the id that was signed. Platform events are identified
          // by their signed body id, Twilio's by the signed MessageSid, GitHub's (replay protection by
          // body) by their exact bytes.
          if (r.source === 'platform') {
            const parsed = JSON.parse(body.toString('utf8')) as { id?: unknown };
            expect(answer.event_id, `accepted under an id that was not signed: ${res.body}`).toBe(parsed.id);
            identities.add(`platform|${String(parsed.id)}`);
          } else if (r.source === 'twilio-sms') {
            expect(answer.event_id, `accepted under an id that was not signed: ${res.body}`).toBe(r.id);
            identities.add(`twilio|${r.id}`);
            stats.formAccepted++;
          } else {
            identities.add(`github|${createHash('sha256').update(body).digest('hex')}`);
          }
          if (res.statusCode === 202) stats.accepted++;
          else stats.duplicate++;
        } else {
          stats.refused++;
          if (answer.error === 'unsupported_media_type') stats.mediaType++;
          if (answer.error === 'too_many_fields') stats.tooManyFields++;
          expect(await receiptCount('mutations', undefined), `refused ${res.statusCode} ${res.body} stored something`).toBe(itemsBefore);
        }
        expect(await receiptCount('mutations')).toBeLessThanOrEqual(identities.size);
      }),
      { numRuns: RUNS, seed: SEED, verbose: 1 },
    );
    const receipts = await receiptCount('mutations');
    console.log(
      `intake mutations: ${RUNS} requests, seed ${SEED}: ${stats.accepted} accepted, ${stats.duplicate} duplicates, ${stats.refused} refused ` +
        `(${stats.mediaType} for their media type, ${stats.tooManyFields} for their field count); ` +
        `${receipts} receipts for ${identities.size} signed identities`,
    );
    expect(receipts).toBe(stats.accepted);
    expect(receipts).toBeLessThanOrEqual(identities.size);
    expect(stats.accepted).toBeGreaterThan(3);
    expect(stats.duplicate).toBeGreaterThan(10);
    expect(stats.refused).toBeGreaterThan(RUNS / 4);
    // The new mutations reach intake's checks, and Twilio forms (reordered or not) are accepted.
    expect(stats.mediaType).toBeGreaterThan(5);
    expect(stats.tooManyFields).toBeGreaterThan(5);
    expect(stats.formAccepted).toBeGreaterThan(5);
  }, 240_000);
});
