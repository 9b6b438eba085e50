/**
 * `npm start` stops cleanly whatever signals it (issue 39): SIGTERM or SIGINT to the npm process
 * alone (`kill PID`, a process manager, an IDE's stop button), SIGHUP to the whole group (the
 * terminal closed), in plain and assembly mode. Each time every process it started (npm's shell,
 * our Node, DynamoDB Local's JVM, esbuild, the assembly's function processes) ends, every port is
 * released and the state file removed within 10 s, and the output ends as Ctrl-C's does. When npm
 * itself is SIGKILLed (nothing relays anything) the stack notices it lost its parent and stops the
 * same way. A start after a SIGTERM resumes a delivery that was waiting when it stopped.
 *
 * Each case spawns the real `npm start` in its own process group with its own HOOKLEDGER_HOME.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../local/emulators';
import { readState } from '../../local/state';
import { editedAssembly, synthesizedAssembly } from '../assembly/support';
import { waitFor } from '../support/wait';
import { answers, doneBy, hookledger, type NpmStart, npmStart, postSigned, resumedCount, statePathOf } from './npm-start';
import { sleep } from './support';

/** What the issue allows from the signal to everything gone. */
const STOP_WITHIN_MS = 10_000;

/** pid -> parent pid of every live (not zombie) process, from /proc. */
function processTable(): Map<number, number> {
  const table = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z' && state !== 'X') table.set(Number(entry), Number(ppid));
    } catch {
      // Gone while being read.
    }
  }
  return table;
}

/** `root` and every process below it. */
function processTree(root: number): number[] {
  const table = processTable();
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of table) if (ppid === tree[i]) tree.push(pid);
  return tree;
}

const alive = (pids: readonly number[]) => {
  const table = processTable();
  return pids.filter((pid) => table.has(pid));
};

/** The ports a started stack listens on: webhook, DynamoDB Local, SQS, and the console and admin when it has them. */
function portsOf(started: NpmStart, webhookPort: number): Record<string, number> {
  const consoleUrl = /console URL\s+(http\S+)/.exec(started.output())?.[1];
  return {
    webhook: webhookPort,
    dynamodb: started.state.dynamo.port,
    sqs: started.state.sqs.port,
    ...(consoleUrl ? { console: Number(new URL(consoleUrl).port) } : {}),
    ...(started.state.adminUrl ? { admin: Number(new URL(started.state.adminUrl).port) } : {}),
  };
}

interface Stopped {
  readonly code: number | null;
  readonly output: string;
  /** From the signal to the last process gone and the last port closed. */
  readonly ms: number;
}

/**
 * Sends `signal` (to npm alone or to its group) and waits, at most STOP_WITHIN_MS, until every
 * process of the tree taken before it has ended and no port answers; then asserts the state file is gone.
 */
async function stopWith(started: NpmStart, home: string, webhookPort: number, signal: NodeJS.Signals, to: 'npm' | 'group') {
  const tree = processTree(started.child.pid as number);
  const ports = portsOf(started, webhookPort);
  expect(tree.length).toBeGreaterThan(2);
  const t0 = Date.now();
  if (to === 'npm') process.kill(started.child.pid as number, signal);
  else started.signal(signal);
  const open = async () =>
    (await Promise.all(Object.entries(ports).map(async ([name, port]) => ((await answers(port)) ? name : '')))).filter(Boolean);
  let left = { processes: alive(tree), ports: await open() };
  while (left.processes.length > 0 || left.ports.length > 0) {
    if (Date.now() - t0 > STOP_WITHIN_MS) break;
    await sleep(100);
    left = { processes: alive(tree), ports: await open() };
  }
  const ms = Date.now() - t0;
  console.log(`[stop-signals] ${signal} to ${to}: every process gone and every port closed in ${ms} ms`);
  for (const pid of left.processes) process.kill(pid, 'SIGKILL');
  expect({ signal, to, left }).toEqual({ signal, to, left: { processes: [], ports: [] } });
  const code = await started.exited;
  await started.closed;
  started.ddb.destroy();
  expect(await readState(statePathOf(home))).toBeUndefined();
  return { code, output: started.output(), ms } satisfies Stopped;
}

/** What follows "hookledger: stopping..." (Ctrl-C prints nothing more in plain mode). */
function afterStopping(output: string): string {
  const at = output.indexOf('hookledger: stopping...');
  expect(at, output).toBeGreaterThanOrEqual(0);
  return output.slice(at + 'hookledger: stopping...'.length).trim();
}

describe('npm start stops cleanly whatever signals it', () => {
  const homes: string[] = [];
  const running = new Set<NpmStart>();
  const newHome = () => {
    const home = mkdtempSync(path.join(tmpdir(), 'hookledger-stop-'));
    homes.push(home);
    return home;
  };
  const start = async (home: string, port: number, args: readonly string[] = []) => {
    const started = await npmStart(home, port, { npm: args, timeoutMs: 240_000 });
    running.add(started);
    void started.exited.then(() => running.delete(started));
    return started;
  };
  afterAll(async () => {
    for (const started of running) {
      for (const pid of alive(processTree(started.child.pid as number))) process.kill(pid, 'SIGKILL');
      started.signal('SIGKILL');
    }
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });

  it('SIGTERM to npm alone: everything ends within 10 s, exit 0, quiet; the next start delivers what was waiting', async () => {
    const home = newHome();
    const port = await freePort();
    const first = await start(home, port);
    expect((await hookledger(home, ['pause', 'risk-evaluator'])).code).toBe(0);
    expect(await postSigned(home, port, 'evt_01J8K7SG01')).toBe(202);
    await waitFor('billing-meter and audit-writer done', doneBy(first, 'evt_01J8K7SG01', 2), 60_000);

    const stopped = await stopWith(first, home, port, 'SIGTERM', 'npm');
    expect(stopped.code).toBe(0);
    expect(afterStopping(stopped.output)).toBe('');
    expect(stopped.output).not.toContain('npm error');

    const second = await start(home, port);
    expect(resumedCount(second.output())).toBe(1);
    expect((await hookledger(home, ['resume', 'risk-evaluator'])).code).toBe(0);
    expect(await waitFor('all three done', doneBy(second, 'evt_01J8K7SG01', 3), 60_000)).toEqual([
      'audit-writer',
      'billing-meter',
      'risk-evaluator',
    ]);
    const again = await stopWith(second, home, port, 'SIGTERM', 'npm');
    expect(again.code).toBe(0);
  }, 400_000);

  it('SIGINT to npm alone: everything ends within 10 s, exit 0, quiet', async () => {
    const home = newHome();
    const port = await freePort();
    const stopped = await stopWith(await start(home, port), home, port, 'SIGINT', 'npm');
    expect(stopped.code).toBe(0);
    expect(afterStopping(stopped.output)).toBe('');
    expect(stopped.output).not.toContain('npm error');
  }, 300_000);

  it('SIGHUP to the group (the terminal closed): everything ends within 10 s, quiet', async () => {
    const home = newHome();
    const port = await freePort();
    const stopped = await stopWith(await start(home, port), home, port, 'SIGHUP', 'group');
    expect(afterStopping(stopped.output)).toBe('');
    expect(stopped.output).not.toContain('ECONNREFUSED');
  }, 300_000);

  it('npm SIGKILLed (nothing relays a signal): the stack notices its parent is gone and stops within 10 s, quiet', async () => {
    const home = newHome();
    const port = await freePort();
    const stopped = await stopWith(await start(home, port), home, port, 'SIGKILL', 'npm');
    expect(afterStopping(stopped.output)).toBe('');
  }, 300_000);

  it('assembly mode, SIGTERM to npm alone: every function process ends within 10 s, exit 0, the least-privilege report as at Ctrl-C', async () => {
    // A private copy: a synth's own folder (CI's cdk.out) stages bundles 0777, which npm start refuses to run.
    const assembly = editedAssembly(synthesizedAssembly(), () => undefined);
    const home = newHome();
    const port = await freePort();
    const started = await start(home, port, ['--assembly', assembly]);
    expect(await postSigned(home, port, 'evt_01J8K7SG02')).toBe(202);
    await waitFor('delivered by the function processes', doneBy(started, 'evt_01J8K7SG02', 3), 90_000);

    const stopped = await stopWith(started, home, port, 'SIGTERM', 'npm');
    expect(stopped.code).toBe(0);
    expect(afterStopping(stopped.output)).toMatch(/^Least privilege, measured/);
    expect(stopped.output).not.toContain('npm error');
  }, 400_000);
});
