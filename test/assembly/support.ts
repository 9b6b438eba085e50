/**
 * The synthesized assembly for the assembly-mode tests: `cdk.out` when `.ci/run` (or a developer)
 * synthesized it after the last change to the code it bundles, else one synthesized here once (under
 * a lock, so test files running in parallel share it); copies with edits; a started stack with its
 * logs, denials and invocations recorded.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { App } from 'aws-cdk-lib';
import { scanAll } from '../../adapters/table-scan';
import type { HookledgerConfigInput } from '../../core/config/schema';
import type { LedgerItem } from '../../core/model';
import { PROJECT_ROOT, privateDir } from '../../core/paths';
import { addHookledgerStack } from '../../lib/hookledger-stack';
import type { Denial } from '../../local/assembly/iam';
import { type AssemblyStack, startAssemblyStack } from '../../local/assembly/stack';
import { readAssembly } from '../../local/assembly/template';
import { localDocumentClient } from '../../local/wiring';
import { signedHeaders } from '../support/factories';

const BUNDLED = ['bin', 'core', 'adapters', 'lib', 'lambdas', 'hookledger.config.ts', 'package-lock.json'];

function newestSource(entry: string): number {
  const full = path.join(PROJECT_ROOT, entry);
  if (!existsSync(full)) return 0;
  const stat = statSync(full);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(full).map((name) => newestSource(path.join(entry, name))));
}

function fresh(dir: string): boolean {
  const manifest = path.join(dir, 'manifest.json');
  return existsSync(manifest) && statSync(manifest).mtimeMs >= Math.max(...BUNDLED.map(newestSource));
}

/** A synthesized assembly of this code: `cdk.out` if fresh, else `.hookledger/test-cdk.out`, synthesized once. */
export function synthesizedAssembly(): string {
  const ci = path.join(PROJECT_ROOT, 'cdk.out');
  if (fresh(ci)) return realpathSync(ci);
  const out = path.join(PROJECT_ROOT, '.hookledger', 'test-cdk.out');
  const lock = `${out}.lock`;
  privateDir(path.dirname(out));
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${lock} held for 120 s; remove it if no synth is running`);
      execFileSync('sleep', ['0.5']);
    }
  }
  try {
    if (!fresh(out)) {
      execFileSync('npx', ['cdk', 'synth', '--quiet', '--no-notices', '-o', out], {
        cwd: PROJECT_ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
      });
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
  return out;
}

/**
 * What `cdk synth -o` does with bin/app.ts, for `config`, in this process: cdk.json's feature flags,
 * every function really bundled; into a new temporary folder, returned (the caller removes it).
 */
export function synthesizedWith(config: HookledgerConfigInput, prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  const app = new App({ outdir: dir, context: cdkJson.context });
  addHookledgerStack(app, config);
  app.synth();
  return dir;
}

// biome-ignore lint/suspicious/noExplicitAny: the tests' edits reach into arbitrary CloudFormation properties.
type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };

/** A copy of the assembly with its template (and, optionally, bundle files) edited. */
export function editedAssembly(source: string, edit: (template: Template, dir: string) => void): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hookledger-assembly-'));
  cpSync(source, dir, { recursive: true });
  const { templateFile } = readAssembly(dir);
  const template = JSON.parse(readFileSync(templateFile, 'utf8')) as Template;
  edit(template, dir);
  writeFileSync(templateFile, JSON.stringify(template, null, 1));
  return dir;
}

/** The logical id of the one resource of `type` whose id starts with `prefix`. */
export function logicalId(template: Template, type: string, prefix: string): string {
  const ids = Object.keys(template.Resources).filter((id) => template.Resources[id]!.Type === type && id.startsWith(prefix));
  if (ids.length !== 1) throw new Error(`expected one ${type} starting with ${prefix}, found ${ids.join(', ') || 'none'}`);
  return ids[0]!;
}

export interface Recorded {
  readonly logs: { functionId: string; line: string }[];
  readonly denials: Denial[];
  readonly invocations: { functionId: string; records: number; ok: boolean }[];
}

export async function startRecordedStack(
  assemblyDir: string,
  options: {
    home?: string;
    dataDir?: string;
    /** Also told of each invocation, with its event (Recorded keeps only its record count). */
    onInvoke?: (functionId: string, event: unknown) => void;
  } = {},
): Promise<{ stack: AssemblyStack; recorded: Recorded; ddb: DynamoDBDocumentClient }> {
  const recorded: Recorded = { logs: [], denials: [], invocations: [] };
  const home = options.home ?? mkdtempSync(path.join(tmpdir(), 'hookledger-asm-home-'));
  const stack = await startAssemblyStack({
    assemblyDir,
    dataDir: options.dataDir ?? null,
    secretsFile: path.join(home, 'secrets.json'),
    httpPort: 0,
    onLog: (functionId, line) => recorded.logs.push({ functionId, line }),
    onDenied: (denial) => recorded.denials.push(denial),
    onInvoke: (functionId, event, outcome) => {
      recorded.invocations.push({ functionId, records: (event as { Records?: unknown[] }).Records?.length ?? 1, ok: outcome.ok });
      options.onInvoke?.(functionId, event);
    },
    pollerLogger: () => ({ warn: () => undefined, error: () => undefined }),
  });
  return { stack, recorded, ddb: localDocumentClient(stack.endpoints.dynamodb) };
}

export async function sendTo(stack: AssemblyStack, event: { id: string }, options: { msgId?: string } = {}) {
  const secret = (await stack.secrets.get('platform')).current;
  const body = JSON.stringify(event);
  const res = await fetch(stack.webhookUrl('platform'), {
    method: 'POST',
    headers: signedHeaders(body, { secret, at: Date.now(), msgId: options.msgId ?? `msg_${event.id}` }),
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export async function ledgerOf(stack: AssemblyStack, ddb: DynamoDBDocumentClient, eventId?: string): Promise<LedgerItem[]> {
  const rows = await scanAll<LedgerItem>(ddb, { TableName: stack.state.tables.ledger, ConsistentRead: true });
  return eventId ? rows.filter((r) => r.eventId === eventId) : rows;
}
