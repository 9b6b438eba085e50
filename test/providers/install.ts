/**
 * The provider proofs have their own package (test/providers/package.json and its lock file): the
 * providers' npm packages are about 1 GB, and neither hookledger nor its core tests need them, so
 * the root `npm ci` leaves them out. `npm test` installs them before type-checking (the `pretest`
 * script runs this file) and vitest does before the first proof runs (this file is the globalSetup
 * of the `providers` project, which vitest calls only when a file of that project is queued).
 *
 * They are installed with `npm ci` in test/providers when its node_modules is missing or was
 * installed from another lock file (a stamp in node_modules records the lock's SHA-256).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROOFS_DIR = path.dirname(fileURLToPath(import.meta.url));
const LOCK = path.join(PROOFS_DIR, 'package-lock.json');
const MODULES = path.join(PROOFS_DIR, 'node_modules');
const STAMP = path.join(MODULES, '.hookledger-lock-sha256');

const lockDigest = (): string => createHash('sha256').update(readFileSync(LOCK)).digest('hex');

/** Why the proofs' packages must be installed, or undefined when node_modules matches the lock. */
export function installReason(): string | undefined {
  if (!existsSync(MODULES)) return 'not installed yet';
  if (!existsSync(STAMP)) return 'test/providers/node_modules was not installed by this script';
  if (readFileSync(STAMP, 'utf8').trim() !== lockDigest()) return 'test/providers/package-lock.json changed';
  return undefined;
}

export function ensureProviderPackages(
  log: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): 'installed' | 'up to date' {
  const reason = installReason();
  if (reason === undefined) return 'up to date';
  log(`provider proofs: ${reason}; installing the providers' npm packages (npm ci in test/providers, about 1 GB)...`);
  const started = Date.now();
  const run = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: PROOFS_DIR,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (run.status !== 0) {
    const how = run.error ? run.error.message : `exit ${run.status ?? run.signal}`;
    throw new Error(`npm ci in test/providers failed (${how}); run it by hand: npm ci --prefix test/providers`);
  }
  writeFileSync(STAMP, `${lockDigest()}\n`);
  log(`provider proofs: installed in ${Math.round((Date.now() - started) / 1000)} s`);
  return 'installed';
}

/** vitest globalSetup of the `providers` project (vitest.config.ts). */
export function setup(): void {
  ensureProviderPackages();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) ensureProviderPackages();
