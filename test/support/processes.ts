/**
 * Child processes as a user runs them: `hookledger` as `npx hookledger` starts it (a Node process
 * on bin/hookledger.mjs), its output captured whole, and waiting for a long-running process to print
 * what a test needs (a condition, not a clock).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `hookledger <args>` run from `root` (a checkout or a copy of it) with `env` added to this process's. */
export function runHookledgerBin(root: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bin/hookledger.mjs'), ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Waits until `check` holds, polling every 100 ms; past `timeoutMs` fails with the tail of `output()`. */
export async function waitForOutput(check: () => boolean, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms; output so far:\n${output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
