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

interface Sandbox {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly pending: Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>;
}

export function startLocalFunction(options: LocalFunctionOptions): LocalFunction {
  let sandbox: Sandbox | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let stopped = false;

  const spawn = (): Sandbox => {
    const child = fork(RUNNER, [], {
      env: {
        ...options.environment,
        HOOKLEDGER_CODE_DIR: options.codeDir,
        HOOKLEDGER_FUNCTION_ARN: options.functionArn,
        _HANDLER: options.handler,
      },
      execArgv: [`--max-old-space-size=${options.memorySize}`],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const pending = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
    for (const stream of [child.stdout, child.stderr]) {
      let rest = '';
      stream?.on('data', (chunk: Buffer) => {
        const lines = (rest + chunk.toString('utf8')).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) if (line.trim() !== '') options.onLog?.(line);
      });
    }
    const ready = new Promise<void>((resolve, reject) => {
      child.on(
        'message',
        (message: { ready?: boolean; id?: string; ok?: boolean; result?: unknown; error?: { name: string; message: string } }) => {
          if (message.ready === true) return resolve();
          if (message.ready === false)
            return reject(
              new FunctionError(
                message.error?.name ?? 'Error',
                `${options.logicalId} failed at cold start: ${message.error?.name}: ${message.error?.message}`,
              ),
            );
          const waiter = message.id ? pending.get(message.id) : undefined;
          if (!waiter || !message.id) return;
          pending.delete(message.id);
          if (message.ok) waiter.resolve(message.result);
          else waiter.reject(new FunctionError(message.error?.name ?? 'Error', `${message.error?.name}: ${message.error?.message}`));
        },
      );
      child.once('exit', (code, signal) => {
        const error = new FunctionError('Runtime.ExitError', `${options.logicalId} exited (${signal ?? code})`);
        reject(error);
        for (const waiter of pending.values()) waiter.reject(error);
        pending.clear();
        if (sandbox?.child === child) sandbox = undefined;
      });
    });
    ready.catch(() => undefined);
    return { child, ready, pending };
  };

  const run = async (event: unknown): Promise<unknown> => {
    if (stopped) throw new FunctionError('Stopped', `${options.logicalId} is stopped`);
    sandbox ??= spawn();
    const current = sandbox;
    await current.ready;
    const id = randomUUID();
    const deadline = Date.now() + options.timeoutSeconds * 1000;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        current.pending.delete(id);
        // Lambda ends the sandbox: the next invocation starts cold.
        current.child.kill('SIGKILL');
        reject(new FunctionError('Sandbox.Timedout', `Task timed out after ${options.timeoutSeconds.toFixed(2)} seconds`));
      }, options.timeoutSeconds * 1000);
      current.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      current.child.send({ id, event, deadline, requestId: id });
    });
  };

  sandbox = spawn();
  return {
    logicalId: options.logicalId,
    ready() {
      sandbox ??= spawn();
      return sandbox.ready;
    },
    invoke<T>(event: unknown): Promise<T> {
      const result = queue.then(() => run(event));
      queue = result.catch(() => undefined);
      return result as Promise<T>;
    },
    async stop() {
      stopped = true;
      const current = sandbox;
      sandbox = undefined;
      if (!current || current.child.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        current.child.once('exit', () => resolve());
        current.child.kill('SIGTERM');
      });
    },
  };
}
