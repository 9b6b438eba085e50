/**
 * `.hookledger/state.json`: where a running local stack can be found (endpoints, ports, tables,
 * queues, webhook URL, pid), written by the stack at start and removed at stop, read by the CLI and
 * by tests. Holds no secrets: the stack's per-start credential (local/credentials.ts) is written
 * beside it, 0600, in `state.credentials.json` (`credentialsFile` names it), and removed with it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import * as z from 'zod';
import { HookledgerError } from '../core/errors';
import { privateDir } from '../core/paths';
import type { LocalStackCredentials } from './credentials';

export const DEFAULT_STATE_FILE = '.hookledger/state.json';

const queueSchema = z.object({ url: z.string().url(), arn: z.string().min(1) });
const endpointSchema = z.object({ endpoint: z.string().url(), port: z.number().int().positive() });

export const localStackStateSchema = z.object({
  version: z.literal(1),
  pid: z.number().int().positive(),
  startedAt: z.string(),
  region: z.string(),
  dynamo: endpointSchema.extend({ dbPath: z.string().nullable() }),
  sqs: endpointSchema,
  gateway: z.object({ url: z.string().url(), port: z.number().int().positive() }),
  /** Template with `{source}`, e.g. http://127.0.0.1:4010/hooks/{source}. */
  webhookUrl: z.string(),
  /** The stack's loopback control endpoint (pause/resume), when it has one. */
  adminUrl: z.string().url().optional(),
  /** Path of the local secrets file (never its content). */
  secretsFile: z.string().optional(),
  /** Path of the per-start credential's file (never its content); absent for a stack started before it existed. */
  credentialsFile: z.string().optional(),
  tables: z.object({ events: z.string(), ledger: z.string() }),
  queues: z.record(z.string(), queueSchema.extend({ dlqUrl: z.string().url(), dlqArn: z.string().min(1) })),
  fanoutFailureQueue: queueSchema,
  /** The configuration file as the stack read it at start; absent for a stack started before it was recorded. */
  config: z.object({ file: z.string(), sha256: z.string() }).optional(),
});

export type LocalStackState = z.infer<typeof localStackStateSchema>;

/** What a running stack hands to writeState: its state and the credential written beside it. */
export type RunningStackState = LocalStackState & { readonly credentials?: LocalStackCredentials };

const credentialsSchema = z.object({
  accessKeyId: z.string().min(16),
  secretAccessKey: z.string().min(32),
  adminToken: z.string().min(32),
});

export class StateFileError extends HookledgerError {
  override readonly name = 'StateFileError';
}

/** `<dir>/state.json` -> `<dir>/state.credentials.json`. */
export function credentialsPathOf(statePath: string): string {
  return statePath.endsWith('.json') ? `${statePath.slice(0, -'.json'.length)}.credentials.json` : `${statePath}.credentials.json`;
}

/** Writes the state (and, 0600 beside it, its credential), each atomically: readers never see half a file. */
export async function writeState(path: string, state: RunningStackState): Promise<void> {
  const { credentials, ...rest } = state;
  const credentialsFile = credentials ? credentialsPathOf(path) : rest.credentialsFile;
  const valid = localStackStateSchema.parse({ ...rest, ...(credentialsFile ? { credentialsFile } : {}) });
  privateDir(dirname(path));
  if (credentials) await writePrivate(credentialsPathOf(path), credentialsSchema.parse(credentials));
  await writePrivate(path, valid);
}

async function writePrivate(path: string, value: unknown): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, path);
}

/** The recorded state, or undefined when there is no state file. Throws on a malformed one. */
export async function readState(path: string): Promise<LocalStackState | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new StateFileError(`${path} is not valid JSON; delete it if no local stack is running`, { cause });
  }
  const result = localStackStateSchema.safeParse(parsed);
  if (!result.success) {
    throw new StateFileError(`${path} is not a hookledger local-stack state file (${result.error.issues[0]?.message ?? 'invalid'})`);
  }
  return result.data;
}

/** The state of a stack whose process is still alive; undefined when none is running. */
export async function readRunningState(path: string): Promise<LocalStackState | undefined> {
  const state = await readState(path);
  return state && isProcessAlive(state.pid) ? state : undefined;
}

export async function removeState(path: string): Promise<void> {
  await Promise.all([rm(path, { force: true }), rm(credentialsPathOf(path), { force: true })]);
}

/**
 * The per-start credential of the stack whose state file is `statePath` (read from it unless given):
 * what a process that did not start the stack (the CLI, the console, a test) signs its calls with.
 */
export async function readStackCredentials(statePath: string, state?: LocalStackState): Promise<LocalStackCredentials> {
  const current = state ?? (await readState(statePath));
  if (!current?.credentialsFile) {
    throw new StateFileError(
      `${statePath} names no credentials file: the local stack was started by an older version; restart \`npm start\``,
    );
  }
  let text: string;
  try {
    text = await readFile(current.credentialsFile, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new StateFileError(
      `cannot read ${current.credentialsFile}, the local stack's per-start credential (${code}); restart \`npm start\` to write a new one`,
      { cause: error },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new StateFileError(`${current.credentialsFile} is not valid JSON; restart \`npm start\` to write a new one`, { cause });
  }
  const result = credentialsSchema.safeParse(parsed);
  if (!result.success) {
    throw new StateFileError(
      `${current.credentialsFile} is not a hookledger credentials file (${result.error.issues[0]?.path.join('.') ?? 'invalid'})`,
    );
  }
  return result.data;
}

export function webhookUrlFor(state: Pick<LocalStackState, 'webhookUrl'>, sourceId: string): string {
  return state.webhookUrl.replace('{source}', encodeURIComponent(sourceId));
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export type ConfigFingerprint = NonNullable<LocalStackState['config']>;

/** The configuration file's content hash, recorded at start; undefined when it cannot be read. */
export function configFingerprint(file: string): ConfigFingerprint | undefined {
  try {
    return { file, sha256: createHash('sha256').update(readFileSync(file)).digest('hex') };
  } catch {
    return undefined;
  }
}

/**
 * The line saying the configuration file changed since the stack recorded in `state` started (the
 * stack still runs the configuration it read then), or undefined when it did not or is not recorded.
 */
export function configChangedNotice(state: Pick<LocalStackState, 'config' | 'startedAt'>): string | undefined {
  if (!state.config) return undefined;
  const now = configFingerprint(state.config.file);
  if (now?.sha256 === state.config.sha256) return undefined;
  const name = basename(state.config.file);
  return `${name} changed since this stack started (${state.startedAt}): restart \`npm start\` to apply it`;
}
