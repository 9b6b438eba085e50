/**
 * Tenant-scoped keys end to end: two tenants, two keys; a key revoked while its event waits in a
 * stopped consumer's queue changes no attribution, and the handler declines the new action.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { keyRegistryKey } from '../../core/model';
import baseConfig from '../../hookledger.config';
import type { LocalStack } from '../../local/stack';
import { platformEvent } from '../support/factories';
import { ledgerRows, send, startTestStack } from '../support/stack';

const config = defineConfig({ ...baseConfig, sources: baseConfig.sources.map((s) => ({ ...s, enforceKeyRegistry: true })) });

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack({ config });
  for (const [keyId, tenantId] of [
    ['key_42', 'tenant_204'],
    ['key_77', 'tenant_311'],
  ] as const) {
    await stack.handlers.ddb.send(
      new PutCommand({
        TableName: stack.resources.tables.events,
        Item: { pk: keyRegistryKey(keyId), kind: 'key', keyId, tenantId, status: 'active', createdAt: Date.now() },
      }),
    );
  }
});
afterAll(() => stack?.stop());

const eventsStored = async (source: string, id: string) =>
  (await stack.handlers.ddb.send(new GetCommand({ TableName: stack.resources.tables.events, Key: { pk: `evt#${source}#${id}` } }))).Item;

describe('tenant keys on the local stack', () => {
  it('refuses an unknown key and a key of another tenant with 403, storing nothing', async () => {
    const unknown = await send(stack, platformEvent({ id: 'evt_01J8K7Q900', key_id: 'key_404' }));
    expect(unknown.status).toBe(403);
    expect(unknown.body.error).toBe('unknown_key');
    const foreign = await send(stack, platformEvent({ id: 'evt_01J8K7Q901', tenant_id: 'tenant_204', key_id: 'key_77' }));
    expect(foreign).toEqual({
      status: 403,
      body: { error: 'key_tenant_mismatch', message: 'key_id key_77 does not belong to tenant tenant_204' },
    });
    expect(await eventsStored('platform', 'evt_01J8K7Q900')).toBeUndefined();
    expect(await eventsStored('platform', 'evt_01J8K7Q901')).toBeUndefined();
  });

  it('charges the captured tenant after a revocation while queued, and the handler declines the new action', async () => {
    await stack.pause('risk-evaluator');
    const large = { amount: 250_000, currency: 'eur' };
    expect(
      (await send(stack, platformEvent({ id: 'evt_01J8K7Q001', tenant_id: 'tenant_204', key_id: 'key_42', data: large }))).status,
    ).toBe(202);
    expect(
      (await send(stack, platformEvent({ id: 'evt_01J8K7Q002', tenant_id: 'tenant_311', key_id: 'key_77', data: large }))).status,
    ).toBe(202);
    await stack.drain();
    // key_42 is revoked while its event waits in risk-evaluator's stopped queue.
    await stack.handlers.ddb.send(
      new UpdateCommand({
        TableName: stack.resources.tables.events,
        Key: { pk: keyRegistryKey('key_42') },
        UpdateExpression: 'SET #s = :revoked, revokedAt = :now',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':revoked': 'revoked', ':now': Date.now() },
      }),
    );
    stack.resume('risk-evaluator');
    await stack.drain();

    const rows = (await ledgerRows(stack)).filter((r) => r.eventId === 'evt_01J8K7Q001' || r.eventId === 'evt_01J8K7Q002');
    const risk204 = rows.find((r) => r.eventId === 'evt_01J8K7Q001' && r.consumerId === 'risk-evaluator');
    const risk311 = rows.find((r) => r.eventId === 'evt_01J8K7Q002' && r.consumerId === 'risk-evaluator');
    expect(risk204).toMatchObject({
      state: 'done',
      tenantId: 'tenant_204',
      keyId: 'key_42',
      outcome: 'action_declined_key_revoked',
      units: 1,
    });
    expect(risk311).toMatchObject({ state: 'done', tenantId: 'tenant_311', keyId: 'key_77', outcome: 'hold_placed', units: 2 });
    const totals: Record<string, number> = {};
    for (const r of rows) totals[r.tenantId] = (totals[r.tenantId] ?? 0) + (r.units ?? 0);
    expect(totals).toEqual({ tenant_204: 5 + 1 + 1, tenant_311: 5 + 1 + 2 });
  });

  it('still records an event that names an already revoked key, attributed to the tenant captured at intake', async () => {
    const res = await send(
      stack,
      platformEvent({ id: 'evt_01J8K7Q003', tenant_id: 'tenant_204', key_id: 'key_42', type: 'scoped_key.revoked' }),
    );
    expect(res).toEqual({ status: 202, body: { event_id: 'evt_01J8K7Q003', deliveries: 3 } });
    await stack.drain();
    const rows = (await ledgerRows(stack)).filter((r) => r.eventId === 'evt_01J8K7Q003');
    expect(rows.map((r) => [r.consumerId, r.tenantId, r.state]).sort()).toEqual([
      ['audit-writer', 'tenant_204', 'done'],
      ['billing-meter', 'tenant_204', 'done'],
      ['risk-evaluator', 'tenant_204', 'done'],
    ]);
  });
});
