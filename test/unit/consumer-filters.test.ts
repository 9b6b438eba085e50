/**
 * Consumer filters in the configuration: validated at synth (a bad pattern names the consumer and the
 * path inside the filter), and applied where intake writes the delivery set (`deliverySet`).
 * Transforms: only on HTTP destinations, a module under transforms/.
 */
import { describe, expect, it } from 'vitest';
import { deliverySet } from '../../core/config/routing';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import { PermanentError } from '../../lambdas/runtime/errors';
import { transformed } from '../../lambdas/runtime/http';

const base = (consumers: HookledgerConfigInput['consumers']): HookledgerConfigInput => ({
  sources: [
    {
      id: 'platform',
      scheme: { type: 'standard-webhooks' },
      attribution: { eventId: { body: 'id' }, eventType: { body: 'type' }, tenantId: { body: 'tenant_id' }, keyId: { body: 'key_id' } },
    },
  ],
  consumers,
});
const usdOver100 = { body: { data: { currency: ['usd'], amount: [{ numeric: ['>=', 100] }] } } };

describe('consumer filter validation at synth', () => {
  it('refuses a numeric bound given as a string, naming the consumer and the path inside the filter', () => {
    const input = base([
      {
        id: 'big-usd',
        subscribes: ['payment.*'],
        fields: ['id'],
        entry: 'lambdas/consumers/audit-writer.ts',
        filter: { body: { data: { amount: [{ numeric: ['>=', '100'] }] } } },
      },
    ]);
    expect(() => defineConfig(input)).toThrow(
      /consumers\[id=big-usd\]\.filter\.body\.data\.amount\[0\]\.numeric \(value \[">=","100"\]\): numeric must be \[op, number\]/,
    );
  });
  it('refuses a misspelt envelope field (tenantID) with the list of fields a filter matches', () => {
    const input = base([
      {
        id: 'eu-only',
        subscribes: ['*'],
        fields: ['id'],
        entry: 'lambdas/consumers/audit-writer.ts',
        filter: { tenantID: ['tenant_204'] },
      },
    ]);
    expect(() => defineConfig(input)).toThrow(
      /consumers\[id=eu-only\]\.filter\.tenantID \(value \["tenant_204"\]\): unknown field: a filter matches source, type, tenantId, keyId, body or \$or/,
    );
  });
  it('accepts the issue example and keeps it as written', () => {
    const config = defineConfig(
      base([{ id: 'big-usd', subscribes: ['payment.*'], fields: ['id'], entry: 'lambdas/consumers/audit-writer.ts', filter: usdOver100 }]),
    );
    expect(config.consumers[0]?.filter).toEqual(usdOver100);
  });
});

describe('deliverySet: subscription and filter, decided at intake', () => {
  const config = defineConfig(
    base([
      { id: 'billing-meter', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/billing-meter.ts' },
      { id: 'big-usd', subscribes: ['payment.*'], fields: ['id'], entry: 'lambdas/consumers/audit-writer.ts', filter: usdOver100 },
      {
        id: 'not-tenant-311',
        subscribes: ['*'],
        fields: ['id'],
        entry: 'lambdas/consumers/audit-writer.ts',
        filter: { tenantId: [{ 'anything-but': 'tenant_311' }] },
      },
    ]),
  );
  const evt = (type: string, tenantId: string, data: unknown) => ({
    source: 'platform',
    type,
    tenantId,
    keyId: 'key_7',
    body: { id: 'evt_1', data },
  });
  it('names big-usd for a usd payment of 100 and 250, not for 99.99, eur, a missing amount or the string "150"', () => {
    expect(deliverySet(config, evt('payment.succeeded', 'tenant_204', { currency: 'usd', amount: 100 }))).toEqual([
      'billing-meter',
      'big-usd',
      'not-tenant-311',
    ]);
    expect(deliverySet(config, evt('payment.succeeded', 'tenant_204', { currency: 'usd', amount: 250 }))).toContain('big-usd');
    for (const data of [
      { currency: 'usd', amount: 99.99 },
      { currency: 'eur', amount: 500 },
      { currency: 'usd' },
      { currency: 'usd', amount: '150' },
    ]) {
      expect(deliverySet(config, evt('payment.succeeded', 'tenant_204', data))).toEqual(['billing-meter', 'not-tenant-311']);
    }
  });
  it('the filter never widens the subscription: invoice.paid with a usd amount of 500 skips big-usd', () => {
    expect(deliverySet(config, evt('invoice.paid', 'tenant_311', { currency: 'usd', amount: 500 }))).toEqual(['billing-meter']);
  });
});

describe('transform validation at synth', () => {
  it('refuses a transform on a lambda consumer', () => {
    const input = base([
      { id: 'crm', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/audit-writer.ts', transform: 'transforms/crm.ts' },
    ]);
    expect(() => defineConfig(input)).toThrow(
      /consumers\[id=crm\]\.transform \(value "transforms\/crm.ts"\): transform applies to kind: 'http' consumers only/,
    );
  });
  it('refuses a transform path outside transforms/', () => {
    const input = base([
      { id: 'crm', kind: 'http', url: 'https://crm.example.com/hooks', subscribes: ['*'], fields: ['id'], transform: '../secrets.ts' },
    ]);
    expect(() => defineConfig(input)).toThrow(
      /consumers\[id=crm\]\.transform \(value "..\/secrets.ts"\): transform must be transforms\/<name>.ts/,
    );
  });
});

describe('the transform step before signing (lambdas/runtime/http.ts transformed)', () => {
  const delivery = (payload: Record<string, unknown>) =>
    ({
      attribution: {
        source: 'platform',
        eventId: 'evt_01J8K7TR01',
        eventType: 'payment.succeeded',
        tenantId: 'tenant_204',
        keyId: 'key_42',
      },
      consumerId: 'crm-sync',
      payload,
      attempt: 1,
      idempotencyKey: 'platform:evt_01J8K7TR01#crm-sync',
      keyStatus: async () => 'active' as const,
      logger: undefined as never,
    }) as Parameters<typeof transformed>[1];

  it('passes eventId, eventType, tenantId, keyId and the narrowed payload, and returns body (with its JSON) and headers', async () => {
    const out = await transformed(
      ({ eventId, tenantId, keyId, payload }) => ({
        body: { ref: eventId, t: tenantId, k: keyId, amount: payload.amount },
        headers: { 'x-account': tenantId },
      }),
      delivery({ amount: 4200 }),
    );
    expect(out).toEqual({
      body: { ref: 'evt_01J8K7TR01', t: 'tenant_204', k: 'key_42', amount: 4200 },
      json: '{"ref":"evt_01J8K7TR01","t":"tenant_204","k":"key_42","amount":4200}',
      headers: { 'x-account': 'tenant_204' },
    });
  });
  it('quarantines (PermanentError transform_failed) a transform that throws, with its message', async () => {
    const error = await transformed(() => {
      throw new Error('no CRM account for tenant_204');
    }, delivery({})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentError);
    expect(error).toMatchObject({ category: 'transform_failed', message: 'transform threw: no CRM account for tenant_204' });
  });
  it('quarantines (transform_invalid) a result that would forge the signature header or has no body', async () => {
    const forged = await transformed(() => ({ body: {}, headers: { 'Webhook-Signature': 'v1,forged' } }), delivery({})).catch(
      (e: unknown) => e,
    );
    expect(forged).toMatchObject({
      category: 'transform_invalid',
      message: "transform header Webhook-Signature is hookledger's own and cannot be set",
    });
    const empty = await transformed(() => ({}) as never, delivery({})).catch((e: unknown) => e);
    expect(empty).toMatchObject({ category: 'transform_invalid', message: 'transform must return { body, headers? }' });
    const split = await transformed(() => ({ body: 1, headers: { 'x-a': 'v\r\nx-injected: 1' } }), delivery({})).catch((e: unknown) => e);
    expect(split).toMatchObject({
      category: 'transform_invalid',
      message: 'transform header x-a: its value has a control character at index 1; line breaks and other controls cannot be sent',
    });
  });
});
