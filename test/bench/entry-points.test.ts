/**
 * The bench's entry points run alone (`npx tsx bench/<file>.ts`) end as bench/run.ts does, through
 * bench/errors.ts `runToExit`: one of our errors is its message after `bench: ` on stderr, without a
 * stack, and exit 1. Each is started on a PATH without `java`, so DynamoDB Local cannot start: the
 * first thing each of them needs, refused before anything is measured.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../core/paths';
import { JAVA_INSTALL_COMMAND } from '../../local/emulators';

let emptyPath: string;

beforeAll(async () => {
  emptyPath = await mkdtemp(path.join(tmpdir(), 'bench-entry-no-java-'));
});
afterAll(async () => {
  await rm(emptyPath, { recursive: true, force: true });
});

/** `node --import tsx bench/<file>` from the repository, with nothing on PATH. */
function runAlone(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join('bench', file)], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, PATH: emptyPath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a bench entry point run alone, when DynamoDB Local cannot start', () => {
  for (const file of ['cli-start.ts', 'filters.ts', 'window.ts']) {
    it(`bench/${file} prints "bench: " and the error's message, no stack, and exits 1`, async () => {
      const run = await runAlone(file);
      expect(run.stderr).toMatch(/^bench: DynamoDB Local needs Java, and `java -version` failed \(.*\)\. Install it with: /);
      expect(run.stderr.trimEnd().endsWith(JAVA_INSTALL_COMMAND)).toBe(true);
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(run.code).toBe(1);
    });
  }
});
