/**
 * The CLI's start (issue 39 item 1): `hookledger --help` and `hookledger providers --json` against a
 * bare `node -e 0`, and `hookledger status --json` on a running local stack, each a process spawned as
 * a user runs it (`node bin/hookledger.mjs ...`: the prebuilt CLI, bin/build-cli.mjs). Samples are
 * taken round robin (one of each command per round), so a machine busy for a moment slows all of them
 * alike; each figure is the median wall time of its samples, a ratio is a median over the bare median.
 *
 * One call before the rounds builds the CLI when its sources changed since the last build: no sample
 * includes a build.
 *
 * `npx tsx bench/cli-start.ts` runs it alone on a local stack of its own (in memory).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../core/paths';
import { type LocalStack, stackState, startLocalStack } from '../local/stack';
import { writeState } from '../local/state';
import { BenchRunError, runToExit } from './errors';
import { printNotes, printTable } from './report';
import { median, round } from './stats';

const CLI = path.join(PROJECT_ROOT, 'bin/hookledger.mjs');
/** Samples of each command: the median of 5. */
export const CLI_START_RUNS = 5;
/** What the issue asks: `--help` and `providers --json` within this many bare node starts. */
export const CLI_START_RATIO_LIMIT = 3;
/** And `status --json` on the local stack under this many ms. */
export const CLI_STATUS_LIMIT_MS = 500;
/** A command that takes longer is stuck, not slow. */
const SPAWN_TIMEOUT_MS = 60_000;

export interface CliStartRow {
  readonly command: string;
  readonly samplesMs: readonly number[];
  readonly medianMs: number;
  /** Median over the bare `node -e 0` median; absent for the bare row itself. */
  readonly ratio?: number;
}

export interface CliStartResult {
  readonly runs: number;
  readonly rows: readonly CliStartRow[];
  /** `--help` and `providers --json`: the larger of their two ratios (the figure). */
  readonly startRatio: number;
  /** `status --json` on the local stack: median ms; absent when no stack was given. */
  readonly statusMs?: number;
}

interface Command {
  readonly label: string;
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

/** One process, start to exit, in ms; a failed command stops the bench (its figure would measure an error). */
function timedRun(command: Command): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...command.args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...command.env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), SPAWN_TIMEOUT_MS);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      const ms = performance.now() - started;
      if (code === 0) resolve(ms);
      else reject(new BenchRunError(`${command.label} exited ${code}: ${stderr.trim() || '(no output)'}`));
    });
  });
}

/** The commands measured; `status --json` only with a state file to point it at. */
function commandsOf(statePath: string | undefined): Command[] {
  const commands: Command[] = [
    { label: 'node -e 0', args: ['-e', '0'] },
    { label: 'hookledger --help', args: [CLI, '--help'] },
    { label: 'hookledger providers --json', args: [CLI, 'providers', '--json'] },
  ];
  if (statePath) {
    commands.push({ label: 'hookledger status --json', args: [CLI, 'status', '--json'], env: { HOOKLEDGER_STATE: statePath } });
  }
  return commands;
}

/**
 * Measures the CLI's start, `runs` samples of each command round robin. With `stack`, `status --json`
 * runs against it through a state file written for it (as `npm start` writes one).
 */
export async function measureCliStart(
  options: { stack?: LocalStack; runs?: number; log?: (line: string) => void } = {},
): Promise<CliStartResult> {
  const runs = options.runs ?? CLI_START_RUNS;
  const log = options.log ?? console.log;
  log(`cli start: node -e 0, hookledger --help, providers --json${options.stack ? ', status --json' : ''}, ${runs} rounds...`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hookledger-cli-start-'));
  try {
    const statePath = options.stack ? path.join(dir, 'state.json') : undefined;
    if (options.stack && statePath) await writeState(statePath, stackState(options.stack, null));
    const commands = commandsOf(statePath);
    // Builds the CLI if its sources changed, outside the samples.
    await timedRun(commands[1] as Command);
    const samples = commands.map(() => [] as number[]);
    for (let round = 0; round < runs; round++) {
      for (const [i, command] of commands.entries()) samples[i]?.push(await timedRun(command));
    }
    return resultOf(commands, samples, runs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function resultOf(commands: readonly Command[], samples: readonly number[][], runs: number): CliStartResult {
  const bare = median(samples[0] ?? []);
  const rows = commands.map((command, i): CliStartRow => {
    const ms = samples[i] ?? [];
    const medianMs = median(ms);
    return {
      command: command.label,
      samplesMs: ms.map(round),
      medianMs: round(medianMs),
      ...(i === 0 ? {} : { ratio: round(medianMs / bare) }),
    };
  });
  const status = rows.find((r) => r.command === 'hookledger status --json');
  return {
    runs,
    rows,
    startRatio: Math.max(rows[1]?.ratio ?? Number.NaN, rows[2]?.ratio ?? Number.NaN),
    ...(status ? { statusMs: status.medianMs } : {}),
  };
}

export function printCliStart(r: CliStartResult): void {
  printTable(
    `CLI start (median of ${r.runs}, each a process; ratio: over the bare node start)`,
    ['command', 'median ms', 'ratio', 'samples ms'],
    r.rows.map((row) => [row.command, String(row.medianMs), row.ratio === undefined ? '-' : `${row.ratio}x`, row.samplesMs.join(' ')]),
  );
  printNotes([
    `start ratio ${r.startRatio}x (--help, providers --json; the issue asks at most ${CLI_START_RATIO_LIMIT}x)` +
      (r.statusMs === undefined ? '' : `; status --json ${r.statusMs} ms on the local stack (asked: under ${CLI_STATUS_LIMIT_MS} ms)`),
    'the prebuilt CLI (bin/build-cli.mjs); a build after a source changed is left out of the samples',
  ]);
}

/**
 * The CLI's start with `status --json` on a fresh local stack of its own (in memory): what a user's
 * first `status` reads, not the bench's table of thousands of webhooks (status reads its window).
 */
export async function measureCliStartOnFreshStack(options: { runs?: number; log?: (line: string) => void } = {}): Promise<CliStartResult> {
  const secretsDir = mkdtempSync(path.join(os.tmpdir(), 'hookledger-cli-start-secrets-'));
  const stack = await startLocalStack({
    dataDir: null,
    httpPort: 0,
    secretsFile: path.join(secretsDir, 'secrets.json'),
    ttlSweepIntervalMs: null,
  });
  try {
    return await measureCliStart({ ...options, stack });
  } finally {
    await stack.stop();
    rmSync(secretsDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  runToExit(async () => printCliStart(await measureCliStartOnFreshStack()));
}
