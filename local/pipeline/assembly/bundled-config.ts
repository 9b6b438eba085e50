/**
 * The configuration an assembly's bundles were built with, read from the assembly itself: synth
 * inlines the validated configuration into each bundle (lambdas/shared/bundled-config.ts, esbuild's
 * `define`), and intake's bundle is where its sources' rotation overlaps live. Assembly mode serves
 * the secrets with the same overlaps the bundle applies, whatever hookledger.config.ts says now.
 *
 * The literal is found, never run: the one `JSON.parse('{"sources":...}')` of the bundle's files,
 * its quoted string read to its closing quote and decoded as a string literal alone.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { runInNewContext } from 'node:vm';
import { AssemblyError, type CloudAssembly, functionCodeDir } from '../../assembly/template';

const MS_PER_HOUR = 3_600_000;
const CONFIG_LITERAL = /JSON\.parse\((['"`])\{\\?"sources\\?":/;

interface BundledSources {
  readonly sources?: readonly { readonly id?: unknown; readonly secretOverlapHours?: unknown }[];
}

/** Each source's rotation overlap, ms, as the bundle of `functionId` (intake's) was built with. */
export function bundledSourceOverlaps(assembly: CloudAssembly, functionId: string): Record<string, number> {
  const config = bundledConfigOf(functionCodeDir(assembly, functionId), functionId);
  const overlaps: Record<string, number> = {};
  for (const source of config.sources ?? []) {
    if (typeof source.id === 'string' && typeof source.secretOverlapHours === 'number') {
      overlaps[source.id] = source.secretOverlapHours * MS_PER_HOUR;
    }
  }
  return overlaps;
}

function bundledConfigOf(codeDir: string, functionId: string): BundledSources {
  for (const file of bundleFiles(codeDir)) {
    const code = readFileSync(file, 'utf8');
    const found = CONFIG_LITERAL.exec(code);
    if (!found) continue;
    const start = found.index + 'JSON.parse('.length;
    return JSON.parse(stringLiteral(code, start, file)) as BundledSources;
  }
  throw new AssemblyError(`function ${functionId}: no inlined hookledger configuration in its bundle ${codeDir}; synthesize it again`);
}

/** The bundle's JavaScript files: its entry and its split chunks. */
function bundleFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') files.push(...bundleFiles(full));
    else if (entry.isFile() && /\.m?js$/.test(entry.name)) files.push(full);
  }
  return files;
}

/** The string literal opening at `start`, decoded: read to its unescaped closing quote, no template substitution. */
function stringLiteral(code: string, start: number, file: string): string {
  const quote = code[start];
  for (let at = start + 1; at < code.length; at++) {
    const char = code[at];
    if (char === '\\') at++;
    else if (quote === '`' && char === '$' && code[at + 1] === '{') break;
    else if (char === quote) return String(runInNewContext(code.slice(start, at + 1), Object.create(null), { timeout: 1000 }));
  }
  throw new AssemblyError(`${file}: the inlined configuration is not a plain string literal`);
}
