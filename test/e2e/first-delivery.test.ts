import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack';
import { platformEvent } from '../support/factories';
import { doneRows, send, startTestStack, unitsByTenant } from '../support/stack';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

describe('first delivery on the local stack', () => {
  it('accepts a signed payment.succeeded and all three consumers acknowledge it: three rows for tenant_204', async () => {
    const res = await send(stack, platformEvent({ id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204', key_id: 'key_42' }));
    expect(res).toEqual({ status: 202, body: { event_id: 'evt_01J8K7M2Q4', deliveries: 3 } });
    await stack.drain();
    const rows = await doneRows(stack);
    expect(rows.map((r) => r.consumerId).sort()).toEqual(['audit-writer', 'billing-meter', 'risk-evaluator']);
    expect(rows.every((r) => r.tenantId === 'tenant_204' && r.keyId === 'key_42' && r.eventId === 'evt_01J8K7M2Q4')).toBe(true);
    // billing-meter 5 (payment.succeeded) + audit-writer 1 + risk-evaluator 1 (scored, below review threshold)
    expect(unitsByTenant(rows)).toEqual({ tenant_204: 7 });
    expect(rows.find((r) => r.consumerId === 'risk-evaluator')?.principal).toBe(
      'arn:aws:iam::000000000000:role/hookledger-local-risk-evaluator',
    );
  });
});
