/**
 * Who else could change what assembly mode runs. CDK stages each bundle in a folder it makes 0777 (so
 * that a Docker build can write it) and reuses an asset folder that already exists as it is; assembly
 * mode runs those bundles as the operator. So an assembly this run synthesizes is made under a 0700
 * `.hookledger`, never on top of an earlier one that others could write, and keeps no group or other
 * write; a folder given with `--assembly <dir>` runs only when no other user could have changed it.
 */
import { chmodSync, existsSync, lstatSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { privateDir } from '../../core/paths';
import { AssemblyError } from './template';

/** Write for group or other. */
const GROUP_OTHER_WRITE = 0o022;
/** Search (entering a folder) for group or other. */
const GROUP_OTHER_SEARCH = 0o011;

export interface OpenEntry {
  readonly path: string;
  /** Permission bits, as `ls -l` reads them. */
  readonly mode: number;
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/**
 * Every file and folder under `dir`, itself included and in name order, that group or other may
 * write. Symbolic links are neither followed nor listed: their own mode means nothing, and a chmod
 * through one would change a file outside the assembly.
 */
export function writableByOthers(dir: string): OpenEntry[] {
  const open: OpenEntry[] = [];
  const visit = (at: string) => {
    const stat = lstatSync(at);
    if (stat.isSymbolicLink()) return;
    if (stat.mode & GROUP_OTHER_WRITE) open.push({ path: at, mode: stat.mode & 0o7777 });
    if (stat.isDirectory()) for (const name of readdirSync(at).sort()) visit(path.join(at, name));
  };
  visit(dir);
  return open;
}

/**
 * Clears group and other write on every entry `writableByOthers` lists; how many changed. Called only
 * on a folder no other user can reach (the chmod of an entry they could swap for a link would follow it).
 */
export function clearGroupOtherWrite(dir: string): number {
  const open = writableByOthers(dir);
  for (const entry of open) chmodSync(entry.path, entry.mode & ~GROUP_OTHER_WRITE);
  return open.length;
}

/** The nearest folder, `dir` or one above it, that neither group nor other may enter; undefined when all let them through. */
export function closedToOthers(dir: string): string | undefined {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if ((statSync(at).mode & GROUP_OTHER_SEARCH) === 0) return at;
    if (path.dirname(at) === at) return undefined;
  }
}

export interface SynthesizeOptions {
  /** Writes the cloud assembly into the folder it is given (`cdk synth -o`). */
  readonly synth: (outDir: string) => void;
  /** A line for the operator. */
  readonly say: (line: string) => void;
}

/**
 * Synthesizes into `dir` (assembly mode's own, under `.hookledger`): the folder above it created or
 * kept 0700 first, an earlier assembly that others could write removed (CDK would reuse its asset
 * folders as they are), and group/other write cleared on what CDK staged.
 */
export function synthesizeAssembly(dir: string, options: SynthesizeOptions): void {
  privateDir(path.dirname(dir));
  if (existsSync(dir) && writableByOthers(dir).length > 0) {
    rmSync(dir, { recursive: true, force: true });
    options.say(
      `hookledger: removed ${dir}: an earlier synth left its bundles writable by other users (cdk synth stages them 0777 and would reuse them as they are); synthesizing afresh`,
    );
  }
  options.synth(dir);
  clearGroupOtherWrite(dir);
}

/**
 * A folder given with `--assembly <dir>`: nothing to say when no entry is writable by group or other;
 * when some are but a folder on its path keeps other users out, they are cleared and the line says so;
 * otherwise refused (an AssemblyError naming the first such entry), changing nothing: clearing the bits
 * now would not undo what someone may already have written.
 */
export function vouchForAssembly(dir: string): string | undefined {
  const open = writableByOthers(dir);
  if (open.length === 0) return undefined;
  const closed = closedToOthers(dir);
  if (!closed) {
    const [first] = open as [OpenEntry];
    const more =
      open.length > 1
        ? `; ${open.length - 1} more ${open.length === 2 ? 'entry' : 'entries'} of the assembly ${open.length === 2 ? 'is' : 'are'}`
        : '';
    throw new AssemblyError(
      `${first.path} is writable by users other than you (mode ${octal(first.mode)}${more}), so anyone on this machine could have changed the code assembly mode would run as you (cdk synth stages bundles 0777). ` +
        `Check the bundles, then run \`chmod -R go-w ${dir}\`; or run \`npm start -- --assembly\` alone: it synthesizes into .hookledger/cdk.out, which only you can enter`,
    );
  }
  const cleared = clearGroupOtherWrite(dir);
  return `hookledger: cleared group/other write on ${cleared} entries of ${dir} (cdk synth stages bundles 0777); no other user could reach them (${closed} is ${octal(statSync(closed).mode)})`;
}
