/**
 * `npm start` as a user runs it: bin/start.ts in its own process group (as a terminal runs a
 * foreground job), with its data, secrets and state file in a folder of the test's (HOOKLEDGER_HOME)
 * and the gateway on a fixed port, so a restart answers on the same URL. Ctrl-C is SIGINT to the
 * whole group (the JVM gets it too, as from a terminal); a crash is SIGKILL to the whole group.
 * By default Node runs bin/start.ts itself with tsx's loader (the process the `start` script execs);
 * `npm` runs the `start` script through npm (`npm start -- <args>`), as a user types it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import path from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { scanAll } from '../../adapters/table-scan';
import type { LedgerItem } from '../../core/model';
import { PROJECT_ROOT as ROOT } from '../../core/paths';
import { FileSecrets } from '../../local/secrets-file';
import { type LocalStackState, readStackCredentials, readState } from '../../local/state';
import { localDocumentClient } from '../../local/wiring';
import { signedHeaders } from '../support/factories';

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
  { timeoutMs = 90_000, npm }: { timeoutMs?: number; npm?: readonly string[] } = {},
): Promise<NpmStart> {
  const t0 = Date.now();
  const [command, argv] = npm
    ? ['npm', ['start', ...(npm.length > 0 ? ['--', ...npm] : [])]]
    : [process.execPath, ['--import', 'tsx', 'bin/start.ts']];
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
  // Through npm, the stack runs in npm's child process.
  if (!state || (!npm && state.pid !== child.pid))
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

/** Whether something accepts TCP connections on the loopback `port`. */
export const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** POSTs a platform webhook for tenant_204, signed with the stack's local secret; the answer's status. */
export async function postSigned(home: string, port: number, eventId: string): Promise<number> {
  const body = JSON.stringify({
    id: eventId,
    type: 'payment.succeeded',
    tenant_id: 'tenant_204',
    key_id: 'key_42',
    data: { amount: 1200 },
  });
  const res = await fetch(`http://127.0.0.1:${port}/hooks/platform`, {
    method: 'POST',
    headers: signedHeaders(body, { secret: await signingSecret(home), msgId: `msg_${eventId}`, at: Date.now() }),
    body,
  });
  return res.status;
}

/** A waitFor probe: the consumers done with `eventId`, sorted, once there are `count` of them. */
export const doneBy = (started: NpmStart, eventId: string, count: number) => async () => {
  const rows = await scanAll<LedgerItem>(started.ddb, { TableName: started.state.tables.ledger, ConsistentRead: true });
  const done = rows.filter((r) => r.eventId === eventId && r.state === 'done').map((r) => r.consumerId);
  return done.length === count ? done.sort() : undefined;
};
