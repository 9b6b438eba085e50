/**
 * Tenant erasure on the local stack (`hookledger erase`): tenant_204's webhook bodies go (payload
 * items, bucket bodies, consumers' claim-checked views) while the ledger and its evidence stay:
 * usage to the unit, receipts with their keyed hash, the access log, reconcile clean, trace saying who
 * erased it. A delivery pending at erasure (consumer paused) is quarantined payload_erased, unread and
 * uncharged; the message of a failed attempt that quoted the body is scrubbed from the ledger (trace and
 * the console's event view), its category, attempt and time kept. And per-source retention
 * (`retentionDays`) sets the payload items' TTL and the objects' tag.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3PayloadBlobs } from '../../adapters/payload-blobs';
import { Payloads } from '../../adapters/payloads';
import { scanAll } from '../../adapters/table-scan';
import { handleApi } from '../../console/api';
import { MAX_BODY_BYTES_CEILING, RETENTION_TAG } from '../../core/blobs';
import { defineConfig } from '../../core/config/schema';
import { type AuditItem, DAY_MS, type ErrorEntry, type EventItem, type LedgerItem, type PayloadItem, payloadKey } from '../../core/model';
import baseConfig from '../../hookledger.config';
import { handle as riskHandle } from '../../lambdas/consumers/risk-evaluator';
import { reconcile } from '../../lambdas/reconcile/reconcile';
import type { ConsumerHandle } from '../../lambdas/runtime/runtime';
import { localS3Client } from '../../local/clients';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { erase } from '../../ops/erase';
import { replay } from '../../ops/replay';
import { resolveTarget, type Target } from '../../ops/target';
import { iso } from '../../ops/time';
import { verifyPayload } from '../../ops/verify-payload';
import { runCli } from '../support/cli';
import { platformEvent } from '../support/factories';
import { doneRows, ledgerRows, send, startTestStack, unitsByTenant } from '../support/stack';

/** The platform source keeps payloads 7 days, not the deployment's 30. */
const config = defineConfig({
  ...baseConfig,
  sources: baseConfig.sources.map((s) => ({ ...s, maxBodyBytes: MAX_BODY_BYTES_CEILING, retentionDays: 7 })),
});

/** Poorly compressible text: a 1.1 MB attachment is stored in the bucket and risk-evaluator's view goes by claim check. */
function filler(bytes: number): string {
  const parts: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const chunk = createHash('sha256').update(`erase-${i}`).digest('hex');
    parts.push(chunk);
    size += chunk.length;
  }
  return parts.join('').slice(0, bytes);
}

/**
 * risk-evaluator as a team might have written it: its first attempt at evt_01J8K7E201 fails with a
 * message quoting the body (card and holder); the retry scores it as usual.
 */
const risk: ConsumerHandle = async (ctx) => {
  if (ctx.attribution.eventId === 'evt_01J8K7E201' && ctx.attempt === 1) {
    const data = ctx.payload.data as { card_last4: string; holder: string };
    throw new Error(`risk model timed out scoring card ${data.card_last4} of ${data.holder}`);
  }
  return riskHandle(ctx);
};

const EVENTS = {
  small204: platformEvent({
    id: 'evt_01J8K7E201',
    type: 'payment.succeeded',
    tenant_id: 'tenant_204',
    data: { amount: 4200, currency: 'eur', card_last4: '4242', holder: 'Zoë Quist' },
  }),
  large204: platformEvent({
    id: 'evt_01J8K7E202',
    type: 'payment.succeeded',
    tenant_id: 'tenant_204',
    data: { amount: 900, currency: 'eur', attachment: filler(1_100_000) } as never,
  }),
  pending204: platformEvent({ id: 'evt_01J8K7E203', type: 'invoice.paid', tenant_id: 'tenant_204' }),
  small317: platformEvent({ id: 'evt_01J8K7E301', type: 'payment.succeeded', tenant_id: 'tenant_317' }),
  large317: platformEvent({
    id: 'evt_01J8K7E302',
    type: 'payment.succeeded',
    tenant_id: 'tenant_317',
    data: { amount: 700, currency: 'eur', attachment: filler(1_080_000) } as never,
  }),
};
const ERASED = ['evt_01J8K7E201', 'evt_01J8K7E202', 'evt_01J8K7E203'];
const KEPT = ['evt_01J8K7E301', 'evt_01J8K7E302'];

let stack: LocalStack;
let env: NodeJS.ProcessEnv;
let blobs: S3PayloadBlobs;
let from: number;
let unitsBefore: Record<string, number>;
/** The failed attempt of risk-evaluator on evt_01J8K7E201 as recorded before erasure. */
let failedBefore: ErrorEntry | undefined;

const eventStore = () =>
  scanAll<Record<string, unknown>>(stack.handlers.ddb, { TableName: stack.resources.tables.events, ConsistentRead: true });
/** Every payload item's event id (`pay#<source>#<eventId>#<hmac>`). */
const payloadEventIds = async () =>
  (await eventStore())
    .filter((i) => String(i.pk).startsWith('pay#'))
    .map((i) => String(i.pk).split('#')[2])
    .sort();
/** Every object in the payload bucket, by event id (`payloads/<source>/<eventId>/…`, `views/<consumer>/<eventId>/…`). */
const objectEventIds = async () => {
  const keys = [...(await blobs.list('payloads/')), ...(await blobs.list('views/'))];
  return keys.map((k) => (k.startsWith('payloads/') ? k.split('/')[2] : k.split('/')[2])).sort();
};

beforeAll(async () => {
  stack = await startTestStack({ config, handles: { 'risk-evaluator': risk } });
  const statePath = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-erase-')), 'state.json');
  await writeState(statePath, stackState(stack, null));
  env = { USER: 'e2e-operator', HOOKLEDGER_STATE: statePath };
  blobs = new S3PayloadBlobs({ client: localS3Client(stack.endpoints.s3), bucket: stack.payloadBucket });
  from = Date.now() - 60_000;
  for (const event of [EVENTS.small204, EVENTS.large204, EVENTS.small317, EVENTS.large317]) {
    expect((await send(stack, event)).status).toBe(202);
  }
  await stack.drain();
  // Pending at erasure: audit-writer is paused when evt_01J8K7E203 arrives (billing-meter takes its own).
  await stack.pause('audit-writer');
  expect((await send(stack, EVENTS.pending204)).status).toBe(202);
  await stack.drain();
  unitsBefore = unitsByTenant(await doneRows(stack));
}, 60_000);
afterAll(() => stack?.stop());

describe('hookledger erase --tenant on the local stack', () => {
  it('stores tenant_204 and tenant_317 payloads as items and objects before erasure (the premise)', async () => {
    expect(await payloadEventIds()).toEqual([...ERASED, ...KEPT].sort());
    // Bodies of both large events, and risk-evaluator's claim-checked views of them.
    expect(await objectEventIds()).toEqual(['evt_01J8K7E202', 'evt_01J8K7E202', 'evt_01J8K7E302', 'evt_01J8K7E302']);
    // payment.succeeded: billing-meter 5 + audit-writer 1 + risk-evaluator 1; invoice.paid: billing-meter 1 (audit-writer paused).
    expect(unitsBefore).toEqual({ tenant_204: 7 + 7 + 1, tenant_317: 7 + 7 });
    // risk-evaluator's first attempt at evt_01J8K7E201 failed quoting the body; its retry was acknowledged.
    const row = (await ledgerRows(stack)).find((r) => r.pk === 'platform:evt_01J8K7E201#risk-evaluator') as LedgerItem;
    expect(row).toMatchObject({ state: 'done', units: 1, attempt: 2 });
    failedBefore = row.errors?.[0];
    expect(row.errors).toEqual([
      { attempt: 1, category: 'error', message: 'risk model timed out scoring card 4242 of Zoë Quist', at: expect.any(Number) },
    ]);
  });

  it('refuses to erase from a script without --yes (exit 2), deleting nothing', async () => {
    const result = await runCli(['erase', '--tenant', 'tenant_204'], config, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('pass --yes');
    expect(await payloadEventIds()).toEqual([...ERASED, ...KEPT].sort());
  });

  it('counts on --dry-run exactly what the real run then deletes, and leaves tenant_317 whole', async () => {
    // No --from: as far back as the index reads (3,660 days).
    const dry = await runCli(['erase', '--tenant', 'tenant_204', '--dry-run', '--json'], config, env);
    expect(dry.code).toBe(0);
    const plan = JSON.parse(dry.stdout);
    // One message to scrub: risk-evaluator's failed attempt at evt_01J8K7E201.
    expect(plan).toMatchObject({
      tenant: 'tenant_204',
      events: 3,
      payloadItems: 3,
      objects: 2,
      deliveriesQuarantined: 1,
      errorMessagesScrubbed: 1,
    });
    expect(plan.dryRun).toBe(true);
    expect(Date.parse(plan.to) - Date.parse(plan.from)).toBe(3660 * DAY_MS);
    expect(await payloadEventIds()).toEqual([...ERASED, ...KEPT].sort());

    const real = await runCli(['erase', '--tenant', 'tenant_204', '--from', iso(from), '--yes', '--json'], config, env);
    expect(real.stderr).toBe('');
    expect(real.code).toBe(0);
    const done = JSON.parse(real.stdout);
    expect(done).toMatchObject({
      tenant: 'tenant_204',
      events: 3,
      payloadItems: 3,
      objects: 2,
      deliveriesQuarantined: 1,
      errorMessagesScrubbed: 1,
      complete: true,
    });
    expect(done.dryRun).toBe(false);
    // The same counts (each invocation's window ends at its own "now").
    expect({ ...done, dryRun: true, erasureId: undefined, from: undefined, to: undefined }).toEqual({
      ...plan,
      from: undefined,
      to: undefined,
    });
    expect(done.from).toBe(iso(from));

    // No payload item or object of tenant_204 remains; tenant_317's are all there.
    expect(await payloadEventIds()).toEqual(KEPT);
    expect(await objectEventIds()).toEqual(['evt_01J8K7E302', 'evt_01J8K7E302']);

    // The receipts stay with their evidence; ordering keys and the like are gone; one audit item.
    const items = await eventStore();
    const receipt = items.find((i) => i.pk === 'evt#platform#evt_01J8K7E202') as unknown as EventItem;
    expect(receipt).toMatchObject({ tenantId: 'tenant_204', eventType: 'payment.succeeded', keyId: 'key_42', erasedBy: 'e2e-operator' });
    expect(receipt.payloadHmac).toMatch(/^[0-9a-f]{64}$/);
    expect(receipt.consumers.sort()).toEqual(['audit-writer', 'billing-meter', 'risk-evaluator']);
    const audits = items.filter((i) => i.kind === 'audit' && i.action === 'erase') as unknown as AuditItem[];
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({
      operator: 'e2e-operator',
      tenant: 'tenant_204',
      erasureId: done.erasureId,
      outcome: { events: 3, payloadItems: 3, objects: 2, deliveriesQuarantined: 1, alreadyErased: 0 },
    });
  });

  it('quarantines the delivery pending at erasure as payload_erased: never read, never charged, usage unchanged to the unit', async () => {
    stack.resume('audit-writer');
    await stack.drain();
    const rows = await ledgerRows(stack);
    const pending = rows.find((r) => r.pk === 'platform:evt_01J8K7E203#audit-writer') as LedgerItem;
    expect(pending).toMatchObject({ state: 'quarantined', lastErrorCategory: 'payload_erased', tenantId: 'tenant_204', attempt: 0 });
    expect(pending.units).toBeUndefined();
    expect(pending.reads).toEqual([]);
    expect(unitsByTenant(await doneRows(stack))).toEqual(unitsBefore);
    // Every other row is done and kept, with its access log.
    expect(rows.filter((r) => r.state === 'done')).toHaveLength(rows.length - 1);
    expect(rows.find((r) => r.pk === 'platform:evt_01J8K7E201#billing-meter')?.reads).toHaveLength(1);

    const report = await reconcile(
      { ddb: stack.handlers.ddb, tables: stack.resources.tables },
      { from, to: Date.now() + 1, graceMs: 0, consumers: config.consumers.map((c) => c.id) },
    );
    expect(report).toMatchObject({ receipts: 5, quarantined: 1, violations: [] });
  });

  it('traces the erasure, still verifies the body from the keyed hash, and leaves erased events out of replay', async () => {
    const traced = await runCli(['trace', 'evt_01J8K7E201', '--source', 'platform'], config, env);
    expect(traced.code).toBe(0);
    expect(traced.stdout).toMatch(/payload erased \d{4}-\d\d-\d\dT[\d:.]+Z by e2e-operator/);

    const deps = { ddb: stack.handlers.ddb, tables: stack.resources.tables, config, operator: 'e2e-operator' };
    const verified = await verifyPayload(
      { ...deps, payloadHashKey: () => stack.secrets.payloadHashKey() },
      'evt_01J8K7E201',
      Buffer.from(JSON.stringify(EVENTS.small204)),
    );
    expect(verified).toMatchObject({ eventId: 'evt_01J8K7E201', matches: true, hash: 'hmac-sha256' });

    const replayed = await replay(deps, { consumer: 'billing-meter', window: { from, to: Date.now() + 1 }, dryRun: true });
    expect(replayed).toMatchObject({ matched: 2, erased: 3, expired: 0 });
  });

  it("scrubs the failed attempt's message, which quoted the body, from trace and the console's event view: category, attempt and time stay", async () => {
    const traced = await runCli(['trace', 'evt_01J8K7E201', '--source', 'platform', '--json'], config, env);
    expect(traced.code).toBe(0);
    expect(traced.stdout).not.toContain('Zoë Quist');
    const risk = (JSON.parse(traced.stdout) as { deliveries: { consumer: string; errors: ErrorEntry[] }[] }).deliveries.find(
      (d) => d.consumer === 'risk-evaluator',
    );
    expect(risk?.errors).toEqual([{ attempt: 1, category: 'error', message: 'erased', at: failedBefore?.at }]);
    const text = await runCli(['trace', 'evt_01J8K7E201', '--source', 'platform'], config, env);
    expect(text.stdout).toContain(`error   attempt 1 ${iso(failedBefore?.at ?? 0)} error: erased`);
    expect(text.stdout).not.toContain('Zoë Quist');

    let target: Target | undefined;
    try {
      target = await resolveTarget({ config, root: path.dirname(env.HOOKLEDGER_STATE as string), env });
      const view = await handleApi(
        { config, target, operator: 'e2e-operator' },
        { method: 'GET', path: '/event', query: new URLSearchParams({ eventId: 'evt_01J8K7E201', source: 'platform' }), body: {} },
      );
      expect(view.status).toBe(200);
      expect(JSON.stringify(view.body)).not.toContain('Zoë Quist');
      const delivery = (view.body as { deliveries: { consumer: string; errors: ErrorEntry[] }[] }).deliveries.find(
        (d) => d.consumer === 'risk-evaluator',
      );
      expect(delivery?.errors).toEqual([{ attempt: 1, category: 'error', message: 'erased', at: failedBefore?.at }]);
    } finally {
      target?.destroy();
    }
  });

  it('keeps payloads of the 7-day source 7 days: item TTL and the object retention tag', async () => {
    const items = await eventStore();
    const receipt = items.find((i) => i.pk === 'evt#platform#evt_01J8K7E302') as unknown as EventItem;
    expect(receipt.payloadExpiresAt - receipt.receivedAt).toBe(7 * DAY_MS);
    const payload = items.find((i) => i.pk === payloadKey('platform', 'evt_01J8K7E302', receipt.payloadHmac)) as unknown as PayloadItem;
    expect(payload.expiresAt).toBe(Math.floor(receipt.payloadExpiresAt / 1000));

    // The tag the bucket's lifecycle rule for 7 days filters on, as sent to S3 (fauxqs keeps no tags).
    const s3 = localS3Client(stack.endpoints.s3);
    const tags: string[] = [];
    s3.middlewareStack.add(
      (next) => async (args) => {
        const headers = (args.request as { headers?: Record<string, string> }).headers ?? {};
        if (headers['x-amz-tagging']) tags.push(headers['x-amz-tagging']);
        return next(args);
      },
      { step: 'finalizeRequest' },
    );
    const payloads = new Payloads({
      client: stack.handlers.ddb,
      tableName: stack.resources.tables.events,
      blobs: new S3PayloadBlobs({ client: s3, bucket: stack.payloadBucket }),
    });
    const receivedAt = Date.now();
    await payloads.write(
      { source: 'platform', eventId: 'evt_01J8K7E399', payloadHmac: 'a'.repeat(64), receivedAt, payloadExpiresAt: receivedAt + 7 * DAY_MS },
      Buffer.from(filler(900_000)),
    );
    expect(tags).toEqual([`${RETENTION_TAG}=7`]);
    s3.destroy();
    // Gone again, so the tests after this one see only the stack's own payloads.
    expect(await payloads.erase('platform', 'evt_01J8K7E399', 'a'.repeat(64))).toBe(true);
    await blobs.delete(await blobs.list('payloads/platform/evt_01J8K7E399/'));
  });

  it('resumes a stopped run from its checkpoint under the same erasure id and audit item; --event finds an erased event erased', async () => {
    const deps = { ddb: stack.handlers.ddb, tables: stack.resources.tables, config, operator: 'e2e-operator', blobs };
    const window = { from, to: Date.now() + 1 };
    const first = await erase(deps, { tenant: 'tenant_317', window, pageSize: 1, maxPages: 1 });
    expect(first).toMatchObject({ tenant: 'tenant_317', events: 1, payloadItems: 1, objects: 0, complete: false, dryRun: false });
    expect(await payloadEventIds()).toEqual(['evt_01J8K7E302']);

    const second = await erase(deps, { tenant: 'tenant_317', window, pageSize: 1 });
    expect(second).toMatchObject({ events: 2, payloadItems: 2, objects: 2, alreadyErased: 0, complete: true, resumed: true });
    expect(second.erasureId).toBe(first.erasureId);
    expect(await payloadEventIds()).toEqual([]);
    expect(await objectEventIds()).toEqual([]);
    const audits = (await eventStore()).filter((i) => i.kind === 'audit' && i.action === 'erase' && i.tenant === 'tenant_317');
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ erasureId: first.erasureId, outcome: { events: 2, payloadItems: 2, objects: 2 } });

    const one = await runCli(['erase', '--event', 'evt_01J8K7E201', '--source', 'platform', '--dry-run', '--json'], config, env);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ tenant: 'tenant_204', events: 1, alreadyErased: 1, payloadItems: 0, objects: 0 });
  });
});
