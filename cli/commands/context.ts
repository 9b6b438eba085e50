/**
 * What every command gets from `main`: the process's streams, the config, the stack it talks to
 * (built on first use), printing (`--json` or a formatter for people), a progress line and a
 * confirmation prompt. A command file is `register(program, ctx)` plus its own human formatter.
 */
import os from 'node:os';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import type { HookledgerConfig } from '../../core/config/schema';
import { WiringError } from '../../core/errors';
import type { OperatorDeps, Progress } from '../../ops/deps';
import type { Target } from '../../ops/target';

export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  /** Resolves when a long-running command (`console`) should stop; default: Ctrl-C (SIGINT) or SIGTERM. */
  readonly interrupted?: Promise<void>;
  /**
   * Lets `import()` load the project's TypeScript as it is (a consumer's transform), where the process
   * cannot yet: the prebuilt CLI (bin/cli.ts). Absent where it can already (tsx, the test runner).
   */
  readonly loadTypeScript?: () => Promise<void>;
}

/** The options every command accepts (declared on the program). */
export interface Globals {
  readonly stack?: string;
  readonly region?: string;
  readonly json?: boolean;
}

/** Whatever a command's action resolves to: an exit code, or nothing for 0. */
type Outcome = Promise<number | void>;

/**
 * The configuration, or how to load it: the shipped one is imported by the first action that reads it,
 * so `--help` and `providers` never load the schema (zod) nor check the configuration.
 */
export type ConfigSource = HookledgerConfig | (() => Promise<HookledgerConfig>);

export interface CommandContext {
  readonly io: CliIo;
  /** Loaded before the action runs (an action with `{ config: false }` must not read it, but may load it). */
  readonly config: HookledgerConfig;
  /** The configuration, loaded (and checked) on the first call: what an action with `{ config: false }` calls when it needs it. */
  loadConfig(): Promise<HookledgerConfig>;
  /** Repository root: where .hookledger/ and cdk.json live. */
  readonly root: string;
  /** Recorded on audit items: $USER. */
  readonly operator: string;
  /** A line on stderr (warnings; errors are printed by `main`). */
  warn(text: string): void;
  /** The data as JSON under --json, otherwise what `human` makes of it. */
  print(globals: Globals, data: unknown, human: () => string): void;
  /** A `label: done/total` line on a terminal's stderr; `end()` closes it before anything else is printed. */
  progress(label: string): Progress & { end(): void };
  /** Asks on a terminal; scripts (no TTY) and --yes go ahead. */
  confirm(yes: boolean | undefined, question: string): Promise<boolean>;
  /** Table access for the operations, recorded as done by `operator`. */
  opsDeps(target: Target): OperatorDeps & { config: HookledgerConfig };
  /**
   * A commander action that records the exit code it resolves to. The configuration is loaded first,
   * unless `config: false` (a command that never reads it).
   */
  action<A extends unknown[]>(
    fn: (globals: Globals, ...args: A) => Outcome,
    options?: { readonly config?: boolean },
  ): (...args: A) => Promise<void>;
  /**
   * An action that reaches the stack through `connect()`, called after the arguments are checked
   * (a usage error never waits on the network); the clients are closed afterwards. With
   * `{ config: false }` the action loads the configuration itself (`loadConfig`), e.g. while the stack
   * answers its reads: the local stack connects without it; a deployed one (`--stack`) loads it first,
   * since its outputs are read per configured consumer.
   */
  withTarget<A extends unknown[]>(
    fn: (connect: () => Promise<Target>, globals: Globals, ...args: A) => Outcome,
    options?: { readonly config?: boolean },
  ): (...args: A) => Promise<void>;
}

/** The context for one command line, and the exit code its action resolved to. */
export function createContext(io: CliIo, source: ConfigSource, root: string): CommandContext & { exitCode(): number } {
  let exitCode = 0;
  const { config, load: loadConfig } = configLoader(source);
  const out = (text: string) => io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  const operator = io.env.USER || io.env.USERNAME || safeUsername();

  const action: CommandContext['action'] =
    (fn, options) =>
    async (...args) => {
      if (options?.config !== false) await loadConfig();
      // Commander passes the command itself last.
      const command = args[args.length - 1] as Command;
      const code = await fn(command.optsWithGlobals<Globals>(), ...args);
      if (typeof code === 'number') exitCode = code;
    };

  return {
    io,
    get config() {
      return config();
    },
    loadConfig,
    root,
    operator,
    exitCode: () => exitCode,
    warn: (text) => void io.stderr.write(`${text}\n`),
    print: (globals, data, human) => void out(globals.json ? JSON.stringify(data, null, 2) : human()),
    progress: (label) => progressLine(io, label),
    confirm: (yes, question) => confirmOn(io, yes, question),
    opsDeps: (target) => ({
      ddb: target.ddb,
      tables: target.tables,
      operator,
      config: config(),
      ...(target.payloadBucket ? { blobs: target.payloadBucket } : {}),
    }),
    action,
    withTarget: (fn, options) =>
      action(async (globals, ...args) => {
        let target: Target | undefined;
        // Loaded with the first connect: the target's clients are the AWS SDK, which `--help` never needs.
        const connect = async () => {
          if (target) return target;
          if (globals.stack !== undefined) await loadConfig();
          target = await (await import('../../ops/target')).resolveTarget({
            // A getter: the local target reads it on first use of its secrets, so an action with
            // { config: false } connects before it has loaded the configuration.
            get config() {
              return config();
            },
            root,
            stack: globals.stack,
            region: globals.region,
            env: io.env,
          });
          // On stderr, so --json's stdout stays the data alone.
          for (const notice of target.notices ?? []) io.stderr.write(`${notice}\n`);
          return target;
        };
        try {
          return await fn(connect, globals, ...args);
        } finally {
          target?.destroy();
        }
      }, options),
  };
}

/** The configuration as it is, or loaded once by the first `load()`; `config()` before that is a wiring error. */
function configLoader(source: ConfigSource): { config(): HookledgerConfig; load(): Promise<HookledgerConfig> } {
  let loaded = typeof source === 'function' ? undefined : source;
  let loading: Promise<HookledgerConfig> | undefined;
  return {
    config: () => {
      if (!loaded) throw new WiringError('the configuration was read before it was loaded: an action with { config: false } read it');
      return loaded;
    },
    load: async () => {
      if (loaded) return loaded;
      loading ??= typeof source === 'function' ? source() : Promise.resolve(source);
      loaded = await loading;
      return loaded;
    },
  };
}

/** A `label: done/total` line rewritten in place on a terminal's stderr; nothing elsewhere. */
function progressLine(io: CliIo, label: string): Progress & { end(): void } {
  const live = io.stderr.isTTY === true;
  let shown = false;
  const report = ((done: number, total: number | undefined) => {
    if (!live) return;
    shown = true;
    io.stderr.write(`\r${label}: ${done}${total !== undefined ? `/${total}` : ''}   `);
  }) as Progress & { end(): void };
  report.end = () => {
    if (shown) io.stderr.write('\n');
    shown = false;
  };
  return report;
}

async function confirmOn(io: CliIo, yes: boolean | undefined, question: string): Promise<boolean> {
  if (yes || !io.stdin.isTTY || !io.stderr.isTTY) return true;
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

function safeUsername(): string {
  try {
    return os.userInfo().username;
  } catch {
    return 'unknown';
  }
}
