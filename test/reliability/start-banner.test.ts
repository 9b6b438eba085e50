/**
 * `npm start` on a copy of the repository whose hookledger.config.ts has a second source, a Stripe
 * one reading its tenant from a path Stripe's sample event lacks (issue 39 items 3 and 4): the
 * warning on stderr before the stack runs, the banner naming every source's webhook URL, the console
 * URL, where the signing secrets are and a `send` command that works as printed (its deliveries each
 * print a line); then, once the config file is edited, every `hookledger` command that reaches the
 * stack says once, on stderr, that the running stack still runs the old one.
 *
 * A copy (the packages linked from this checkout), so editing its config touches nothing other tests read.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT as ROOT } from '../../core/paths';
import { freePort } from '../../local/emulators';
import { runHookledgerBin, waitForOutput } from '../support/processes';

const NOT_COPIED = new Set(['node_modules', 'test', 'bench', 'docs', 'cdk.out', 'coverage']);
const STRIPE_SOURCE =
  "    { id: 'stripe-live', provider: 'stripe', attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } } },\n";
const EVENT_ID = 'evt_01J8K7B501';

const run = { copy: '', home: '', port: 0, child: undefined as ChildProcess | undefined, stdout: '', stderr: '' };

/** `hookledger <args>` as `npx hookledger` runs it, on the stack's state file. */
const hookledger = (args: readonly string[]) =>
  runHookledgerBin(run.copy, args, { HOOKLEDGER_STATE: path.join(run.home, 'state.json'), USER: 'start-banner' });

const waitFor = (check: () => boolean, timeoutMs: number) => waitForOutput(check, () => `${run.stdout}\n(stderr) ${run.stderr}`, timeoutMs);

beforeAll(async () => {
  run.copy = mkdtempSync(path.join(tmpdir(), 'hookledger-banner-'));
  for (const entry of readdirSync(ROOT)) {
    if (!entry.startsWith('.') && !NOT_COPIED.has(entry)) cpSync(path.join(ROOT, entry), path.join(run.copy, entry), { recursive: true });
  }
  mkdirSync(path.join(run.copy, 'node_modules'));
  for (const entry of readdirSync(path.join(ROOT, 'node_modules'))) {
    if (entry !== '.cache') symlinkSync(path.join(ROOT, 'node_modules', entry), path.join(run.copy, 'node_modules', entry));
  }
  const configFile = path.join(run.copy, 'hookledger.config.ts');
  const config = readFileSync(configFile, 'utf8');
  expect(config).toContain('  ],\n  consumers: [');
  writeFileSync(configFile, config.replace('  ],\n  consumers: [', `${STRIPE_SOURCE}  ],\n  consumers: [`));

  run.home = path.join(run.copy, 'home');
  run.port = await freePort();
  run.child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
    cwd: run.copy,
    detached: true,
    env: { ...process.env, HOOKLEDGER_HOME: run.home, HOOKLEDGER_PORT: String(run.port), HOOKLEDGER_LOG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  run.child.stdout?.on('data', (c: Buffer) => (run.stdout += c.toString()));
  run.child.stderr?.on('data', (c: Buffer) => (run.stderr += c.toString()));
  await waitFor(() => run.stdout.includes('Press Ctrl-C to stop.'), 150_000);
}, 180_000);

afterAll(async () => {
  if (run.child && run.child.exitCode === null) {
    const exited = new Promise((resolve) => run.child!.once('exit', resolve));
    process.kill(-run.child.pid!, 'SIGINT');
    await exited;
  }
  if (run.copy) rmSync(run.copy, { recursive: true, force: true });
});

describe('npm start with a second source whose attribution path the sample lacks', () => {
  it("warns on stderr with the source, the path and the sample's fields", () => {
    expect(run.stderr).toContain(
      'warning: source "stripe-live" reads tenantId from body.account, which the stripe sample event does not have: a delivery without it ' +
        "is refused (400 missing_attribution); the sample's fields: id, object, type, data.object.id\n",
    );
    expect(run.stdout).not.toContain('warning:');
  });

  it("prints every source's webhook URL, the console URL, the secrets file and a send command", () => {
    const base = `http://127.0.0.1:${run.port}/hooks`;
    expect(run.stdout).toContain(`  webhook URLs    platform     ${base}/platform\n                  stripe-live  ${base}/stripe-live\n`);
    expect(run.stdout).toMatch(
      /^ {2}console URL {5}http:\/\/127\.0\.0\.1:\d+\/\?code=[A-Za-z0-9_-]{43} {3}\(signs in one browser, once\)$/m,
    );
    expect(run.stdout).toContain("  signing secrets home/secrets.json (Standard Webhooks, git-ignored); platform's: whsec_");
    expect(run.stdout).toContain('  npx hookledger send --source platform --type payment.succeeded --tenant tenant_204\n');
    expect(run.stdout).toContain('  state file      home/state.json\n');
    expect(run.stdout).not.toContain('assembly mode');
  });

  it('delivers what the printed send command sends, one line per delivery', async () => {
    const sent = await hookledger([
      'send',
      '--source',
      'platform',
      '--type',
      'payment.succeeded',
      '--tenant',
      'tenant_204',
      '--id',
      EVENT_ID,
    ]);
    expect({ code: sent.code, stderr: sent.stderr }).toEqual({ code: 0, stderr: '' });
    const delivered = (consumer: string) => new RegExp(`^ {2}ok {3}${consumer} +${EVENT_ID} {2}tenant tenant_204 {2}receive #1$`, 'm');
    await waitFor(() => ['billing-meter', 'audit-writer', 'risk-evaluator'].every((c) => delivered(c).test(run.stdout)), 60_000);
  }, 120_000);

  it('says once, on stderr, that the config changed since the stack started, once it did; --json stdout stays JSON', async () => {
    const before = await hookledger(['status']);
    expect(before.code).toBe(0);
    expect(before.stderr).not.toContain('changed since');

    appendFileSync(path.join(run.copy, 'hookledger.config.ts'), '// edited after npm start\n');
    const startedAt = (JSON.parse(readFileSync(path.join(run.home, 'state.json'), 'utf8')) as { startedAt: string }).startedAt;
    const notice = `hookledger.config.ts changed since this stack started (${startedAt}): restart \`npm start\` to apply it\n`;
    const after = await hookledger(['status']);
    expect(after.code).toBe(0);
    expect(after.stderr.split(notice)).toHaveLength(2);
    expect(after.stdout).not.toContain('changed since');

    const json = await hookledger(['status', '--json']);
    expect(json.code).toBe(0);
    expect(json.stderr.split(notice)).toHaveLength(2);
    expect(() => JSON.parse(json.stdout)).not.toThrow();
  }, 120_000);
});
