/**
 * Activity counts duplicates per source per bucket (issue 40 item 1), from what intake records, on
 * one local stack with two sources: evt_01J8K7M2Q4 sent three times to platform (1 event, 2
 * duplicates) and evt_01J8K7M2Q5 once to partner. ops/activity and the console's /api/activity give
 * the same numbers, for a from/to window and for the `1h` preset. The stack's clock is set to the
 * fifth second of a minute, so every send of the test falls in that minute's bucket.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveConsole } from '../../console/serve';
import { TOKEN_HEADER } from '../../console/server';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import { HOUR_MS, MINUTE_MS } from '../../core/model';
import defaultConfig from '../../hookledger.config';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { activity } from '../../ops/activity';
import { send, startTestStack } from '../support/stack';

const REPEATED = 'evt_01J8K7M2Q4';
const OTHER = 'evt_01J8K7M2Q5';

let stack: LocalStack;
let console_: Awaited<ReturnType<typeof serveConsole>>;
let config: HookledgerConfig;
/** The minute every send of this file falls in, on the stack's clock. */
let minute: number;

const payment = (id: string) => ({
  id,
  type: 'payment.succeeded',
  tenant_id: 'tenant_204',
  key_id: 'key_42',
  created: 1_764_633_600,
  data: { amount: 4200, currency: 'eur' },
});

beforeAll(async () => {
  const platform = defaultConfig.sources.find((s) => s.id === 'platform');
  config = defineConfig({
    sources: [...defaultConfig.sources, { ...platform, id: 'partner' } as (typeof defaultConfig.sources)[number]],
    consumers: defaultConfig.consumers.filter((c) => c.id === 'audit-writer'),
    retention: defaultConfig.retention,
  });
  const realStart = Date.now();
  minute = Math.floor(realStart / MINUTE_MS) * MINUTE_MS;
  const offset = minute + 5_000 - realStart;
  stack = await startTestStack({ config, handles: { 'audit-writer': async () => ({ units: 1 }) }, clock: () => Date.now() + offset });
  const statePath = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-activity-')), 'state.json');
  await writeState(statePath, stackState(stack, null));
  console_ = await serveConsole({
    config,
    root: path.dirname(statePath),
    env: { HOOKLEDGER_STATE: statePath },
    operator: 'ops-activity (console)',
    warn: () => undefined,
  });
  expect((await send(stack, payment(REPEATED))).status).toBe(202);
  // The provider retries it twice with the same bytes: answered 200 duplicate, nothing stored again.
  expect((await send(stack, payment(REPEATED))).body).toMatchObject({ status: 'duplicate', event_id: REPEATED });
  expect((await send(stack, payment(REPEATED))).body).toMatchObject({ status: 'duplicate', event_id: REPEATED });
  expect((await send(stack, payment(OTHER), { source: 'partner' })).status).toBe(202);
}, 90_000);
afterAll(async () => {
  await console_?.close();
  await stack?.stop();
});

async function api(query: string) {
  const res = await fetch(`${console_.origin}/api/activity?${query}`, { headers: { [TOKEN_HEADER]: console_.token } });
  expect(res.status).toBe(200);
  return (await res.json()) as Awaited<ReturnType<typeof activity>>;
}

/** One count at `index` of `n` buckets, zeros elsewhere. */
const only = (n: number, index: number, count: number) => Array.from({ length: n }, (_, i) => (i === index ? count : 0));

describe('Activity: duplicates per source per bucket', () => {
  it(`counts ${REPEATED} as 1 received and 2 duplicates for platform, and ${OTHER} as 1 and 0 for partner, in its minute's bucket`, async () => {
    const window = { from: minute + MINUTE_MS - HOUR_MS, to: minute + MINUTE_MS };
    const deps = { ddb: stack.handlers.ddb, tables: stack.resources.tables, config };
    const report = await activity(deps, window);
    expect(report.bucketMs).toBe(MINUTE_MS);
    expect(report.sources).toEqual([
      { source: 'platform', received: only(60, 59, 1), total: 1, duplicates: only(60, 59, 2), duplicateTotal: 2 },
      { source: 'partner', received: only(60, 59, 1), total: 1, duplicates: only(60, 59, 0), duplicateTotal: 0 },
    ]);
    // O(window): one item per source and hour the window touches, asked for whether it exists or not.
    const hours = new Set([window.from, window.to - 1].map((at) => Math.floor(at / HOUR_MS))).size;
    expect(report.read).toMatchObject({ receiptsRead: 2, duplicateKeysRequested: 2 * hours, duplicateItemsRead: 1 });

    const answered = await api(`from=${new Date(window.from).toISOString()}&to=${new Date(window.to).toISOString()}`);
    expect(answered.sources).toEqual(report.sources);
  });

  it('gives the same counts for the last hour preset, whose buckets start on whole minutes', async () => {
    const answered = await api('preset=1h');
    expect(answered.from % MINUTE_MS).toBe(0);
    expect(answered.to - answered.from).toBe(HOUR_MS);
    const index = (minute - answered.from) / MINUTE_MS;
    expect(answered.sources.map((s) => [s.source, s.received[index], s.duplicates[index], s.total, s.duplicateTotal])).toEqual([
      ['platform', 1, 2, 1, 2],
      ['partner', 1, 0, 1, 0],
    ]);
  });
});
