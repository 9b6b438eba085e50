/**
 * Events in Chromium as an operator works them (issue 40, items 2-4), on one local stack: a type
 * wildcard and an event id prefix find exactly their events, a search that cannot match says why,
 * every filter lives in the address (reload and Back restore it), `Live` shows an event sent after
 * the page loaded, `Replay matching` replays exactly the matching deliveries of the chosen consumer
 * (audited, no usage added), and a redrive links to the events quarantined again.
 *
 *   evt_01J8K7M2Q4  payment.succeeded   tenant_204
 *   evt_01J8K7M2R5  payment.refunded    tenant_311
 *   evt_01J8K7M2S6  customer.updated    tenant_311
 *   evt_01J8K7N3A1  payment.succeeded   tenant_311
 *   evt_01J8K7N3B2  scoped_key.created  tenant_204
 */
// biome-ignore-all lint/performance/useDomNodeTextContent: Playwright's locator.innerText is what a person sees
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanAll } from '../../adapters/table-scan';
import { usage } from '../../ops/usage';
import { ledgerRows, send } from '../support/stack';
import { type ConsoleStack, poisoned, sendPoisoned, startConsoleStack } from './support';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const EVENTS = [
  ['evt_01J8K7M2Q4', 'payment.succeeded', 'tenant_204'],
  ['evt_01J8K7M2R5', 'payment.refunded', 'tenant_311'],
  ['evt_01J8K7M2S6', 'customer.updated', 'tenant_311'],
  ['evt_01J8K7N3A1', 'payment.succeeded', 'tenant_311'],
  ['evt_01J8K7N3B2', 'scoped_key.created', 'tenant_204'],
] as const;
const PAYMENTS = ['evt_01J8K7N3A1', 'evt_01J8K7M2R5', 'evt_01J8K7M2Q4'];

let env: ConsoleStack;
let browser: Browser;
let page: Page;
let t0: number;

const sendEvent = (id: string, type: string, tenant: string) =>
  send(env.stack, {
    id,
    type,
    tenant_id: tenant,
    key_id: tenant === 'tenant_204' ? 'key_42' : 'key_77',
    created: Math.floor(Date.now() / 1000),
    data: { amount: 4200, currency: 'eur', card_last4: '4242' },
  });

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: apt-get install chromium (.ci/run does)`);
  [env, browser] = await Promise.all([
    startConsoleStack(),
    chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] }),
  ]);
  t0 = Date.now() - 1000;
  for (const [id, type, tenant] of EVENTS) await sendEvent(id, type, tenant);
  await env.stack.drain();
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  page = await context.newPage();
  await page.goto(env.console.url);
  await page.getByRole('heading', { name: 'Events' }).waitFor();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
});

/** The event ids the Events table lists, in its order. */
const listed = async () => page.locator('table tbody tr td:nth-child(2)').allInnerTexts();
/** Polls for longer than expect.poll's 1 s: 2 cores are shared by the whole suite. */
const poll = <T>(probe: () => Promise<T>) => expect.poll(probe, { timeout: 10_000 });
const count = () => page.locator('p[role="status"]').first().innerText();

async function search(fields: Record<string, string>) {
  for (const [label, value] of Object.entries(fields)) await page.getByLabel(label, { exact: true }).fill(value);
  await page.getByRole('button', { name: 'Search events' }).click();
}

describe('Events: search that finds', () => {
  it('Type payment.* finds the three payment events and no other type', async () => {
    await search({ Type: 'payment.*' });
    await poll(count).toMatch(/^3 events received in/);
    await poll(listed).toEqual(PAYMENTS);
  });

  it('an event id prefix of 6 characters or more finds the events whose id starts with it', async () => {
    await page.goto(`${env.console.origin}/#/events`);
    await search({ Type: '', Search: 'evt_01J8K7M2' });
    await poll(count).toMatch(/^3 events whose id starts with evt_01J8K7M2 received in/);
    await poll(listed).toEqual(['evt_01J8K7M2S6', 'evt_01J8K7M2R5', 'evt_01J8K7M2Q4']);
  });

  it('a search that cannot match says why: a prefix under 6 characters, a wildcard not at the end', async () => {
    await search({ Search: 'evt_0' });
    await poll(() => page.getByRole('alert').innerText()).toBe(
      'An event id prefix needs at least 6 characters to search by (got "evt_0", 5).',
    );
    await search({ Search: '', Type: 'pay*.succeeded' });
    await poll(() => page.getByRole('alert').innerText()).toBe(
      'Type "pay*.succeeded" cannot match: a wildcard matches only at the end (payment.*).',
    );
  });

  it('writes every filter to the address: reload and Back restore the search', async () => {
    await page.goto(`${env.console.origin}/#/events`);
    await search({ Type: 'payment.*', Tenant: 'tenant_311' });
    await poll(listed).toEqual(['evt_01J8K7N3A1', 'evt_01J8K7M2R5']);
    expect(decodeURIComponent(page.url())).toContain('tenant=tenant_311');
    expect(decodeURIComponent(page.url())).toContain('type=payment.*');
    await page.reload();
    await poll(listed).toEqual(['evt_01J8K7N3A1', 'evt_01J8K7M2R5']);
    expect(await page.getByLabel('Type', { exact: true }).inputValue()).toBe('payment.*');
    expect(await page.getByLabel('Tenant', { exact: true }).inputValue()).toBe('tenant_311');
    await search({ Tenant: 'tenant_204' });
    await poll(listed).toEqual(['evt_01J8K7M2Q4']);
    await page.goBack();
    await poll(listed).toEqual(['evt_01J8K7N3A1', 'evt_01J8K7M2R5']);
    expect(await page.getByLabel('Tenant', { exact: true }).inputValue()).toBe('tenant_311');
  });
});

describe('Events: Live', () => {
  it('is on by default on the newest page, and an event sent after the page loaded appears within 5 s without a reload', async () => {
    await page.goto(`${env.console.origin}/#/events`);
    await poll(listed).toHaveLength(5);
    expect(await page.getByRole('checkbox', { name: 'Live' }).isChecked()).toBe(true);
    await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));
    await sendEvent('evt_01J8K7P4L1', 'customer.created', 'tenant_204');
    await expect.poll(async () => (await listed())[0], { timeout: 5000 }).toBe('evt_01J8K7P4L1');
    expect(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded)).toBe(true);
  });
});

describe('Events: Replay matching', () => {
  it("replays risk-evaluator's deliveries of exactly the payment.* events: counts, confirms, names the replay; audited; no usage added", async () => {
    await env.stack.drain();
    const usageDeps = { ddb: env.stack.handlers.ddb, tables: env.stack.resources.tables };
    const window = { from: t0, to: Date.now() + 60_000 };
    const before = await usage(usageDeps, window);
    await page.goto(`${env.console.origin}/#/events?type=${encodeURIComponent('payment.*')}&consumer=risk-evaluator`);
    await poll(listed).toEqual(PAYMENTS);
    await page.getByRole('button', { name: 'Replay matching' }).click();
    const asking = page.getByRole('group', { name: 'Replay matching: confirm' });
    await asking.getByText(/^3 deliveries of risk-evaluator will be replayed: those of the events listed, received in \[/).waitFor();
    await asking.getByRole('button', { name: 'Confirm' }).click();
    const result = page.getByText(/^Replay \S+: 3 deliveries of risk-evaluator re-queued\.$/);
    await result.waitFor();
    const replayId = (await result.innerText()).split(' ')[1]!.replace(/:$/, '');

    await env.stack.drain();
    const replayed = (await ledgerRows(env.stack))
      .filter((r) => (r.replays ?? []).some((x) => x.replayId === replayId))
      .map((r) => `${r.eventId} ${r.consumerId}`)
      .sort();
    expect(replayed).toEqual(['evt_01J8K7M2Q4 risk-evaluator', 'evt_01J8K7M2R5 risk-evaluator', 'evt_01J8K7N3A1 risk-evaluator']);
    const audits = (
      await scanAll<Record<string, unknown>>(env.stack.handlers.ddb, { TableName: env.stack.resources.tables.events })
    ).filter((i) => i.kind === 'audit' && i.auditId === replayId);
    expect(audits).toEqual([
      expect.objectContaining({
        action: 'replay',
        operator: 'ops-console (console)',
        consumer: 'risk-evaluator',
        type: 'payment.*',
        count: 3,
      }),
    ]);
    const after = await usage(usageDeps, window);
    expect(after.totalUnits).toBe(before.totalUnits);
    expect(after.rows).toEqual(before.rows);
  }, 30_000);
});

describe('Consumers: Redrive says why messages went back', () => {
  it('after a redrive, links to the events now quarantined for that consumer', async () => {
    await sendPoisoned(env.stack, 'evt_01J8K7Q9Z1');
    await page.goto(`${env.console.origin}/#/consumers`);
    await poll(() => page.locator('td[data-dlq="risk-evaluator"]').innerText()).toBe('1');
    const row = page.getByRole('row', { name: /^risk-evaluator/ });
    await page.getByRole('button', { name: 'Redrive risk-evaluator' }).click();
    await row.getByRole('button', { name: 'Confirm' }).click();
    await row.getByText('1 of 1 message(s) moved from the DLQ of risk-evaluator.').waitFor();
    // Still poisoned: the message fails again and goes back to the DLQ.
    await expect.poll(() => page.locator('td[data-dlq="risk-evaluator"]').innerText(), { timeout: 15_000 }).toBe('1');
    await row.getByRole('link', { name: 'Events quarantined for risk-evaluator' }).click();
    await page.getByRole('heading', { name: 'Events' }).waitFor();
    await poll(listed).toEqual(['evt_01J8K7Q9Z1']);
    expect(await page.getByLabel('Delivery state').inputValue()).toBe('quarantined');
    expect(await page.getByLabel('Consumer').inputValue()).toBe('risk-evaluator');
    poisoned.delete('evt_01J8K7Q9Z1');
  }, 30_000);
});
