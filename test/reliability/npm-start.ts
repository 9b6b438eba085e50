/**
 * `npm start` as a user runs it: bin/start.ts in its own process group (as a terminal runs a
 * foreground job), with its data, secrets and state file in a folder of the test's (HOOKLEDGER_HOME)
 * and the gateway on a fixed port, so a restart answers on the same URL. Ctrl-C is SIGINT to the
 * whole group (the JVM gets it too, as from a terminal); a crash is SIGKILL to the whole group.
 * By default Node runs bin/start.ts itself with tsx's loader (the process the `start` script execs);
 * `tsxCli` runs it through tsx's command line (a tsx process relaying signals to the Node process
 * that runs the stack); `npm` runs the `start` script through npm (`npm start -- <args>`), as a user
 * types it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PROJECT_ROOT as ROOT } from '../../core/paths';
import { FileSecrets } from '../../local/secrets-file';
import { type LocalStackState, readStackCredentials, readState } from '../../local/state';
import { localDocumentClient } from '../../local/wiring';

export interface NpmStart {
  readonly child: ChildProcess;
  readonly state: LocalStackState;
  readonly ddb: DynamoDBDocumentClient;
  /** Everything it printed (stdout and stderr). */
  readonly output: () => string;
  readonly startMs: number;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** Resolves once every process holding its stdout and stderr closed them (all output read). */
  readonly closed: Promise<void>;
  /** Signal to the whole process group. */
  signal(signal: NodeJS.Signals): void;
}

export const statePathOf = (home: string) => path.join(home, 'state.json');

export async function npmStart(
  home: string,
  port: number,
  { timeoutMs = 90_000, tsxCli = false, npm }: { timeoutMs?: number; tsxCli?: boolean; npm?: readonly string[] } = {},
): Promise<NpmStart> {
  const t0 = Date.now();
  const args = tsxCli ? [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'bin/start.ts'] : ['--import', 'tsx', 'bin/start.ts'];
  const [command, argv] = npm ? ['npm', ['start', ...(npm.length > 0 ? ['--', ...npm] : [])]] : [process.execPath, args];
  const child = spawn(command, argv, {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, HOOKLEDGER_HOME: home, HOOKLEDGER_PORT: String(port), HOOKLEDGER_LOG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-200_000)));
  child.stderr?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-200_000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, s);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  };
  const deadline = Date.now() + timeoutMs;
  while (!output.includes('hookledger is running')) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      signal('SIGKILL');
      throw new Error(`npm start did not come up within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const state = await readState(statePathOf(home));
  // Through tsx's command line, the stack runs in tsx's child process; through npm, in npm's.
  if (!state || (!npm && (tsxCli ? state.pid === child.pid : state.pid !== child.pid)))
    throw new Error(`state file of npm start (pid ${child.pid}) not written: ${JSON.stringify(state)}`);
  // Signed with that stack's per-start credential (its DynamoDB Local accepts no other key).
  const ddb = localDocumentClient(state.dynamo.endpoint, await readStackCredentials(statePathOf(home), state));
  return { child, state, ddb, output: () => output, startMs: Date.now() - t0, exited, closed, signal };
}

/** The local signing secret `npm start` keeps in HOOKLEDGER_HOME. */
export async function signingSecret(home: string): Promise<string> {
  const file = path.join(home, 'secrets.json');
  if (!existsSync(file)) throw new Error(`${file} does not exist`);
  return (await new FileSecrets({ path: file, sourceIds: ['platform'] }).get('platform')).current;
}

/** What the start-up repair printed: `Resumed from the last run: N unfinished deliveries re-queued`. */
export function resumedCount(output: string): number {
  const match = /Resumed from the last run: (\d+) unfinished deliveries re-queued/.exec(output);
  return match ? Number(match[1]) : 0;
}

/** One `hookledger` command line, in-process, against the `npm start` of HOOKLEDGER_HOME `home`. */
export async function hookledger(home: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import('../../bin/cli');
  const { Writable } = await import('node:stream');
  let stdout = '';
  let stderr = '';
  const sink = (write: (s: string) => void) =>
    new Writable({
      write(chunk, _enc, done) {
        write(String(chunk));
        done();
      },
    });
  const code = await main(args, {
    stdout: sink((s) => (stdout += s)),
    stderr: sink((s) => (stderr += s)),
    stdin: process.stdin,
    env: { ...process.env, HOOKLEDGER_STATE: statePathOf(home), USER: 'reliability' },
  });
  return { code, stdout, stderr };
}
