/**
 * Backfill with a consumer filter, on DynamoDB Local: the filter is matched against each stored body,
 * and a body kept in the payload bucket (which this target names no bucket for) is left out and counted, never
 * guessed into or out of the delivery set.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { payloadKey } from '../../core/model';
import { backfill } from '../../ops/backfill';
import { filterTest } from '../../ops/filters';
import { config as baseConfig, freshStack, HOUR, OPERATOR, type OpsEnv, SOURCE, startOpsEnv, T0 } from './support';

const config = defineConfig({
  ...baseConfig,
  consumers: [
    ...baseConfig.consumers,
    {
      id: 'eur-only',
      subscribes: ['payment.*'],
      fields: ['id'],
      entry: 'lambdas/consumers/audit-writer.ts',
      filter: { tenantId: [{ 'anything-but': 'tenant_311' }], body: { data: { currency: ['eur'] } } },
    },
  ],
} as Parameters<typeof defineConfig>[0]);

let env: OpsEnv;
beforeAll(async () => {
  env = await startOpsEnv();
}, 60_000);
afterAll(() => env?.stop());

describe('backfill --consumer with a filter', () => {
  it('adds eur-only to the tenant_204 receipt, filters out tenant_311, and counts the body in the bucket as unreadable', async () => {
    const stack = await freshStack(env, config);
    // Stored before eur-only existed: their delivery sets lack it. Every seeded body is { currency: 'eur' }.
    for (const [eventId, tenant] of [
      ['evt_01J8FB0204', 'tenant_204'],
      ['evt_01J8FB0311', 'tenant_311'],
      ['evt_01J8FBBIG1', 'tenant_204'],
    ] as const) {
      await stack.seed.receipt({
        eventId,
        tenant,
        receivedAt: T0 + 60_000,
        consumers: ['billing-meter', 'audit-writer', 'risk-evaluator'],
      });
    }
    // evt_01J8FBBIG1's body was large: its payload item points at the bucket instead of holding it.
    const big = (await stack.store.receiptAdmin.findReceipts('evt_01J8FBBIG1', [SOURCE]))[0]!;
    await stack.ddb.send(
      new UpdateCommand({
        TableName: stack.tables.events,
        Key: { pk: payloadKey(SOURCE, big.eventId, big.payloadHmac) },
        UpdateExpression: 'SET s3Key = :k REMOVE body',
        ExpressionAttributeValues: { ':k': `payloads/${big.payloadHmac}` },
      }),
    );
    const deps = { ddb: stack.ddb, tables: stack.tables, config, operator: OPERATOR, clock: () => T0 + HOUR };
    const window = { from: T0, to: T0 + HOUR };

    const dry = await backfill(deps, { consumer: 'eur-only', ...window, dryRun: true });
    expect(dry).toMatchObject({ matched: 1, filteredOut: 1, unreadable: 1, expired: 0, added: 0 });
    expect(await filterTest(deps, { consumer: 'eur-only', eventId: 'evt_01J8FB0311' })).toMatchObject({
      matched: false,
      decidedBy: 'tenantId',
      reason: 'value "tenant_311" matches none of [{"anything-but":"tenant_311"}]',
    });
    await expect(filterTest(deps, { consumer: 'eur-only', eventId: 'evt_01J8FBBIG1' })).rejects.toThrow(
      /the body of evt_01J8FBBIG1 is in the payload bucket \(\d+ bytes\), which this target names no bucket for/,
    );

    const done = await backfill(deps, { consumer: 'eur-only', ...window });
    expect(done).toMatchObject({ matched: 1, added: 1, alreadyPresent: 0 });
    const sets = await Promise.all(
      ['evt_01J8FB0204', 'evt_01J8FB0311', 'evt_01J8FBBIG1'].map(
        async (id) => (await stack.store.receiptAdmin.findReceipts(id, [SOURCE]))[0]?.consumers,
      ),
    );
    expect(sets).toEqual([
      ['billing-meter', 'audit-writer', 'risk-evaluator', 'eur-only'],
      ['billing-meter', 'audit-writer', 'risk-evaluator'],
      ['billing-meter', 'audit-writer', 'risk-evaluator'],
    ]);
    // Run again: nothing left to add, nothing charged twice.
    expect(await backfill(deps, { consumer: 'eur-only', ...window })).toMatchObject({ matched: 0, added: 0 });
  }, 60_000);
});
