/**
 * local/lifecycle.ts in a real process: whichever of SIGINT, SIGTERM or SIGHUP comes first runs the
 * stop once, signals during it are absorbed (the stop is not cut half-way), a clean stop exits 0,
 * and a stop that outlives its deadline ends the process with 1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../core/paths';
import { waitFor } from '../support/wait';

const FIXTURE = path.join(PROJECT_ROOT, 'test', 'local', 'fixtures', 'slow-stop.ts');

function run(env: Record<string, string> = {}): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

describe('stopOnSignals', () => {
  it('SIGTERM, then SIGINT and SIGHUP during the stop: the stop runs once, to its end, exit 0', async () => {
    const p = run();
    await waitFor('ready', () => p.output().includes('ready') || undefined, 30_000);
    p.child.kill('SIGTERM');
    await waitFor('the stop begun', () => p.output().includes('stop begins') || undefined, 10_000);
    p.child.kill('SIGINT');
    p.child.kill('SIGHUP');
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(p.output().trim().split('\n')).toEqual(['ready', 'stop begins (SIGTERM)', 'stop ends']);
  }, 60_000);

  it('a stop that outlives its deadline: exit 1, saying so', async () => {
    const p = run({ HANG: '1', DEADLINE_MS: '300' });
    await waitFor('ready', () => p.output().includes('ready') || undefined, 30_000);
    p.child.kill('SIGHUP');
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain('hookledger: the stop took over 0.3 s; ending what is left.');
  }, 60_000);
});
