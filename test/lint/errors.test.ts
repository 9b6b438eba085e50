/**
 * One error hierarchy in practice (issue 38 item 4; ARCHITECTURE.md, "The rules"): production code
 * raises no bare `Error` (a class under `HookledgerError` says what failed), and every error class it
 * declares is under `HookledgerError`. Production code is every .ts/.mjs/.js file outside test/,
 * node_modules, build output (.hookledger/, cdk.out/, bench/bundles/) and dot-folders.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SKIPPED_FOLDERS = new Set(['test', 'node_modules', 'cdk.out']);
/** Build output below the root (git-ignored): the bench's bundles hold the AWS SDK's own `new Error(`. */
const SKIPPED_PATHS = new Set(['bench/bundles']);
const SOURCE = /\.(?:ts|tsx|mts|cts|mjs|cjs|js)$/;

/**
 * Files plain `node` runs (Node 20 loads no TypeScript), so they cannot import core/errors.ts. Each
 * says why its bare Errors stay; a count may fall, never grow.
 */
const PLAIN_NODE: Readonly<Record<string, { readonly bareErrors: number; readonly why: string }>> = {
  'lib/constructs/bundle-plugins.mjs': {
    bareErrors: 2,
    why:
      'loaded by bundle-runner.mjs in a child process of synth (its error reaches CDK as stderr text); the unknown plugin name is ' +
      "a last guard behind the typed BundlePluginName; the other is the text of intake's stand-in credential chain, a module generated into the bundle's " +
      'first-request chunk: importing a class under the base there shares core/errors.ts with the cold start, a file more at every cold start (tried: test/lint/bundle-contents.test.ts went from 9 files to 10)',
  },
};

/** `new Error(` or `throw Error(`: an error that names nothing but its message. */
const BARE_ERROR = /\bnew\s+Error\s*\(|\bthrow\s+Error\s*\(/g;
/** `class X extends Y` at any indentation; Y may be qualified (`errors.Y`). */
const CLASS_DECLARATION = /^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+(\w+)\s+extends\s+([\w.]+)/;
/** The built-in error classes: a class whose chain ends at one of these without the base is off it. */
const BUILT_IN_ERRORS = new Set([
  'Error',
  'TypeError',
  'RangeError',
  'SyntaxError',
  'ReferenceError',
  'EvalError',
  'URIError',
  'AggregateError',
]);
const BASE = 'HookledgerError';

interface SourceFile {
  /** Repository-relative, '/'-separated. */
  readonly file: string;
  readonly text: string;
}

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

function productionFiles(dir = ROOT): SourceFile[] {
  const files: SourceFile[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name.startsWith('.') || (dir === ROOT && SKIPPED_FOLDERS.has(entry.name)) || entry.name === 'node_modules') continue;
      if (SKIPPED_PATHS.has(path.relative(ROOT, full).split(path.sep).join('/'))) continue;
      files.push(...productionFiles(full));
    } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.d.mts')) {
      files.push({ file: path.relative(ROOT, full).split(path.sep).join('/'), text: readFileSync(full, 'utf8') });
    }
  }
  return files;
}

/** Lines of code, a comment line (`//`, `*`, `/*`) left out: prose may name what it forbids. */
function codeLines(text: string): Array<{ line: number; text: string }> {
  return text
    .split('\n')
    .map((t, i) => ({ line: i + 1, text: t }))
    .filter(({ text: t }) => !/^\s*(?:\/\/|\*|\/\*)/.test(t));
}

/** Every `new Error(` / `throw Error(` in code. */
function bareErrors(files: readonly SourceFile[]): Finding[] {
  return files.flatMap(({ file, text }) =>
    codeLines(text).flatMap(({ line, text: t }) => [...t.matchAll(BARE_ERROR)].map(() => ({ file, line, text: t.trim() }))),
  );
}

/**
 * Every error class declared off the base: its chain of `extends` (through the classes these files
 * declare) reaches a built-in error without passing `HookledgerError`, or stops at a class from
 * elsewhere named `...Error` (a library's, which is not ours to extend for a failure of ours).
 */
function classesOffBase(files: readonly SourceFile[]): Finding[] {
  const declared: Array<Finding & { readonly name: string; readonly parent: string }> = files.flatMap(({ file, text }) =>
    codeLines(text).flatMap(({ line, text: t }) => {
      const match = CLASS_DECLARATION.exec(t);
      if (!match) return [];
      const parent = match[2]!.split('.').pop()!;
      return [{ file, line, text: t.trim(), name: match[1]!, parent }];
    }),
  );
  const parentOf = new Map(declared.map((c) => [c.name, c.parent]));
  const offBase = (name: string): boolean => {
    const seen = new Set<string>();
    for (let at = name; ; ) {
      if (at === BASE) return false;
      if (BUILT_IN_ERRORS.has(at)) return true;
      const parent = parentOf.get(at);
      if (parent === undefined) return at !== name && /Error$/.test(at);
      if (seen.has(at)) return false;
      seen.add(at);
      at = parent;
    }
  };
  return declared.filter((c) => c.name !== BASE && offBase(c.name)).map(({ file, line, text }) => ({ file, line, text }));
}

const listed = (findings: readonly Finding[]) => findings.map((f) => `${f.file}:${f.line}: ${f.text}`);

describe('one error hierarchy (core/errors.ts)', () => {
  const files = productionFiles();
  const bare = bareErrors(files);
  const off = classesOffBase(files);

  it('reads the production code: core/, adapters/, lambdas/, lib/, ops/, cli/, bench/ and the base class itself', () => {
    for (const folder of ['core/', 'adapters/', 'lambdas/', 'lib/', 'ops/', 'cli/', 'bench/', 'local/', 'console/']) {
      expect(
        files.some((f) => f.file.startsWith(folder)),
        folder,
      ).toBe(true);
    }
    expect(files.some((f) => f.file.startsWith('test/'))).toBe(false);
    expect(files.find((f) => f.file === 'core/errors.ts')?.text).toContain(`class ${BASE} extends Error`);
  });

  it('raises no bare Error: a class under HookledgerError says what failed', () => {
    const outside = bare.filter((f) => PLAIN_NODE[f.file] === undefined);
    expect(listed(outside)).toEqual([]);
  });

  it('declares every error class under HookledgerError', () => {
    expect(listed(off)).toEqual([]);
  });

  it.each(Object.keys(PLAIN_NODE))('holds no more bare Errors in %s, which plain node runs, than listed', (file) => {
    const found = bare.filter((f) => f.file === file);
    expect(found.length, listed(found).join('\n')).toBeLessThanOrEqual(PLAIN_NODE[file]!.bareErrors);
  });
});

describe('the checks themselves', () => {
  const planted: SourceFile[] = [
    {
      file: 'core/planted.ts',
      text: [
        "import { HookledgerError } from './errors';",
        'export class Fine extends HookledgerError {}',
        'export class AlsoFine extends Fine {}',
        'class Loose extends Error {}',
        'class LooserStill extends Loose {}',
        'class Borrowed extends CommanderError {}',
        'class Widget extends Base {}',
        '// a comment may say: throw new Error( is refused',
        "if (x) throw new Error('bare');",
        "reject(new Error('bare too'));",
        "throw new Fine('typed');",
      ].join('\n'),
    },
  ];

  it('finds a bare Error thrown or rejected, and none in a comment or a typed throw', () => {
    expect(bareErrors(planted).map((f) => f.line)).toEqual([9, 10]);
  });

  it('finds a class off the base directly, through another class, or on a library error; not one under the base or a non-error class', () => {
    expect(classesOffBase(planted).map((f) => f.text)).toEqual([
      'class Loose extends Error {}',
      'class LooserStill extends Loose {}',
      'class Borrowed extends CommanderError {}',
    ]);
  });
});
