/**
 * The CLI as `npx hookledger` runs it (issue 39 item 1): bin/hookledger.mjs runs the prebuilt CLI
 * (bin/build-cli.mjs), built on first use, not again while its sources stay as they are, again on the
 * next call after one changed; what it prints is what the TypeScript CLI (bin/cli.ts through tsx)
 * prints; and `--help` and `providers` load neither the AWS SDK nor the configuration's schema.
 *
 * The rebuild cases run on a copy of the repository (its own node_modules/.cache, the packages linked
 * from this one), so editing a source never touches the checkout other tests read.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RECORD_LOADS = path.join(import.meta.dirname, 'record-loads.mjs');
/** Not needed by the CLI's build, or too large to copy for it. */
const NOT_COPIED = new Set(['node_modules', 'test', 'bench', 'docs', 'cdk.out', 'coverage']);
/**
 * The files test/lint/boundaries.test.ts plants in the source folders for a moment, when both files
 * run at once: one removed while the copy reads its folder would fail the copy.
 */
const PLANTED = /^planted-[0-9a-f]{8}\.ts$/;

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `hookledger <args>` from the repository at `root`, as `npx hookledger` runs it. */
const hookledger = (args: readonly string[], root = ROOT, env: NodeJS.ProcessEnv = {}) =>
  run([path.join(root, 'bin/hookledger.mjs'), ...args], { cwd: root, env });

/** The same command through the TypeScript sources, as bin/hookledger.mjs ran them before (tsx). */
const throughTsx = (args: readonly string[]) =>
  run([
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    `const { main } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'bin/cli.ts')).href)});
     const code = await main(${JSON.stringify(args)});
     process.stdout.write('', () => process.exit(code));`,
  ]);

/** The files of the modules a command loaded (test/cli/record-loads.mjs), and their text. */
async function loadsOf(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'hookledger-loads-'));
  try {
    const file = path.join(dir, 'loads.txt');
    const result = await run(['--import', pathToFileURL(RECORD_LOADS).href, path.join(ROOT, 'bin/hookledger.mjs'), ...args], {
      env: { ...env, HOOKLEDGER_TEST_LOADS: file },
    });
    const urls = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const files = urls.filter((u) => u.startsWith('file:')).map((u) => new URL(u).pathname);
    const built = files.filter((f) => f.includes('/node_modules/.cache/hookledger/cli/'));
    return { result, files, built, builtText: built.map((f) => readFileSync(f, 'utf8')).join('\n') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the prebuilt CLI, run as a process', () => {
  it('prints for providers --json exactly what the TypeScript CLI (tsx) prints', async () => {
    const [prebuilt, tsx] = await Promise.all([hookledger(['providers', '--json']), throughTsx(['providers', '--json'])]);

    expect(prebuilt.stderr).toBe('');
    expect(prebuilt.code).toBe(0);
    expect(tsx.code).toBe(0);
    expect(prebuilt.stdout).toBe(tsx.stdout);
    expect(JSON.parse(prebuilt.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'stripe' })]));
  });

  it('answers a usage error with exit 2 and the message the TypeScript CLI gives', async () => {
    const [prebuilt, tsx] = await Promise.all([hookledger(['status', '--since', '0m']), throughTsx(['status', '--since', '0m'])]);

    expect(prebuilt.code).toBe(2);
    expect(prebuilt.stderr).toBe('error: --since must be longer than 0 (got "0m")\n');
    expect(prebuilt.stderr).toBe(tsx.stderr);
  });

  for (const args of [['--help'], ['providers', '--json']]) {
    it(`loads neither the AWS SDK, nor zod and the configuration, nor an operation for ${args.join(' ')}`, async () => {
      const loads = await loadsOf(args);

      expect(loads.result.code).toBe(0);
      expect(loads.built.map((f) => path.basename(f))).toContain('cli.mjs');
      expect(loads.files.filter((f) => f.includes('/node_modules/@aws-sdk/') || f.includes('/node_modules/zod/'))).toEqual([]);
      // esbuild heads each bundled module with its path: none of these is in what was loaded.
      for (const absent of [
        'node_modules/@aws-sdk/',
        'node_modules/@smithy/',
        'node_modules/zod/',
        'hookledger.config.ts',
        'ops/target.ts',
      ]) {
        expect(loads.builtText, absent).not.toContain(`// ${absent}`);
      }
    });
  }

  it('loads the stack clients for a command that reaches the stack (the check above can see them)', async () => {
    const loads = await loadsOf(['usage'], { HOOKLEDGER_STATE: path.join(tmpdir(), 'hookledger-no-such-state.json') });

    expect(loads.result.code).toBe(3);
    expect(loads.builtText).toContain('// ops/target.ts');
    expect(loads.builtText).toContain('// hookledger.config.ts');
  });

  it('connects for status before it loads the configuration: with no local stack it exits 3 without loading it', async () => {
    const loads = await loadsOf(['status'], { HOOKLEDGER_STATE: path.join(tmpdir(), 'hookledger-no-such-state.json') });

    expect(loads.result.code).toBe(3);
    expect(loads.result.stderr).toContain('no local stack is running');
    expect(loads.builtText).toContain('// ops/target.ts');
    expect(loads.builtText).not.toContain('// hookledger.config.ts');
  });

  it('loads for status on the local stack the DynamoDB and SQS clients only: no deployed-stack, S3 or Streams client', async () => {
    const loads = await loadsOf(['status'], { HOOKLEDGER_STATE: path.join(tmpdir(), 'hookledger-no-such-state.json') });

    expect(loads.result.code).toBe(3);
    expect(loads.builtText).toContain('// node_modules/@aws-sdk/client-dynamodb/');
    expect(loads.builtText).toContain('// node_modules/@aws-sdk/client-sqs/');
    for (const client of ['client-cloudformation', 'client-secrets-manager', 'client-s3', 'client-dynamodb-streams']) {
      expect(loads.builtText, client).not.toContain(`// node_modules/@aws-sdk/${client}/`);
    }
  });

  it("loads no Lambda client for status on the local stack: the pause state comes from the stack's admin endpoint", async () => {
    const loads = await loadsOf(['status'], { HOOKLEDGER_STATE: path.join(tmpdir(), 'hookledger-no-such-state.json') });

    expect(loads.result.code).toBe(3);
    expect(loads.builtText).toContain('// ops/pause.ts');
    expect(loads.builtText).not.toContain('// node_modules/@aws-sdk/client-lambda/');
  });

  it("loads zod for the configuration without its translations: only the English messages zod's errors use", async () => {
    const loads = await loadsOf(['usage'], { HOOKLEDGER_STATE: path.join(tmpdir(), 'hookledger-no-such-state.json') });

    expect(loads.result.code).toBe(3);
    expect(loads.builtText).toContain('// hookledger.config.ts');
    const locales = loads.builtText.match(/^\/\/ node_modules\/zod\/v4\/locales\/.*$/gm);
    expect(locales).toEqual(['// node_modules/zod/v4/locales/en.js']);
  });
});

describe('the prebuilt CLI on a copy of the repository', () => {
  let copy: string;
  const manifestPath = () => path.join(copy, 'node_modules/.cache/hookledger/cli/manifest.json');
  const buildOf = () => (JSON.parse(readFileSync(manifestPath(), 'utf8')) as { build: string }).build;
  const providersFile = () => path.join(copy, 'cli/commands/providers.ts');

  beforeAll(() => {
    copy = mkdtempSync(path.join(tmpdir(), 'hookledger-copy-'));
    for (const entry of readdirSync(ROOT)) {
      if (entry.startsWith('.') || NOT_COPIED.has(entry)) continue;
      cpSync(path.join(ROOT, entry), path.join(copy, entry), { recursive: true, filter: (source) => !PLANTED.test(path.basename(source)) });
    }
    // The packages, linked one by one: the copy's node_modules/.cache is its own.
    mkdirSync(path.join(copy, 'node_modules'));
    for (const entry of readdirSync(path.join(ROOT, 'node_modules'))) {
      if (entry !== '.cache') symlinkSync(path.join(ROOT, 'node_modules', entry), path.join(copy, 'node_modules', entry));
    }
  });

  afterAll(() => {
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('builds on the first call, and the second call runs that build without building again', async () => {
    const first = await hookledger(['providers', '--json'], copy);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const build = buildOf();
    const written = statSync(manifestPath()).mtimeMs;

    const second = await hookledger(['providers', '--json'], copy);

    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(buildOf()).toBe(build);
    expect(statSync(manifestPath()).mtimeMs).toBe(written);
  });

  it('runs an edited source on the next call, then keeps that build', async () => {
    await hookledger(['providers'], copy);
    const before = buildOf();
    const source = readFileSync(providersFile(), 'utf8');
    expect(source).toContain('the table with each proof: docs/providers.md');
    writeFileSync(providersFile(), source.replace('the table with each proof: docs/providers.md', 'edited in the copy for tenant_204'));

    const edited = await hookledger(['providers'], copy);

    expect(edited.code).toBe(0);
    expect(edited.stdout).toContain('proved (sdk or vector); edited in the copy for tenant_204');
    const after = buildOf();
    expect(after).not.toBe(before);

    const again = await hookledger(['providers'], copy);
    expect(again.stdout).toBe(edited.stdout);
    expect(buildOf()).toBe(after);
  });

  it('says which source does not build, and exits 3', async () => {
    writeFileSync(providersFile(), `${readFileSync(providersFile(), 'utf8')}\nexport const broken = ;\n`);

    const broken = await hookledger(['providers'], copy);

    expect(broken.code).toBe(3);
    expect(broken.stdout).toBe('');
    expect(broken.stderr).toContain('cli/commands/providers.ts');
    expect(broken.stderr).toContain('error: the CLI could not be built from its sources');
  });
});
