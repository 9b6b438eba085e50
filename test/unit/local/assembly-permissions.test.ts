/**
 * Who else could change what assembly mode runs. CDK stages each bundle in a folder it makes 0777 and
 * reuses an asset folder that already exists; assembly mode runs those bundles as the operator. So:
 * `.hookledger` is created 0700 by every creator (umask 0 here, the worst case), a synth into it
 * leaves nothing of the assembly writable by group or other (and never reuses an earlier assembly
 * that was), and a folder given with `--assembly <dir>` whose bundles another user can write is
 * refused, at the entry point too, before anything starts.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HOOKLEDGER_DIR, PROJECT_ROOT, privateDir } from '../../../core/paths';
import { clearGroupOtherWrite, synthesizeAssembly, vouchForAssembly } from '../../../local/assembly/permissions';
import { AssemblyError } from '../../../local/assembly/template';
import { writeState } from '../../../local/state';
import { defaultConfig, synth } from '../../cdk/support';

const modeOf = (p: string) => statSync(p).mode & 0o777;

/** Every entry under `dir` (itself included) as `relative path: octal mode`, for one assertion on all. */
function modes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (at: string) => {
    out[path.relative(dir, at) || '.'] = (lstatSync(at).mode & 0o777).toString(8);
    if (lstatSync(at).isDirectory()) for (const name of readdirSync(at)) visit(path.join(at, name));
  };
  visit(dir);
  return out;
}

/** What `cdk synth -o <dir>` does to the disk, per aws-cdk-lib's AssetStaging: the output folder made
 * with the default mode, each bundle built in `<asset>-building` chmodded 0777 and renamed into place,
 * and an asset folder that already exists reused as it is. */
function fakeCdkSynth(bundle: string) {
  return (outDir: string) => {
    mkdirSync(outDir, { recursive: true });
    const asset = path.join(outDir, 'asset.8f2c1e');
    if (!existsSync(asset)) {
      const building = `${asset}-building`;
      mkdirSync(building);
      chmodSync(building, 0o777);
      writeFileSync(path.join(building, 'index.mjs'), bundle);
      renameSync(building, asset);
    }
    writeFileSync(path.join(outDir, 'manifest.json'), '{"version":"41.0.0","artifacts":{}}');
  };
}

let umask: number | undefined;
/** Runs with umask 0: every mode a creator does not set itself comes out 0777/0666. */
function withUmaskZero() {
  umask = process.umask(0);
}
afterEach(() => {
  if (umask !== undefined) process.umask(umask);
  umask = undefined;
});

describe('.hookledger is created 0700', () => {
  it('synthesizing into .hookledger/cdk.out (umask 0) leaves .hookledger 0700 and nothing of the assembly writable by group or other', () => {
    withUmaskZero();
    const root = mkdtempSync(path.join(tmpdir(), 'hookledger-repo-'));
    const outDir = path.join(root, '.hookledger', 'cdk.out');
    synthesizeAssembly(outDir, { synth: fakeCdkSynth('export const handler = async () => "tenant_204";\n'), say: () => undefined });
    expect(modeOf(path.join(root, '.hookledger'))).toBe(0o700);
    expect(modes(outDir)).toEqual({ '.': '755', 'asset.8f2c1e': '755', 'asset.8f2c1e/index.mjs': '644', 'manifest.json': '644' });
  });

  it('does not let CDK reuse an earlier assembly whose bundles others could write: it is removed and synthesized afresh, and said', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'hookledger-repo-'));
    const outDir = path.join(root, '.hookledger', 'cdk.out');
    // An earlier synth (before this fix) left the bundle 0777; someone else wrote into it since.
    fakeCdkSynth('export const handler = async () => "evt_01J8K7M2Q4";\n')(outDir);
    writeFileSync(path.join(outDir, 'asset.8f2c1e', 'index.mjs'), 'export const handler = async () => "tampered";\n');
    const said: string[] = [];
    synthesizeAssembly(outDir, { synth: fakeCdkSynth('export const handler = async () => "evt_01J8K7M2Q4";\n'), say: (l) => said.push(l) });
    expect(readFileSync(path.join(outDir, 'asset.8f2c1e', 'index.mjs'), 'utf8')).toBe(
      'export const handler = async () => "evt_01J8K7M2Q4";\n',
    );
    expect(said).toEqual([
      `hookledger: removed ${outDir}: an earlier synth left its bundles writable by other users (cdk synth stages them 0777 and would reuse them as they are); synthesizing afresh`,
    ]);
    expect(modeOf(path.join(outDir, 'asset.8f2c1e'))).toBe(0o755);
  });

  it('writeState (umask 0) creates the folders of a new state file 0700, and tightens a .hookledger an earlier version left 0755', async () => {
    withUmaskZero();
    const root = mkdtempSync(path.join(tmpdir(), 'hookledger-home-'));
    const state = path.join(root, 'home', 'state.json');
    await writeState(state, {
      version: 1,
      pid: process.pid,
      startedAt: '2025-01-01T00:00:00.000Z',
      region: 'us-east-1',
      dynamo: { endpoint: 'http://127.0.0.1:8000', port: 8000, dbPath: null },
      sqs: { endpoint: 'http://127.0.0.1:9324', port: 9324 },
      gateway: { url: 'http://127.0.0.1:3000', port: 3000 },
      webhookUrl: 'http://127.0.0.1:3000/hooks/{source}',
      tables: { events: 'events', ledger: 'ledger' },
      queues: {},
      fanoutFailureQueue: { url: 'http://127.0.0.1:9324/q', arn: 'arn:aws:sqs:us-east-1:000000000000:q' },
    });
    expect(modeOf(path.join(root, 'home'))).toBe(0o700);
    expect(modeOf(state)).toBe(0o600);
    // The repository's own .hookledger is ours by name: one left 0755 is tightened by the next creator.
    privateDir(HOOKLEDGER_DIR);
    chmodSync(HOOKLEDGER_DIR, 0o755);
    privateDir(path.join(HOOKLEDGER_DIR, 'workers'));
    expect(modeOf(HOOKLEDGER_DIR)).toBe(0o700);
    expect(modeOf(path.join(HOOKLEDGER_DIR, 'workers'))).toBe(0o700);
  });

  it('a synth that writes a transform worker (umask 0) keeps .hookledger and .hookledger/workers 0700', () => {
    privateDir(HOOKLEDGER_DIR);
    chmodSync(HOOKLEDGER_DIR, 0o755); // as an earlier synth left it
    withUmaskZero();
    synth(
      {
        sources: defaultConfig.sources,
        consumers: [
          {
            id: 'crm-sync',
            kind: 'http',
            url: 'https://crm-sync.internal.example.com/hooks',
            subscribes: ['payment.*'],
            fields: ['id', 'data.amount', 'data.currency'],
            transform: 'transforms/crm.ts',
          },
        ],
      },
      'PrivateWorkersStack',
    );
    expect(existsSync(path.join(HOOKLEDGER_DIR, 'workers', 'crm-sync.ts'))).toBe(true);
    expect(modeOf(HOOKLEDGER_DIR)).toBe(0o700);
    expect(modeOf(path.join(HOOKLEDGER_DIR, 'workers'))).toBe(0o700);
  }, 120_000);
});

describe('a folder given with --assembly <dir>', () => {
  /** An assembly as `cdk synth -o` leaves it (bundle 0777), in a folder any user can enter. */
  function openAssembly(): string {
    const parent = mkdtempSync(path.join(tmpdir(), 'hookledger-given-'));
    chmodSync(parent, 0o755);
    const dir = path.join(parent, 'cdk.out');
    withUmaskZero();
    fakeCdkSynth('export const handler = async () => "tenant_204";\n')(dir);
    process.umask(umask!);
    umask = undefined;
    chmodSync(dir, 0o755);
    return dir;
  }

  it('is refused when another user can write its bundles, naming the bundle, its mode and the fix; nothing is changed', () => {
    const dir = openAssembly();
    const bundle = path.join(dir, 'asset.8f2c1e');
    expect(() => vouchForAssembly(dir)).toThrow(AssemblyError);
    expect(() => vouchForAssembly(dir)).toThrow(
      `${bundle} is writable by users other than you (mode 0777; 2 more entries of the assembly are), so anyone on this machine could have changed the code assembly mode would run as you (cdk synth stages bundles 0777). Check the bundles, then run \`chmod -R go-w ${dir}\`; or run \`npm start -- --assembly\` alone: it synthesizes into .hookledger/cdk.out, which only you can enter`,
    );
    expect(modeOf(bundle)).toBe(0o777);
  });

  it('is run when only its owner can reach it: group/other write is cleared, and said', () => {
    const dir = openAssembly();
    const parent = path.dirname(dir);
    chmodSync(parent, 0o700);
    expect(vouchForAssembly(dir)).toBe(
      `hookledger: cleared group/other write on 3 entries of ${dir} (cdk synth stages bundles 0777); no other user could reach them (${parent} is 0700)`,
    );
    expect(modes(dir)).toEqual({ '.': '755', 'asset.8f2c1e': '755', 'asset.8f2c1e/index.mjs': '644', 'manifest.json': '644' });
    expect(vouchForAssembly(dir)).toBeUndefined();
  });

  it('clearGroupOtherWrite leaves symbolic links alone (chmod would follow them out of the assembly)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hookledger-links-'));
    const outside = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-outside-')), 'keep.txt');
    writeFileSync(outside, 'tenant_204');
    chmodSync(outside, 0o666);
    symlinkSync(outside, path.join(dir, 'link'));
    chmodSync(dir, 0o777);
    expect(clearGroupOtherWrite(dir)).toBe(1);
    expect(modeOf(dir)).toBe(0o755);
    expect(modeOf(outside)).toBe(0o666);
  });

  it('npm start -- --assembly <dir> refuses an assembly another user can write, before it starts anything (exit 1)', () => {
    const dir = openAssembly();
    const home = mkdtempSync(path.join(tmpdir(), 'hookledger-home-'));
    const run = spawnSync(path.join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx'), ['bin/start.ts', '--assembly', dir], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, HOOKLEDGER_HOME: home, HOOKLEDGER_PORT: '0' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      `hookledger: could not start the assembly: ${path.join(dir, 'asset.8f2c1e')} is writable by users other than you (mode 0777;`,
    );
    expect(run.stdout).not.toContain('starting the assembly');
    expect(existsSync(path.join(home, 'state.json'))).toBe(false);
  }, 60_000);
});
