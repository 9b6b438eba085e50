/**
 * CSV injection (OWASP): a tenant id is whatever the provider signed, so an invoice CSV opened in a
 * spreadsheet must never run one as a formula. Tenant ids that spell formulas go through intake over
 * HTTP, are delivered, and come out of `hookledger usage --format csv` as text.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import config from '../../hookledger.config';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { iso } from '../../ops/time';
import { runCli } from '../support/cli';
import { platformEvent } from '../support/factories';
import { send, startTestStack } from '../support/stack';

const FORMULAS = [
  ['evt_01J8K7X001', '=HYPERLINK("http://x")'],
  ['evt_01J8K7X002', '@SUM(A1)'],
  ['evt_01J8K7X003', '+1'],
  ['evt_01J8K7X004', '-1'],
  ['evt_01J8K7X005', 'tenant_204'],
] as const;

let stack: LocalStack;
let statePath: string;
let from: number;

beforeAll(async () => {
  stack = await startTestStack();
  statePath = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-usage-csv-')), 'state.json');
  await writeState(statePath, stackState(stack, null));
  from = Date.now() - 60_000;
  for (const [id, tenant] of FORMULAS) {
    expect((await send(stack, platformEvent({ id, tenant_id: tenant }))).status).toBe(202);
  }
  await stack.drain();
}, 120_000);
afterAll(() => stack?.stop());

describe('usage --format csv on the local stack', () => {
  it('writes tenant ids that spell formulas (=HYPERLINK, @SUM, +1, -1) as text cells, quote-prefixed', async () => {
    const to = Date.now() + 60_000;
    const window = `${iso(from)},${iso(to)}`;
    const result = await runCli(['usage', '--from', iso(from), '--to', iso(to), '--consumer', 'billing-meter', '--format', 'csv'], config, {
      USER: 'e2e',
      HOOKLEDGER_STATE: statePath,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\r\n').sort()).toEqual(
      [
        '',
        `${window},"'+1",billing-meter,5,1`,
        `${window},"'-1",billing-meter,5,1`,
        `${window},"'=HYPERLINK(""http://x"")",billing-meter,5,1`,
        `${window},"'@SUM(A1)",billing-meter,5,1`,
        `${window},tenant_204,billing-meter,5,1`,
        'window_from,window_to,tenant_id,consumer_id,units,deliveries',
      ].sort(),
    );
  });
});
