/**
 * The Event view's Timeline and the rough edges an operator met in Chromium (issue 40, items 6 and 7),
 * on one local stack for the file whose payments go to three consumers: billing-meter and audit-writer
 * (Lambda) and crm-sync (an HTTP destination whose receiver answers 503 once, then 200). The timeline
 * the page shows is `hookledger trace --json`'s; an erased event says so and offers no Replay; an
 * over-long address and an unknown event get the console's words; the confirmation keeps its width;
 * the header fits 390 px; the dark scheme is honoured with AA contrast; navigation focuses the heading.
 */
// biome-ignore-all lint/performance/useDomNodeTextContent: Playwright's locator.innerText is what a person sees (table cells tab-separated), not the DOM property
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveConsole } from '../../console/serve';
import { defineConfig } from '../../core/config/schema';
import { PROJECT_ROOT } from '../../core/paths';
import defaultConfig from '../../hookledger.config';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { trace } from '../../ops/trace';
import { runCli } from '../support/cli';
import { bodyOf, crmSyncConsumer } from '../support/receiver';
import { send, startTestStack } from '../support/stack';

/** The docs' screenshot with HOOKLEDGER_SCREENSHOTS=1 (docs/img/); .ci/results/ otherwise, so `npm test` leaves the worktree clean. */
function screenshotPath(name: string): string {
  return path.join(PROJECT_ROOT, process.env.HOOKLEDGER_SCREENSHOTS === '1' ? 'docs/img' : '.ci/results', name);
}

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const DELIVERED = 'evt_01J8K7T101';
const ERASED = 'evt_01J8K7T201';
const CONSUMERS = ['billing-meter', 'audit-writer', 'crm-sync'];

/** What crm-sync's receiver answers per event id, in order; then 200. */
const script = new Map<string, number[]>();
let receiver: Server;
let stack: LocalStack;
let console_: Awaited<ReturnType<typeof serveConsole>>;
let statePath: string;
let browser: Browser;
let page: Page;
let config: ReturnType<typeof defineConfig>;

const cli = (argv: string[]) => runCli(argv, config, { USER: 'ops-timeline', HOOKLEDGER_STATE: statePath });

const payment = (id: string) => ({
  id,
  type: 'payment.succeeded',
  tenant_id: 'tenant_204',
  key_id: 'key_42',
  created: Math.floor(Date.now() / 1000),
  data: { amount: 4200, currency: 'eur', card_last4: '4242' },
});

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: apt-get install chromium (.ci/run does)`);
  receiver = createServer(async (req, res) => {
    const payload = JSON.parse(await bodyOf(req)) as { id: string };
    const status = script.get(payload.id)?.shift() ?? 200;
    res.writeHead(status).end('ok');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/hookledger`;
  config = defineConfig({
    sources: defaultConfig.sources,
    consumers: [...defaultConfig.consumers.filter((c) => c.id === 'billing-meter' || c.id === 'audit-writer'), crmSyncConsumer(url)],
    retention: defaultConfig.retention,
  });
  [stack, browser] = await Promise.all([
    startTestStack({ config, backoffBaseMs: 200 }),
    chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] }),
  ]);
  statePath = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-timeline-')), 'state.json');
  await writeState(statePath, stackState(stack, null));
  console_ = await serveConsole({
    config,
    root: path.dirname(statePath),
    env: { HOOKLEDGER_STATE: statePath },
    operator: 'ops-timeline (console)',
    warn: () => undefined,
  });
  script.set(DELIVERED, [503]);
  expect((await send(stack, payment(DELIVERED))).status).toBe(202);
  expect((await send(stack, payment(ERASED))).status).toBe(202);
  await stack.drain({ timeoutMs: 30_000 });
  const erased = await cli(['erase', '--event', ERASED, '--source', 'platform', '--yes', '--json']);
  expect(erased.code).toBe(0);
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  page = await context.newPage();
  await page.goto(console_.url);
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await console_?.close();
  await stack?.stop();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

const eventUrl = (eventId: string) => `${console_.origin}/#/event/platform/${eventId}`;

/** The Timeline table's rows as cells, without the times (they vary): step, consumer, attempt, category or outcome, HTTP status. */
async function timelineRows(p: Page): Promise<string[][]> {
  const table = p.getByRole('table', { name: 'Timeline' });
  await table.waitFor();
  const rows = await table.locator('tbody tr').allInnerTexts();
  return rows.map((r) => r.split('\t').slice(1, 6));
}

describe('the Event view: Timeline', () => {
  it(`lists ${DELIVERED}'s steps: received, recorded, queued for each consumer, then each consumer's attempts in order, crm-sync's 503 then 200`, async () => {
    await page.goto(eventUrl(DELIVERED));
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    expect(await timelineRows(page)).toEqual([
      ['received', '', '', '', ''],
      ['recorded', '', '', '', ''],
      ['queued', 'billing-meter', '', '', ''],
      ['queued', 'audit-writer', '', '', ''],
      ['queued', 'crm-sync', '', '', ''],
      ['claimed', 'billing-meter', '1', '', ''],
      ['acknowledged', 'billing-meter', '1', 'ok', ''],
      ['claimed', 'audit-writer', '1', '', ''],
      ['acknowledged', 'audit-writer', '1', 'ok', ''],
      ['claimed', 'crm-sync', '1', '', ''],
      ['failed', 'crm-sync', '1', 'http_503', '503'],
      ['claimed', 'crm-sync', '2', '', ''],
      ['acknowledged', 'crm-sync', '2', 'http_200', '200'],
    ]);
    const cells = (await page.getByRole('table', { name: 'Timeline' }).locator('tbody tr').allInnerTexts()).map((r) => r.split('\t'));
    expect(cells[0]?.[0]).toBe('+0 ms');
    // The receipt's write, timed by intake's clock as it wrote it (the receipt keeps recordedAt).
    expect(cells[1]?.[0]).toMatch(/^\+\d+ ms$/);
    // The fan-out's send to each queue, timed by SQS (the first claim keeps the message's SentTimestamp).
    for (const queued of [2, 3, 4]) expect(cells[queued]?.[0]).toMatch(/^\+\d+ ms$/);
    // Every attempt's time since receipt, in order per consumer; crm-sync's HTTP attempts with their duration.
    const since = (row: string[] | undefined) => Number(/^\+(\d+) ms$/.exec(row?.[0] ?? '')?.[1]);
    for (const [claimed, outcome] of [
      [5, 6],
      [7, 8],
      [9, 10],
      [11, 12],
    ] as const) {
      expect(since(cells[claimed])).toBeGreaterThanOrEqual(0);
      expect(since(cells[outcome])).toBeGreaterThanOrEqual(since(cells[claimed]));
    }
    expect(since(cells[11])).toBeGreaterThanOrEqual(since(cells[10]));
    expect(cells[10]?.[6]).toMatch(/^\d+ ms$/);
    expect(cells[12]?.[6]).toMatch(/^\d+ ms$/);
    await page.getByRole('table', { name: 'Timeline' }).screenshot({ path: screenshotPath('console-timeline.png') });
  });

  it('is what `hookledger trace --json` carries as its timeline, and what ops/trace computes', async () => {
    const deps = { ddb: stack.handlers.ddb, tables: stack.resources.tables, config };
    const report = await trace(deps, DELIVERED);
    const printed = await cli(['trace', DELIVERED, '--json']);
    expect(printed.code).toBe(0);
    const json = JSON.parse(printed.stdout) as { timeline: typeof report.timeline };
    expect(json.timeline).toEqual(report.timeline);
    const crm = report.timeline.filter((s) => s.consumer === 'crm-sync' && s.attempt !== undefined);
    expect(crm.map((s) => [s.step, s.attempt, s.category ?? s.outcome, s.httpStatus])).toEqual([
      ['claimed', 1, undefined, undefined],
      ['failed', 1, 'http_503', 503],
      ['claimed', 2, undefined, undefined],
      ['acknowledged', 2, 'http_200', 200],
    ]);
    expect(report.timeline.filter((s) => s.step === 'queued').map((s) => s.consumer)).toEqual(CONSUMERS);
    // The receipt was written after the request arrived and before any queue got the message.
    const recorded = json.timeline.find((s) => s.step === 'recorded')?.sinceReceiptMs;
    expect(recorded).toBeGreaterThanOrEqual(0);
    // Each consumer's queue got the message after the receipt and before that consumer's first claim.
    for (const consumer of CONSUMERS) {
      expect(json.timeline.find((s) => s.step === 'queued' && s.consumer === consumer)?.sinceReceiptMs, consumer).toBeGreaterThanOrEqual(
        recorded ?? Number.NaN,
      );
      const sent = json.timeline.find((s) => s.step === 'queued' && s.consumer === consumer)?.sinceReceiptMs;
      const claimed = json.timeline.find((s) => s.step === 'claimed' && s.consumer === consumer && s.attempt === 1)?.sinceReceiptMs;
      expect(sent, consumer).toBeGreaterThanOrEqual(0);
      expect(sent, consumer).toBeLessThanOrEqual(claimed ?? Number.NaN);
    }
    // The text form says the same: the receipt's write and each queue's send at their ms.
    const text = await cli(['trace', DELIVERED]);
    expect(text.stdout).toMatch(/^ +\+\d+ ms {2}recorded$/m);
    for (const consumer of CONSUMERS) expect(text.stdout).toMatch(new RegExp(`^ +\\+\\d+ ms {2}queued ${consumer}$`, 'm'));
    // The page shows the same steps in the same order.
    await page.goto(eventUrl(DELIVERED));
    expect((await timelineRows(page)).map((r) => [r[0], r[1], r[2]])).toEqual(
      report.timeline.map((s) => [s.step, s.consumer ?? '', s.attempt === undefined ? '' : String(s.attempt)]),
    );
  });

  it('renders the Event view first within a bound, and says how long it took (median of five fresh loads)', async () => {
    const samples: { firstRenderMs: number; apiMs: number }[] = [];
    for (let i = 0; i < RENDER_SAMPLES; i++) {
      const fresh = await page.context().newPage();
      try {
        await fresh.goto(eventUrl(DELIVERED));
        await fresh.locator('.facts').waitFor();
        samples.push(await fresh.evaluate<{ firstRenderMs: number; apiMs: number }>(RENDER_TIMES));
      } finally {
        await fresh.close();
      }
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
    const firstRenderMs = median(samples.map((s) => s.firstRenderMs));
    expect(firstRenderMs).toBeGreaterThan(0);
    // A bound for a broken page, not a benchmark: the figures are printed.
    expect(firstRenderMs).toBeLessThan(10_000);
    console.log(
      `console: Event view (3 consumers) first render median ${firstRenderMs.toFixed(0)} ms ` +
        `(the /api/event answer at ${median(samples.map((s) => s.apiMs)).toFixed(0)} ms; ` +
        `samples ${samples.map((s) => `${s.firstRenderMs.toFixed(0)}/${s.apiMs.toFixed(0)}`).join(' ')})`,
    );
  });
});

describe('the rough edges found in Chromium', () => {
  it(`says ${ERASED} was erased (when, by whom), not "kept until", and offers no Replay`, async () => {
    await page.goto(eventUrl(ERASED));
    await page.getByRole('heading', { name: `Event ${ERASED}` }).waitFor();
    const facts = await page.locator('.facts').innerText();
    expect(facts).toMatch(/Payload\s+erased \d{4}-\d\d-\d\dT[\d:.]+Z by ops-timeline/);
    expect(facts).not.toContain('kept until');
    await page.getByRole('row', { name: /^billing-meter/ }).waitFor();
    expect(await page.getByRole('button', { name: /^Replay / }).count()).toBe(0);
  });

  it('answers an over-long address with a clear message, not a raw 431', async () => {
    const long = `evt_${'x'.repeat(20_000)}`;
    await page.goto(eventUrl(long));
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = await alert.innerText();
    expect(text).not.toContain('431');
    expect(text).toContain('too long');
  });

  it('says an unknown event is not found in the console’s words, not with a CLI flag', async () => {
    await page.goto(eventUrl('evt_01J8K7T999'));
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = await alert.innerText();
    expect(text).not.toContain('--');
    expect(text).toBe('No event evt_01J8K7T999 was received from platform: check the id, or search for it in Events.');
  });

  it('keeps the confirmation box wide enough for its question (one line, not a narrow column)', async () => {
    await page.goto(eventUrl(DELIVERED));
    await page.getByRole('button', { name: 'Replay billing-meter' }).click();
    const group = page.getByRole('group', { name: 'Replay billing-meter: confirm' });
    await group.waitFor();
    const question = group.getByText('1 delivery to billing-meter will be sent again (never adds usage).');
    const box = await question.boundingBox();
    expect(box?.height).toBeLessThanOrEqual(ONE_LINE_PX * 1.5);
    await group.getByRole('button', { name: 'Cancel' }).click();
  });

  it('fits the header in 390 px: no sideways scrolling, every view link on screen', async () => {
    const narrow = await browser.newContext({ viewport: { width: 390, height: 844 }, storageState: await page.context().storageState() });
    try {
      const p = await narrow.newPage();
      await p.goto(`${console_.origin}/#/events`);
      await p.getByRole('heading', { name: 'Events', exact: true }).waitFor();
      expect(await p.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      const links = p.getByRole('navigation', { name: 'views' }).getByRole('link');
      expect(await links.count()).toBeGreaterThanOrEqual(5);
      for (const link of await links.all()) {
        const box = await link.boundingBox();
        expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
      }
    } finally {
      await narrow.close();
    }
  });

  it('honours prefers-color-scheme: dark, with every text at AA contrast', async () => {
    const dark = await browser.newContext({
      colorScheme: 'dark',
      viewport: { width: 1360, height: 900 },
      storageState: await page.context().storageState(),
    });
    try {
      const p = await dark.newPage();
      for (const [hash, heading] of [
        [`#/event/platform/${DELIVERED}`, 'Timeline'],
        ['#/events', 'Events'],
        ['#/consumers', 'Consumers'],
      ] as const) {
        await p.goto(`${console_.origin}/${hash}`);
        await p.getByRole('heading', { name: heading, exact: true }).waitFor();
        await p.getByRole('row').nth(1).waitFor();
        expect(await p.evaluate<number>(`(${LUMINANCE})(getComputedStyle(document.body).backgroundColor)`)).toBeLessThan(0.05);
        expect(await lowContrast(p)).toEqual([]);
      }
      // The confirmation box too.
      await p.getByRole('button', { name: 'Pause audit-writer' }).click();
      await p.getByRole('group', { name: 'Pause audit-writer: confirm' }).waitFor();
      expect(await lowContrast(p)).toEqual([]);
      await p.getByRole('button', { name: 'Cancel' }).click();
    } finally {
      await dark.close();
    }
  });

  it('keeps every text at AA contrast in the light scheme too', async () => {
    await page.goto(eventUrl(DELIVERED));
    await page.getByRole('table', { name: 'Timeline' }).waitFor();
    expect(await lowContrast(page)).toEqual([]);
  });

  it("moves the focus to the view's heading on navigation", async () => {
    await page.goto(`${console_.origin}/#/events`);
    await page.getByRole('heading', { name: 'Events', exact: true }).waitFor();
    await page.getByRole('navigation', { name: 'views' }).getByRole('link', { name: 'Consumers' }).click();
    await expect.poll(() => page.evaluate<string>(FOCUSED)).toBe('H1 Consumers');
    await page.goto(`${console_.origin}/#/events`);
    await page.getByRole('link', { name: DELIVERED }).click();
    await expect.poll(() => page.evaluate<string>(FOCUSED)).toBe(`H1 Event ${DELIVERED}`);
  });
});

// What runs in the page is written as source text: this file is typechecked without the DOM's types.

/** The focused element's tag and text. */
const FOCUSED = "document.activeElement?.tagName + ' ' + document.activeElement?.textContent";

/** Fresh loads of the Event view the first-render figure is the median of. */
const RENDER_SAMPLES = 5;

/** Since navigation: the Event view's first render (its mark) and the end of its /api/event answer. */
const RENDER_TIMES = `({
  firstRenderMs: performance.getEntriesByName('hookledger:event-rendered')[0]?.startTime ?? NaN,
  apiMs: performance.getEntriesByType('resource').find((e) => e.name.includes('/api/event?'))?.responseEnd ?? NaN,
})`;

/** One line of the page's body text: 14 px at line-height 1.45 (style.css). */
const ONE_LINE_PX = 14 * 1.45;

/** The relative luminance (WCAG 2) of a CSS `rgb()` / `rgba()` colour. */
const LUMINANCE = `(color) => {
  const [r, g, b] = (color.match(/[\\d.]+/g) ?? []).map(Number);
  const lin = (c = 0) => { const s = c / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}`;

/**
 * Every visible text (an element with a text node of its own) whose colour against its background
 * (the nearest ancestor's that is not transparent) is under WCAG AA: 4.5:1, or 3:1 for large text.
 * Disabled controls are exempt, as WCAG exempts inactive components.
 */
function lowContrast(p: Page): Promise<string[]> {
  return p.evaluate<string[]>(`(() => {
    const luminance = ${LUMINANCE};
    const background = (el) => {
      for (let e = el; e; e = e.parentElement) {
        const c = getComputedStyle(e).backgroundColor;
        const alpha = /rgba\\(.*,\\s*([\\d.]+)\\)/.exec(c);
        if (!alpha || Number(alpha[1]) > 0) return c;
      }
      return 'rgb(255, 255, 255)';
    };
    const out = [];
    for (const el of document.body.querySelectorAll('*')) {
      const own = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim() !== '');
      if (!own || el.offsetParent === null || el.disabled) continue;
      const style = getComputedStyle(el);
      const [l1, l2] = [luminance(style.color), luminance(background(el))];
      const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
      const size = Number.parseFloat(style.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
      if (ratio < (large ? 3 : 4.5)) out.push(el.tagName + ' "' + el.textContent.trim().slice(0, 40) + '" ' + ratio.toFixed(2));
    }
    return out;
  })()`);
}
