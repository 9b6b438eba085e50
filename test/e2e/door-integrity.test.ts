/**
 * Integrity at the door, end to end through HTTP on the local stack: a real GitHub delivery with the
 * configuration docs/configuration.md shows (numeric installation.id), its replay under new unsigned headers, the same
 * event id with other bytes, and retention enforced while TTL has not deleted anything.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanAll } from '../../adapters/table-scan';
import { defineConfig } from '../../core/config/schema';
import { signatureHeaders } from '../../core/schemes';
import baseConfig from '../../hookledger.config';
import type { LocalStack } from '../../local/stack';
import { replay } from '../../ops/replay';
import { trace } from '../../ops/trace';
import { platformEvent, signedHeaders } from '../support/factories';
import { GITHUB_SOURCE } from '../support/provider-sources';
import { doneRows, ledgerRows, send, startTestStack } from '../support/stack';

const config = defineConfig({ ...baseConfig, sources: [...baseConfig.sources, GITHUB_SOURCE] });
const GITHUB_BODY = readFileSync(path.join(import.meta.dirname, '../fixtures/github/issues-opened.json'));
const DAY = 86_400_000;

let stack: LocalStack;
let offset = 0;
beforeAll(async () => {
  stack = await startTestStack({ config, clock: () => Date.now() + offset });
});
afterAll(() => stack?.stop());

const deps = () => ({
  ddb: stack.handlers.ddb,
  tables: stack.resources.tables,
  config,
  operator: 'door-test',
  clock: () => Date.now() + offset,
});

async function postGithub(delivery: string, event: string, hookId = '501873942') {
  const secret = (await stack.secrets.get('github')).current;
  const res = await fetch(stack.webhookUrl('github'), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/3f3b3d2',
      'x-github-delivery': delivery,
      'x-github-event': event,
      'x-github-hook-id': hookId,
      'x-github-hook-installation-target-type': 'integration',
      ...signatureHeaders({ type: 'github' }, { body: GITHUB_BODY, secret, now: Date.now(), messageId: delivery }),
    },
    body: GITHUB_BODY,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('a real GitHub delivery with the documented configuration', () => {
  it('is recorded under installation.id 48213907 and acknowledged by both subscribed consumers', async () => {
    const res = await postGithub('9a1f3c20-cd4e-11ef-8f5e-2b7d1c6a0e41', 'issues');
    expect(res).toEqual({ status: 202, body: { event_id: '9a1f3c20-cd4e-11ef-8f5e-2b7d1c6a0e41', deliveries: 2 } });
    await stack.drain();
    const rows = (await doneRows(stack)).filter((r) => r.source === 'github');
    expect(rows.map((r) => [r.consumerId, r.tenantId, r.keyId, r.eventType, r.units]).sort()).toEqual([
      ['audit-writer', '48213907', '501873942', 'issues', 1],
      ['billing-meter', '48213907', '501873942', 'issues', 1],
    ]);
  });

  it('re-sent with a new delivery id, a payment event type and another hook id, it changes nothing', async () => {
    const before = await ledgerRows(stack);
    const replays = [
      await postGithub('0c9e1d55-0000-4000-8000-00000000a001', 'payment.succeeded'),
      await postGithub('0c9e1d55-0000-4000-8000-00000000a002', 'issues', '7'),
    ];
    expect(replays).toEqual([
      { status: 200, body: { status: 'duplicate', event_id: '9a1f3c20-cd4e-11ef-8f5e-2b7d1c6a0e41' } },
      { status: 200, body: { status: 'duplicate', event_id: '9a1f3c20-cd4e-11ef-8f5e-2b7d1c6a0e41' } },
    ]);
    await stack.drain();
    expect(await ledgerRows(stack)).toEqual(before);
    expect(stack.intakeOutcomes()).toMatchObject({ recorded: 1, duplicate_body: 2 });
  });
});

describe('the same event id with other bytes', () => {
  it('answers 200 duplicate_conflict, bills nothing more, and trace shows the attempt', async () => {
    const first = await send(stack, platformEvent({ id: 'evt_01J8K7DC01', tenant_id: 'tenant_204' }));
    expect(first.status).toBe(202);
    await stack.drain();
    const forged = await send(stack, platformEvent({ id: 'evt_01J8K7DC01', tenant_id: 'tenant_311', type: 'payment.refunded' }), {
      msgId: 'msg_forged',
    });
    expect(forged).toEqual({ status: 200, body: { status: 'duplicate_conflict', event_id: 'evt_01J8K7DC01' } });
    await stack.drain();
    const rows = (await doneRows(stack)).filter((r) => r.eventId === 'evt_01J8K7DC01');
    expect(rows.map((r) => [r.consumerId, r.tenantId, r.units]).sort()).toEqual([
      ['audit-writer', 'tenant_204', 1],
      ['billing-meter', 'tenant_204', 5],
      ['risk-evaluator', 'tenant_204', expect.any(Number)],
    ]);
    const report = await trace(deps(), 'evt_01J8K7DC01');
    expect(report.receipt.tenantId).toBe('tenant_204');
    expect(report.conflicts.count).toBe(1);
    expect(report.conflicts.entries[0]).toMatchObject({ secretVersion: 'current', payloadHmac: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(report.conflicts.entries[0]!.payloadHmac).not.toBe(report.receipt.payloadHash.slice('hmac-sha256:'.length));
    expect(stack.intakeOutcomes()).toMatchObject({ duplicate_conflict: 1 });
  });
});

/** Every item of the event store (receipts, payloads, claims, audit), read consistently. */
const eventItems = () =>
  scanAll<Record<string, unknown>>(stack.handlers.ddb, { TableName: stack.resources.tables.events, ConsistentRead: true });

describe('the unsigned Content-Type', () => {
  it("refuses a JSON source's signed body re-sent as application/x-www-form-urlencoded (415): no second event, nothing billed to tenant_VICTIM", async () => {
    // The free text of a signed JSON event carries form fields; read as a form, they would name
    // another event id and another tenant.
    const event = platformEvent({
      id: 'evt_01J8K7CT01',
      data: { amount: 4200, currency: 'eur', note: 'thanks&id=evt_X&tenant_id=tenant_VICTIM&type=payment.succeeded&key_id=key_42&z=' },
    });
    const body = JSON.stringify(event);
    const secret = (await stack.secrets.get('platform')).current;
    const headers = signedHeaders(body, { secret, at: Date.now(), msgId: 'msg_01J8K7CT01' });
    const receiptsBefore = (await eventItems()).filter((i) => i.kind === 'event').length;

    const first = await fetch(stack.webhookUrl('platform'), { method: 'POST', headers, body });
    expect([first.status, await first.json()]).toEqual([202, { event_id: 'evt_01J8K7CT01', deliveries: 3 }]);
    const itemsAfterFirst = (await eventItems()).length;

    const resent = await fetch(stack.webhookUrl('platform'), {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    expect(resent.status).toBe(415);
    expect(await resent.json()).toEqual({
      error: 'unsupported_media_type',
      message: expect.stringMatching(/Content-Type application\/x-www-form-urlencoded.*source "platform" reads its body as JSON/),
    });
    await stack.drain();

    const items = await eventItems();
    expect(items).toHaveLength(itemsAfterFirst);
    expect(items.filter((i) => i.kind === 'event')).toHaveLength(receiptsBefore + 1);
    expect(items.filter((i) => i.eventId === 'evt_X' || i.tenantId === 'tenant_VICTIM')).toEqual([]);
    const rows = await ledgerRows(stack);
    expect(rows.filter((r) => r.tenantId === 'tenant_VICTIM' || r.eventId === 'evt_X')).toEqual([]);
    expect(
      rows
        .filter((r) => r.eventId === 'evt_01J8K7CT01')
        .map((r) => [r.consumerId, r.tenantId, r.state])
        .sort(),
    ).toEqual([
      ['audit-writer', 'tenant_204', 'done'],
      ['billing-meter', 'tenant_204', 'done'],
      ['risk-evaluator', 'tenant_204', 'done'],
    ]);
    expect(stack.intakeOutcomes()).toMatchObject({ unsupported_media_type: 1 });
  });
});

describe('retention', () => {
  it('never serves a payload past retention: the queued delivery is quarantined, replay refuses, though TTL deleted nothing', async () => {
    await stack.pause('risk-evaluator');
    const res = await send(stack, platformEvent({ id: 'evt_01J8K7RT01' }));
    expect(res.status).toBe(202);
    await stack.drain();
    offset = 31 * DAY; // the payload's retention (30 days) has passed; DynamoDB Local's TTL runs on the real clock
    stack.resume('risk-evaluator');
    await stack.drain();
    const row = (await ledgerRows(stack)).find((r) => r.eventId === 'evt_01J8K7RT01' && r.consumerId === 'risk-evaluator');
    expect(row).toMatchObject({ state: 'quarantined', lastErrorCategory: 'payload_expired', tenantId: 'tenant_204' });
    expect(row?.units).toBeUndefined();
    await expect(replay(deps(), { consumer: 'billing-meter', event: { eventId: 'evt_01J8K7RT01' } })).rejects.toThrow(
      /event evt_01J8K7RT01: its payload passed retention at .* and is never served again/,
    );
    const report = await trace(deps(), 'evt_01J8K7RT01');
    expect(report.receipt.payload).toBe('expired');
    offset = 0;
  });
});
