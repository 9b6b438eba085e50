/**
 * `.hookledger/state.json`: where a running local stack can be found (endpoints, ports, tables,
 * queues, webhook URL, pid), written by the stack at start and removed at stop, read by the CLI and
 * by tests. Holds no secrets.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { HookledgerError } from '../core/errors';

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
  tables: z.object({ events: z.string(), ledger: z.string() }),
  queues: z.record(z.string(), queueSchema.extend({ dlqUrl: z.string().url(), dlqArn: z.string().min(1) })),
  fanoutFailureQueue: queueSchema,
});

export type LocalStackState = z.infer<typeof localStackStateSchema>;

export class StateFileError extends HookledgerError {
  override readonly name = 'StateFileError';
}

export async function writeState(path: string, state: LocalStackState): Promise<void> {
  const valid = localStackStateSchema.parse(state);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(valid, null, 2)}\n`, { mode: 0o600 });
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
  await rm(path, { force: true });
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
