/**
 * The repository root: Lambda entries, the lock file and tsconfig.json (CDK), the local stack's
 * data, state and secrets files, and the CLI's view of them are all resolved from here.
 */
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The local stack's folder: data, secrets, state, generated workers and synthesized assemblies. */
export const HOOKLEDGER_DIR = path.join(PROJECT_ROOT, '.hookledger');

/** Owner only: what is under it (secrets, data, the bundles assembly mode runs) is nobody else's to read or change. */
const PRIVATE_DIR_MODE = 0o700;

/**
 * Creates `dir` and any missing folder above it 0700, whatever the umask: the one way every creator
 * (the local stack's state, synth's generated workers, assembly mode's synth) makes a folder under
 * `.hookledger`, so the first of them to run decides nothing. The repository's own `.hookledger` is
 * ours by name, so one an earlier version (or CDK's output folder) left open is tightened, down to
 * `dir`; any other folder that exists already (a HOOKLEDGER_HOME, a test's temporary folder) keeps the
 * mode its owner gave it.
 */
export function privateDir(dir: string): void {
  const target = path.resolve(dir);
  mkdirSync(target, { recursive: true, mode: PRIVATE_DIR_MODE });
  const inside = path.relative(HOOKLEDGER_DIR, target);
  if (inside.startsWith('..') || path.isAbsolute(inside)) return;
  let at = HOOKLEDGER_DIR;
  for (const part of ['', ...inside.split(path.sep).filter(Boolean)]) {
    at = path.join(at, part);
    if ((statSync(at).mode & 0o077) !== 0) chmodSync(at, PRIVATE_DIR_MODE);
  }
}
