/**
 * Each Lambda function of the assembly in a process of its own (runner.mjs), started with the
 * environment the template sets plus what Lambda adds (region, the function's own credentials, its
 * name and memory) and `AWS_ENDPOINT_URL_*` pointing the real SDK clients at the checked proxies.
 * A process per function, because `process.env` and the SDK's credential chain are per process: two
 * bundles in one process would share credentials and environment, and IAM could not tell them apart.
 * Invocations run one at a time per process, like a Lambda sandbox; `Timeout` kills the process
 * (the next invocation gets a new one, a cold start) and MemorySize caps its heap.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HookledgerError } from '../../core/errors';

export class FunctionError extends HookledgerError {
  override readonly name: string = 'FunctionError';
  constructor(
    readonly errorName: string,
    message: string,
  ) {
    super(message);
  }
}

export interface LocalFunctionOptions {
  readonly logicalId: string;
  readonly functionName: string;
  readonly functionArn: string;
  readonly codeDir: string;
  readonly handler: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly timeoutSeconds: number;
  readonly memorySize: number;
  /** Each line the function writes (its logs, its EMF metrics). */
  readonly onLog?: (line: string) => void;
}

export interface LocalFunction {
  readonly logicalId: string;
  /** Resolves once the bundle's module scope ran (rejects when it threw). */
  ready(): Promise<void>;
  invoke<T = unknown>(event: unknown): Promise<T>;
  stop(): Promise<void>;
}

const RUNNER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'runner.mjs');

/** An invocation sent to the sandbox, waiting for its answer. */
interface Waiter {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
}

/** One process running the bundle, and the invocation it is running (at most one: `invoke` queues). */
interface Sandbox {
  readonly child: ChildProcess;
  /** Resolves once the bundle's module scope ran; rejects when it failed or the process exited first. */
  readonly ready: Promise<void>;
  readonly pending: Map<string, Waiter>;
}

/** What runner.mjs sends: `ready` once its cold start ran, then one answer per invocation id. */
interface RunnerMessage {
  readonly ready?: boolean;
  readonly id?: string;
  readonly ok?: boolean;
  readonly result?: unknown;
  readonly error?: { readonly name: string; readonly message: string };
}

/** One function's state: its live sandbox (none after a timeout or an exit, until the next call), its queue of invocations. */
interface FunctionState {
  readonly options: LocalFunctionOptions;
  sandbox: Sandbox | undefined;
  queue: Promise<unknown>;
  stopped: boolean;
}

export function startLocalFunction(options: LocalFunctionOptions): LocalFunction {
  const state: FunctionState = { options, sandbox: undefined, queue: Promise.resolve(), stopped: false };
  state.sandbox = spawnSandbox(state);
  return {
    logicalId: options.logicalId,
    ready: () => currentSandbox(state).ready,
    invoke: <T>(event: unknown) => enqueue(state, event) as Promise<T>,
    stop: () => stopFunction(state),
  };
}

/** The live sandbox, or a new one (a cold start). */
function currentSandbox(state: FunctionState): Sandbox {
  state.sandbox ??= spawnSandbox(state);
  return state.sandbox;
}

function spawnSandbox(state: FunctionState): Sandbox {
  const { options } = state;
  const child = forkRunner(options);
  forwardLines(child, options.onLog);
  const pending = new Map<string, Waiter>();
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (message: RunnerMessage) => answer(options.logicalId, message, pending, { resolve: () => resolve(), reject }));
    child.once('exit', (code, signal) => {
      const error = new FunctionError('Runtime.ExitError', `${options.logicalId} exited (${signal ?? code})`);
      reject(error);
      for (const waiter of pending.values()) waiter.reject(error);
      pending.clear();
      if (state.sandbox?.child === child) state.sandbox = undefined;
    });
  });
  ready.catch(() => undefined);
  return { child, ready, pending };
}

/** runner.mjs in a process of its own, with the function's environment and its memory as the heap limit. */
function forkRunner(options: LocalFunctionOptions): ChildProcess {
  return fork(RUNNER, [], {
    env: {
      ...options.environment,
      HOOKLEDGER_CODE_DIR: options.codeDir,
      HOOKLEDGER_FUNCTION_ARN: options.functionArn,
      _HANDLER: options.handler,
    },
    execArgv: [`--max-old-space-size=${options.memorySize}`],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
}

/** Each non-blank line the process writes, to `onLog` (a line split across chunks is joined first). */
function forwardLines(child: ChildProcess, onLog: ((line: string) => void) | undefined): void {
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') onLog?.(line);
    });
  }
}

/** Settles the cold start (`ready`) or the invocation a runner message answers. */
function answer(logicalId: string, message: RunnerMessage, pending: Map<string, Waiter>, coldStart: Waiter): void {
  const failure = (prefix: string) =>
    new FunctionError(message.error?.name ?? 'Error', `${prefix}${message.error?.name}: ${message.error?.message}`);
  if (message.ready === true) {
    coldStart.resolve(undefined);
  } else if (message.ready === false) {
    coldStart.reject(failure(`${logicalId} failed at cold start: `));
  } else if (message.id) {
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.ok) waiter?.resolve(message.result);
    else waiter?.reject(failure(''));
  }
}

/** Runs `event` after the invocations before it, one at a time, as a Lambda sandbox does. */
function enqueue(state: FunctionState, event: unknown): Promise<unknown> {
  const result = state.queue.then(() => invokeOnce(state, event));
  state.queue = result.catch(() => undefined);
  return result;
}

async function invokeOnce(state: FunctionState, event: unknown): Promise<unknown> {
  if (state.stopped) throw new FunctionError('Stopped', `${state.options.logicalId} is stopped`);
  const sandbox = currentSandbox(state);
  await sandbox.ready;
  return send(state, sandbox, event);
}

/** Sends one invocation and waits for its answer, killing the sandbox when `Timeout` passes first. */
function send(state: FunctionState, sandbox: Sandbox, event: unknown): Promise<unknown> {
  const { timeoutSeconds } = state.options;
  const id = randomUUID();
  const deadline = Date.now() + timeoutSeconds * 1000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sandbox.pending.delete(id);
      // Lambda ends the sandbox: the next invocation starts cold, in a new process at once rather
      // than in this one, which is still on its way out when the next invocation is sent.
      if (state.sandbox === sandbox) state.sandbox = undefined;
      sandbox.child.kill('SIGKILL');
      reject(new FunctionError('Sandbox.Timedout', `Task timed out after ${timeoutSeconds.toFixed(2)} seconds`));
    }, timeoutSeconds * 1000);
    sandbox.pending.set(id, {
      resolve: (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      reject: (error) => {
        clearTimeout(timer);
        reject(error);
      },
    });
    sandbox.child.send({ id, event, deadline, requestId: id });
  });
}

async function stopFunction(state: FunctionState): Promise<void> {
  state.stopped = true;
  const current = state.sandbox;
  state.sandbox = undefined;
  if (!current || current.child.exitCode !== null || current.child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    current.child.once('exit', () => resolve());
    current.child.kill('SIGTERM');
  });
}
