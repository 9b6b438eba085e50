/**
 * `npm start -- --assembly <dir>` says what plain `npm start` says (issue 39 item 3): the same banner
 * (every source's webhook URL, the console URL, where the signing secrets are, a ready `send`
 * command) with one line for what differs, one line per delivery once a consumer's bundle has
 * processed it, and the operator console on the assembly stack through its state file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../core/paths';
import { runHookledgerBin, waitForOutput } from '../support/processes';
import { editedAssembly, synthesizedAssembly } from './support';

const EVENT_ID = 'evt_01J8K7B401';
const run = { child: undefined as ChildProcess | undefined, output: '', dir: '', home: '' };

/** `hookledger <args>` as `npx hookledger` runs it, on the stack's state file. */
const hookledger = (args: readonly string[]) =>
  runHookledgerBin(PROJECT_ROOT, args, { HOOKLEDGER_STATE: path.join(run.home, 'state.json'), USER: 'assembly-banner' });

const waitFor = (check: () => boolean, timeoutMs: number) => waitForOutput(check, () => run.output, timeoutMs);

beforeAll(async () => {
  run.dir = editedAssembly(synthesizedAssembly(), () => undefined);
  run.home = path.join(run.dir, 'home');
  run.child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts', '--assembly', run.dir], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, HOOKLEDGER_HOME: run.home, HOOKLEDGER_PORT: '0', HOOKLEDGER_LOG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  run.child.stdout?.on('data', (c: Buffer) => (run.output += c.toString()));
  run.child.stderr?.on('data', (c: Buffer) => (run.output += c.toString()));
  await waitFor(() => run.output.includes('Press Ctrl-C to stop.'), 150_000);
}, 180_000);

afterAll(async () => {
  if (run.child && run.child.exitCode === null) {
    const closed = new Promise((resolve) => run.child!.once('close', resolve));
    run.child.kill('SIGINT');
    await closed;
  }
  if (run.dir) rmSync(run.dir, { recursive: true, force: true });
});

describe('npm start -- --assembly: the banner, the delivery lines and the console of plain mode', () => {
  it("prints plain mode's banner: the source's webhook URL, the console URL, the secrets file, a send command, and one line for assembly mode", () => {
    expect(run.output).toMatch(/hookledger is running the synthesized assembly \(\d+ ms\)\./);
    expect(run.output).toMatch(/^ {2}webhook URLs {4}platform {2}http:\/\/127\.0\.0\.1:\d+\/hooks\/platform$/m);
    expect(run.output).toMatch(
      /^ {2}console URL {5}http:\/\/127\.0\.0\.1:\d+\/\?code=[A-Za-z0-9_-]{43} {3}\(signs in one browser, once\)$/m,
    );
    expect(run.output).toContain(`  signing secrets ${path.join(run.home, 'secrets.json')} (Standard Webhooks, git-ignored); platform's: `);
    expect(run.output).toContain('  npx hookledger send --source platform --type payment.succeeded --tenant tenant_204\n');
    expect(run.output).toContain(
      `  assembly mode   ${run.dir}: the synthesized bundles, each in its own process as its own role, every call IAM-checked; the least-privilege report prints at stop\n`,
    );
  });

  it('prints one line per delivery after `send`, and the console lists the sent event', async () => {
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
    await waitFor(() => ['billing-meter', 'audit-writer', 'risk-evaluator'].every((c) => delivered(c).test(run.output)), 60_000);

    // The console, signed in as a browser is by the printed link, answers its Events view from the assembly stack.
    const url = new URL(/console URL\s+(\S+)/.exec(run.output)![1]!);
    const signIn = await fetch(url, { redirect: 'manual' });
    const cookie = /^(hookledger_console_\d+=[^;]+);/.exec(signIn.headers.get('set-cookie') ?? '')?.[1];
    expect(cookie).toBeDefined();
    const events = await fetch(`${url.origin}/api/events?eventId=${EVENT_ID}`, { headers: { cookie: cookie! } });
    expect(events.status).toBe(200);
    const rows = ((await events.json()) as { rows: { eventId: string; tenantId: string; deliveries: Record<string, string> }[] }).rows;
    expect(rows.map((r) => ({ eventId: r.eventId, tenantId: r.tenantId, deliveries: r.deliveries }))).toEqual([
      {
        eventId: EVENT_ID,
        tenantId: 'tenant_204',
        deliveries: { 'audit-writer': 'done', 'billing-meter': 'done', 'risk-evaluator': 'done' },
      },
    ]);
  }, 120_000);
});
