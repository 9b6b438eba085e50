/**
 * Functions a reader can hold (issue 38 item 3): no function in production code over 80 lines. A long
 * function becomes named steps, the way intake already is (lambdas/ingest: route -> checkShape -> ...
 * -> record -> respond).
 *
 * Production code is every .ts file outside test/, node_modules, cdk.out and dot-folders (console/client
 * included). A function is a declaration, a method (accessors too), a constructor, an arrow function
 * or function expression given a name (a variable, a property, a class field), or one passed to a call
 * (named `<callee>(callback)`); its length runs from its first line to its last, nested functions
 * included. A failure lists each function over the limit.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SKIPPED_FOLDERS = new Set(['test', 'node_modules', 'cdk.out']);
const SOURCE = /\.(?:ts|tsx|mts|cts)$/;
const DECLARATIONS = /\.d\.(?:ts|mts|cts)$/;

/**
 * Over this a function is too long to hold (issue 38 item 3 asked for at most 10 over it and none over
 * 150; after the split none is over it). A new long function becomes named steps instead.
 */
const LONG = 80;

interface FunctionLength {
  /** Repository-relative, '/'-separated. */
  readonly file: string;
  /** Qualified by its enclosing class or function: `Class.method`, `outer.inner`. */
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

function productionFiles(dir = ROOT): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules' || (dir === ROOT && SKIPPED_FOLDERS.has(entry.name))) continue;
      files.push(...productionFiles(full));
    } else if (SOURCE.test(entry.name) && !DECLARATIONS.test(entry.name)) {
      files.push(path.relative(ROOT, full).split(path.sep).join('/'));
    }
  }
  return files;
}

/** The name a function node goes by; undefined for one that has none (a returned arrow: counted inside its enclosing function). */
function nameOf(node: ts.Node, source: ts.SourceFile): string | undefined {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  ) {
    return node.name?.getText(source) ?? (ts.isFunctionDeclaration(node) ? 'default' : undefined);
  }
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    if (ts.isFunctionExpression(node) && node.name) return node.name.text;
    const parent = node.parent;
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
      return parent.name.getText(source);
    }
    if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken) return parent.left.getText(source);
    if (ts.isExportAssignment(parent)) return 'default';
    // A callback is named by the call it is given to: a 100-line `.superRefine((s, ctx) => ...)` at
    // module level sits in no named function, and would otherwise go unmeasured.
    if (ts.isCallExpression(parent) && parent.arguments.includes(node)) {
      const callee = parent.expression;
      const called = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : 'call';
      return `${called}(callback)`;
    }
  }
  return undefined;
}

/** Every named function of one file's text, with its length in lines. */
function functionLengths(file: string, text: string): FunctionLength[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: FunctionLength[] = [];
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node: ts.Node, scope: readonly string[]) => {
    let inner = scope;
    if (ts.isClassLike(node)) {
      inner = [...scope, node.name?.text ?? '(class)'];
    } else if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const name = nameOf(node, source);
      if (name !== undefined) {
        const line = lineOf(node.getStart(source));
        found.push({ file, name: [...scope, name].join('.'), line, lines: lineOf(node.getEnd()) - line + 1 });
        inner = [...scope, name];
      }
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(source, []);
  return found;
}

/** A file's text, or undefined when it went between listing and reading (boundaries.test.ts plants and removes files). */
function textOf(file: string): string | undefined {
  try {
    return readFileSync(path.join(ROOT, file), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

const measured = productionFiles().flatMap((file) => {
  const text = textOf(file);
  return text === undefined ? [] : functionLengths(file, text);
});
const long = measured.filter((f) => f.lines > LONG).sort((a, b) => b.lines - a.lines);
const listed = (fs: readonly FunctionLength[]) => fs.map((f) => `${String(f.lines).padStart(4)}  ${f.file}:${f.line} ${f.name}`);

describe('function length (issue 38 item 3)', () => {
  it('measures the production code: over 500 functions', () => {
    expect(measured.length).toBeGreaterThan(500);
  });

  it('reads the production code (console/client included) and none of the tests', () => {
    for (const folder of ['core/', 'adapters/', 'lambdas/', 'lib/', 'cli/', 'bench/', 'local/', 'console/client/']) {
      expect(
        measured.some((f) => f.file.startsWith(folder)),
        folder,
      ).toBe(true);
    }
    expect(measured.some((f) => f.file.startsWith('test/'))).toBe(false);
  });

  it(`has no function over ${LONG} lines`, () => {
    expect(listed(long)).toEqual([]);
  });
});

describe('the measure itself', () => {
  const planted = [
    'export function declared() {', // 1
    '  const inner = () => {', // 2
    '    return 1;', // 3
    '  };', // 4
    '  [1].map((x) => x);', // 5
    '  return () => inner();', // 6: a returned arrow has no name of its own
    '}', // 7
    'class Box {', // 8
    '  constructor() {}', // 9
    '  get size() { return 1; }', // 10
    '  method() {', // 11
    '    return 2;', // 12
    '  }', // 13
    '  field = function () {', // 14
    '  };', // 15
    '}', // 16
    'const handlers = { onEvent: async () => {} };', // 17
  ].join('\n');

  it('names declarations, nested arrows, callbacks by their call, constructors, accessors, methods, class fields and properties', () => {
    expect(functionLengths('core/planted.ts', planted).map((f) => [f.name, f.line, f.lines])).toEqual([
      ['declared', 1, 7],
      ['declared.inner', 2, 3],
      ['declared.map(callback)', 5, 1],
      ['Box.constructor', 9, 1],
      ['Box.size', 10, 1],
      ['Box.method', 11, 3],
      ['Box.field', 14, 2],
      ['onEvent', 17, 1],
    ]);
  });
});
