/**
 * `hookledger sources add --provider <name> [--id <id>] [--write]`, run through the program with its
 * real command: it prints an entry, or writes it into a copy of the shipped hookledger.config.ts that
 * the config loader then loads; a second write of the same id, and a file whose shape it does not
 * recognise, are refused and leave the file as it was.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register } from '../../../cli/commands/sources-add';
import { runCli as runProgram } from '../../../cli/program';
import type { HookledgerConfig } from '../../../core/config/schema';
import { PROJECT_ROOT } from '../../../core/paths';
import defaultConfig from '../../../hookledger.config';

let dir: string;
let configFile: string;
const SCHEMA = path.join(PROJECT_ROOT, 'core/config/schema.ts');

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'sources-add-'));
  configFile = path.join(dir, 'hookledger.config.ts');
  // The shipped file, its one import pointed back at the repository's schema.
  const shipped = await readFile(path.join(PROJECT_ROOT, 'hookledger.config.ts'), 'utf8');
  await writeFile(configFile, shipped.replace("'./core/config/schema'", JSON.stringify(SCHEMA)));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const sink = (write: (s: string) => void) =>
    ({
      write: (chunk: string) => {
        write(String(chunk));
        return true;
      },
    }) as unknown as NodeJS.WritableStream;
  const code = await runProgram(
    argv,
    { stdout: sink((t) => (stdout += t)), stderr: sink((t) => (stderr += t)), stdin: process.stdin, env: { USER: 'sources-add-test' } },
    defaultConfig,
    [register],
  );
  return { code, stdout, stderr };
}

let loads = 0;
async function load(file: string): Promise<HookledgerConfig> {
  return ((await import(`${pathToFileURL(file).href}?load=${++loads}`)) as { default: HookledgerConfig }).default;
}

describe('sources add --provider', () => {
  it('prints the entry on stdout and where to paste it on stderr, writing nothing', async () => {
    const before = await readFile(configFile, 'utf8');
    const printed = await run(['sources', 'add', '--provider', 'github', '--config-file', configFile]);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain("    {\n      id: 'github',\n      provider: 'github',\n");
    expect(printed.stdout).toContain("        tenantId: { body: 'installation.id' },\n");
    expect(printed.stderr).toBe(
      `paste it into sources: [...] in ${configFile}, or run again with --write; then restart \`npm start\` (or deploy)\n`,
    );
    expect(await readFile(configFile, 'utf8')).toBe(before);
  });

  it('--write inserts it into the sources array, which the config loader then loads; the same id again is refused (exit 1)', async () => {
    const written = await run(['sources', 'add', '--provider', 'stripe', '--id', 'stripe-live', '--write', '--config-file', configFile]);
    expect(written.stderr).toBe('');
    expect(written.code).toBe(0);
    expect(written.stdout).toBe(
      `added source "stripe-live" (provider stripe) to ${configFile}; restart \`npm start\` (or deploy) so intake has it\n`,
    );
    const loaded = await load(configFile);
    expect(loaded.sources.map((s) => s.id)).toEqual(['platform', 'stripe-live']);
    expect(loaded.sources[1]).toMatchObject({ provider: 'stripe', events: ['invoice.paid'], attribution: { eventId: { body: 'id' } } });
    expect(loaded.consumers.map((c) => c.id)).toEqual(defaultConfig.consumers.map((c) => c.id));

    const after = await readFile(configFile, 'utf8');
    const again = await run(['sources', 'add', '--provider', 'stripe', '--id', 'stripe-live', '--write', '--config-file', configFile]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`error: source "stripe-live" is already in ${configFile}'s sources; pick another id with --id\n`);
    expect(await readFile(configFile, 'utf8')).toBe(after);
  });

  it('a second provider goes after the first, and both load', async () => {
    const written = await run(['sources', 'add', '--provider', 'slack', '--write', '--config-file', configFile]);
    expect(written.code).toBe(0);
    expect((await load(configFile)).sources.map((s) => s.id)).toEqual(['platform', 'stripe-live', 'slack']);
  });

  it('refuses a file whose sources array it cannot find, leaving it unchanged (exit 1)', async () => {
    const odd = path.join(dir, 'odd.config.ts');
    const text = "import base from './base';\nexport default { ...base, sources: base.sources.concat([]) };\n";
    await writeFile(odd, text);
    const refused = await run(['sources', 'add', '--provider', 'stripe', '--write', '--config-file', odd]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `error: ${odd} has no \`sources: [ ... ]\` array written out in it, so the entry cannot be inserted safely; ` +
        'run without --write and paste the entry where your sources are\n',
    );
    expect(await readFile(odd, 'utf8')).toBe(text);
  });

  it('an unknown provider: the close names (exit 2)', async () => {
    const unknown = await run(['sources', 'add', '--provider', 'shopfy']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('error: unknown provider "shopfy"; did you mean "shopify"?\n');
  });
});
