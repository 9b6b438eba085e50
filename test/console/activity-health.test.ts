/**
 * Activity and Health in Chromium (playwright-core + Debian's Chromium), on one local stack for the
 * file: Activity's table holds the numbers `hookledger status` and `usage` give for the same window
 * (events evt_01J8K7C1.. sent to tenant_204 and tenant_311, one quarantined by risk-evaluator) and
 * the duplicate intake counted (the provider's retry of evt_01J8K7C101), its
 * charts are images with names; Health shows ALARM for risk-evaluator's DLQ message and OK for the
 * other consumers, each row with its reason. Each view's first render is measured and printed (never asserted).
 */
// biome-ignore-all lint/performance/useDomNodeTextContent: Playwright's locator.innerText is what a person sees (table cells tab-separated), not the DOM property
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../core/paths';
import { activity } from '../../ops/activity';
import { sourcesReport } from '../../ops/sources';
import { status } from '../../ops/status';
import { usage } from '../../ops/usage';
import { send } from '../support/stack';
import { type ConsoleStack, sendPoisoned, startConsoleStack } from './support';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const POISONED = 'evt_01J8K7C501';

let env: ConsoleStack;
let browser: Browser;
let page: Page;
let from: number;
let to: number;

const payment = (id: string, tenant: string) => ({
  id,
  type: 'payment.succeeded',
  tenant_id: tenant,
  key_id: tenant === 'tenant_204' ? 'key_42' : 'key_77',
  created: 1_764_633_600,
  data: { amount: 4200, currency: 'eur', card_last4: '4242' },
});

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: apt-get install chromium (.ci/run does)`);
  [env, browser] = await Promise.all([
    startConsoleStack(),
    chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] }),
  ]);
  from = Date.now() - 1000;
  for (const [id, tenant] of [
    ['evt_01J8K7C101', 'tenant_204'],
    ['evt_01J8K7C102', 'tenant_311'],
    ['evt_01J8K7C103', 'tenant_204'],
  ] as const) {
    await send(env.stack, payment(id, tenant));
  }
  // The provider retries evt_01J8K7C101 with the same bytes: a duplicate, which stores nothing.
  await send(env.stack, payment('evt_01J8K7C101', 'tenant_204'));
  await env.stack.drain();
  await sendPoisoned(env.stack, POISONED);
  to = Date.now() + 60_000;
  page = await (await browser.newContext({ viewport: { width: 1360, height: 900 } })).newPage();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
});

const iso = (ms: number) => new Date(ms).toISOString();
const storeDeps = () => ({ ddb: env.stack.handlers.ddb, tables: env.stack.resources.tables, config: env.stack.config });

/** Where the screenshots go: docs/img/ with HOOKLEDGER_SCREENSHOTS=1 (the docs'), else .ci/results/. */
function screenshotPath(name: string): string {
  return path.join(PROJECT_ROOT, process.env.HOOKLEDGER_SCREENSHOTS === '1' ? 'docs/img' : '.ci/results', name);
}

/**
 * A view opened in a fresh tab by its address: the time from the navigation to the mark the view
 * sets once its data is on the page (`hookledger:<view>-rendered`), and a screenshot of it.
 */
async function firstRender(view: string, ready: (tab: Page) => Promise<void>): Promise<number> {
  const tab = await page.context().newPage();
  try {
    await tab.goto(`${env.console.origin}/#/${view}`);
    await ready(tab);
    const ms = await tab.evaluate((mark) => performance.getEntriesByName(mark)[0]?.startTime ?? Number.NaN, `hookledger:${view}-rendered`);
    await tab.screenshot({ path: screenshotPath(`console-${view}.png`), fullPage: true });
    return ms;
  } finally {
    await tab.close();
  }
}

describe('Activity in Chromium', () => {
  it('shows the window’s charts as named images, and Show as table holds the numbers status and usage give', async () => {
    await page.goto(env.console.url);
    await page.getByRole('link', { name: 'Activity', exact: true }).click();
    await page.getByRole('heading', { name: 'Activity', exact: true }).waitFor();
    await page.getByRole('img').first().waitFor();
    await page.getByLabel('From', { exact: true }).fill(iso(from));
    await page.getByLabel('To', { exact: true }).fill(iso(to));
    await page.getByRole('button', { name: 'Show activity' }).click();
    await page.getByRole('img', { name: /^Events received by platform per 1 min/ }).waitFor();

    const names = await page.getByRole('img').evaluateAll((els) => els.map((el) => el.getAttribute('aria-label') ?? ''));
    expect(names).toHaveLength(1 + 3 * 2);
    expect(names.every((n) => n.length > 20)).toBe(true);
    expect(names).toContain('Deliveries of risk-evaluator per 1 min bucket: 3 done, 0 retrying, 1 quarantined');
    expect(names).toContain('Events received by platform per 1 min bucket: 4 in total, 1 duplicate');

    await page.getByRole('button', { name: 'Show as table' }).click();
    const rows = async (caption: string) =>
      (await page.getByRole('table', { name: caption }).getByRole('row').allInnerTexts()).map((r) => r.split('\t'));
    await page.getByRole('table', { name: 'Consumers' }).waitFor();

    const window = { from, to };
    const [report, used, sources] = await Promise.all([
      status(storeDeps(), { window }),
      usage(storeDeps(), window),
      sourcesReport({ ...storeDeps(), secretRotation: async (source) => ({ source, hasPrevious: false }) }, { window }),
    ]);
    const doneByUsage = (consumer: string) => used.rows.filter((r) => r.consumerId === consumer).reduce((n, r) => n + r.deliveries, 0);
    const expected = report.consumers.map((c) => [c.consumer, String(doneByUsage(c.consumer)), String(c.retrying), String(c.quarantined)]);
    expect(expected).toEqual([
      ['billing-meter', '4', '0', '0'],
      ['audit-writer', '4', '0', '0'],
      ['risk-evaluator', '3', '0', '1'],
    ]);
    expect((await rows('Consumers')).slice(1).map((r) => r.slice(0, 4))).toEqual(expected);
    expect(report.consumers.map((c) => String(c.done))).toEqual(expected.map((e) => e[1]));

    const sourceRows = (await rows('Sources')).slice(1);
    expect(sourceRows.map((r) => r.slice(0, 2))).toEqual(sources.sources.map((s) => [s.source, String(s.events)]));
    expect(sourceRows[0]?.slice(0, 2)).toEqual(['platform', '4']);
    expect(report.intake.events).toBe(4);
    // Read as status and usage read, through the window index: the window's 4 receipts and their 12 ledger rows, nothing else.
    const direct = await activity(storeDeps(), window);
    expect(direct.read).toMatchObject({ receiptsRead: 4, ledgerKeysRequested: 12, ledgerRowsRead: 12 });
    expect(
      direct.consumers.map((c) => [c.consumer, String(c.totals.done), String(c.totals.retrying), String(c.totals.quarantined)]),
    ).toEqual(expected);
    // The provider's retry of evt_01J8K7C101 was answered as a duplicate: intake counted it for platform, and the table shows it.
    expect(sourceRows[0]?.[2]).toBe('1');
    expect(direct.sources.map((s) => [s.source, s.total, s.duplicateTotal])).toEqual([['platform', 4, 1]]);
  });
});

describe('Health in Chromium', () => {
  it('shows ALARM for risk-evaluator’s DLQ message and OK for the other consumers’ DLQs', async () => {
    await page.getByRole('link', { name: 'Health', exact: true }).click();
    await page.getByRole('heading', { name: 'Health', exact: true }).waitFor();
    const state = async (rule: string, subject: string) =>
      (await page.getByRole('row', { name: new RegExp(`^${rule}\\s+${subject}\\s`) }).innerText()).split('\t')[2];
    await page.getByRole('row', { name: /^DeadLetters\s+risk-evaluator/ }).waitFor();
    expect(await state('DeadLetters', 'risk-evaluator')).toBe('ALARM');
    expect(await state('DeadLetters', 'billing-meter')).toBe('OK');
    expect(await state('DeadLetters', 'audit-writer')).toBe('OK');
    expect(await state('Paused', 'risk-evaluator')).toBe('OK');
    expect(await state('FanOutFailures', 'fan-out')).toBe('OK');
    expect(await state('SignatureFailures', 'platform')).toBe('OK');
  });

  it('gives each row its reason, the threshold included, and since when for an ALARM row', async () => {
    const cells = async (rule: string, subject: string) =>
      (await page.getByRole('row', { name: new RegExp(`^${rule}\\s+${subject}\\s`) }).innerText()).split('\t');
    await page.getByRole('row', { name: /^DeadLetters\s+risk-evaluator/ }).waitFor();
    expect(await page.getByRole('columnheader').allInnerTexts()).toEqual(['Rule', 'Subject', 'State', 'Since', 'Reason']);
    // A DLQ message keeps no start time.
    expect((await cells('DeadLetters', 'risk-evaluator')).slice(2)).toEqual(['ALARM', '-', '1 message(s) in its DLQ; alarms at 1 or more']);
    expect((await cells('SignatureFailures', 'platform')).slice(2)).toEqual([
      'OK',
      '-',
      '0 verification failure(s) in the last 15 min; alarms at 10 within 15 min',
    ]);
  });
});

describe('first render', () => {
  it('measures Activity’s and Health’s first render, each opened by its address (printed, not asserted)', async () => {
    const activityMs = await firstRender('activity', (tab) => tab.getByRole('img', { name: /^Events received by platform/ }).waitFor());
    const healthMs = await firstRender('health', (tab) => tab.getByRole('row', { name: /^DeadLetters\s+risk-evaluator/ }).waitFor());
    expect([activityMs, healthMs].every((ms) => ms > 0)).toBe(true);
    console.log(`console: Activity view first render ${activityMs.toFixed(0)} ms, Health view ${healthMs.toFixed(0)} ms`);
    await mkdir(path.join(PROJECT_ROOT, '.ci/results'), { recursive: true });
    await writeFile(
      path.join(PROJECT_ROOT, '.ci/results/console-activity-health.json'),
      `${JSON.stringify({ activityFirstRenderMs: Math.round(activityMs), healthFirstRenderMs: Math.round(healthMs), at: new Date().toISOString() }, null, 2)}\n`,
    );
  });
});
