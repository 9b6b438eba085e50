/**
 * `hookledger sources connect | remote | disconnect <source>`: a source id the configuration does not
 * have is a usage error (exit 2) naming it and the configured sources, before the command opens its
 * target: the same answer with no local stack running, and with `--stack`, as with
 * a stack. Run in-process (bin/cli.ts `main`) against the shipped configuration; nothing is started.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import defaultConfig from '../../../hookledger.config';
import { runCli } from '../../support/cli';

let dir: string;
/** A state file that does not exist: no local stack is running. */
let statePath: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'sources-connect-'));
  statePath = path.join(dir, 'state.json');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const run = (argv: string[]) => runCli(argv, defaultConfig, { USER: 'sources-connect-test', HOOKLEDGER_STATE: statePath });
const configured = defaultConfig.sources.map((s) => s.id).join(', ');

describe('sources connect | remote | disconnect with an unknown source', () => {
  for (const argv of [
    ['sources', 'connect', 'stripe_tenant_204'],
    ['sources', 'connect', 'stripe_tenant_204', '--dry-run'],
    ['sources', 'remote', 'stripe_tenant_204'],
    ['sources', 'disconnect', 'stripe_tenant_204', '--yes'],
  ]) {
    it(`\`${argv.join(' ')}\` with no local stack running exits 2 naming the id and the configured sources`, async () => {
      const out = await run(argv);
      expect(out.stderr).toBe(`error: unknown source "stripe_tenant_204"; configured: ${configured}\n`);
      expect(out.code).toBe(2);
      expect(out.stdout).toBe('');
    });
  }

  it('answers the same with --stack: the deployed stack is never opened', async () => {
    const out = await run(['--stack', 'hookledger-tenant-204', 'sources', 'remote', 'stripe_tenant_204']);
    expect(out.stderr).toBe(`error: unknown source "stripe_tenant_204"; configured: ${configured}\n`);
    expect(out.code).toBe(2);
  });

  it('still opens the target for a configured source: no local stack running is exit 3, saying how to start one', async () => {
    const out = await run(['sources', 'remote', defaultConfig.sources[0]!.id]);
    expect(out.stderr).toContain('no local stack is running');
    expect(out.code).toBe(3);
  });
});
