/**
 * Stacks mapped on the error path (lambdas/shared/stack-map.ts): the stack sets no
 * --enable-source-maps, so a frame of a shipped bundle (`index.mjs:1:4567`) is mapped to its source
 * by the map beside it when an error escapes a handler. The maps here are esbuild's, built as the
 * stack builds (handlerBuildOptions), and the frames point at a known statement of the output.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapErrorStack, StackMapper } from '../../lambdas/shared/stack-map';
import { handlerBuildOptions, sourcesFromRoot } from '../../lib/constructs/hookledger-function';

const ROOT = path.resolve(import.meta.dirname, '../..');
let outdir: string;
let bundle: string;
/** 1-based line and column of `needle` in the built bundle, as a stack frame gives them. */
let at: (needle: string) => { line: number; column: number };
/** The 1-based line of `needle` in the fixture source. */
let sourceLine: (needle: string) => number;

const FIXTURE = [
  'export function settle(invoiceId: string): never {',
  "  throw new Error('settle_failed ' + invoiceId);",
  '}',
  'export async function handler(event: { invoiceId: string }) {',
  '  const id = event.invoiceId.trim();',
  '  return settle(id);',
  '}',
  '',
].join('\n');

beforeAll(() => {
  outdir = mkdtempSync(path.join(tmpdir(), 'hookledger-stack-map-'));
  const source = path.join(outdir, 'src', 'billing-meter-fixture.ts');
  mkdirSync(path.dirname(source));
  writeFileSync(source, FIXTURE);
  buildSync({ ...handlerBuildOptions(), entryPoints: [source], outdir: path.join(outdir, 'bundle') });
  bundle = path.join(outdir, 'bundle', 'index.mjs');
  const code = readFileSync(bundle, 'utf8').split('\n');
  at = (needle) => {
    const line = code.findIndex((l) => l.includes(needle));
    if (line < 0) throw new Error(`${needle} not in the bundle`);
    return { line: line + 1, column: code[line]!.indexOf(needle) + 1 };
  };
  sourceLine = (needle) => FIXTURE.split('\n').findIndex((l) => l.includes(needle)) + 1;
});

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('StackMapper', () => {
  it('maps a frame of the minified bundle to the source file, line and column of the throw', () => {
    const { line, column } = at('throw new Error');
    const stack = `Error: settle_failed inv_01J8K7M2Q4\n    at settle (${pathToFileURL(bundle).href}:${line}:${column})`;
    const mapped = new StackMapper().map(stack);
    expect(mapped.split('\n')[0]).toBe('Error: settle_failed inv_01J8K7M2Q4');
    expect(mapped.split('\n')[1]).toMatch(
      new RegExp(`^    at settle \\(.*src/billing-meter-fixture\\.ts:${sourceLine("throw new Error('settle_failed")}:3\\)$`),
    );
  });

  it('maps frames given as a plain path and without a function name, and leaves the others as they were', () => {
    const { line, column } = at('throw new Error');
    const stack = [
      'Error: settle_failed inv_01J8K7M2Q4',
      `    at ${bundle}:${line}:${column}`,
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
      `    at async Promise.all (index 0)`,
      `    at handler (${path.join(outdir, 'bundle', 'no-map-here.mjs')}:1:20)`,
    ].join('\n');
    const mapped = new StackMapper().map(stack).split('\n');
    expect(mapped[1]).toMatch(/^ {4}at .*src\/billing-meter-fixture\.ts:2:3$/);
    expect(mapped.slice(2)).toEqual(stack.split('\n').slice(2));
  });

  it('reads each map once, and leaves a frame as it was when its map is unreadable JSON', () => {
    const { line, column } = at('throw new Error');
    const reads: string[] = [];
    const mapper = new StackMapper((file) => {
      reads.push(path.basename(file));
      return file.endsWith('broken.mjs.map') ? '{"version":3,"sources":[' : readFileSync(file, 'utf8');
    });
    const frame = `    at settle (${bundle}:${line}:${column})`;
    const broken = `    at settle (${path.join(outdir, 'bundle', 'broken.mjs')}:${line}:${column})`;
    const mapped = mapper.map([frame, frame, broken, broken].join('\n')).split('\n');
    expect(mapped[0]).toBe(mapped[1]);
    expect(mapped[0]).toContain('billing-meter-fixture.ts:2:3');
    expect(mapped.slice(2)).toEqual([broken, broken]);
    expect(reads).toEqual(['index.mjs.map', 'broken.mjs.map']);
  });

  it('names sources as the repository does once sourcesFromRoot rewrote the maps', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hookledger-stack-root-'));
    try {
      buildSync({ ...handlerBuildOptions(), entryPoints: [path.join(ROOT, 'lambdas/shared/stack-map.ts')], outdir: dir, splitting: false });
      sourcesFromRoot(dir);
      const map = JSON.parse(readFileSync(path.join(dir, 'index.mjs.map'), 'utf8')) as { sources: string[] };
      expect(map.sources).toContain('lambdas/shared/stack-map.ts');
      const code = readFileSync(path.join(dir, 'index.mjs'), 'utf8').split('\n');
      const line = code.findIndex((l) => l.includes('.split('));
      const mapped = new StackMapper().map(`    at map (${path.join(dir, 'index.mjs')}:${line + 1}:${code[line]!.indexOf('.split(') + 1})`);
      expect(mapped).toMatch(/^ {4}at map \(lambdas\/shared\/stack-map\.ts:\d+:\d+\)$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('mapErrorStack', () => {
  it("rewrites the error's stack and its cause's in place, and leaves what is not an Error alone", () => {
    const { line, column } = at('throw new Error');
    const frame = `    at settle (${bundle}:${line}:${column})`;
    const cause = Object.assign(new Error('ConditionalCheckFailed'), { stack: `Error: ConditionalCheckFailed\n${frame}` });
    const error = Object.assign(new Error('settle_failed inv_01J8K7M2Q4', { cause }), { stack: `Error: settle_failed\n${frame}` });
    mapErrorStack(error, new StackMapper());
    expect(error.stack).toMatch(/^Error: settle_failed\n {4}at settle \(.*billing-meter-fixture\.ts:2:3\)$/);
    expect(cause.stack).toMatch(/^Error: ConditionalCheckFailed\n {4}at settle \(.*billing-meter-fixture\.ts:2:3\)$/);
    const notAnError = { stack: frame };
    mapErrorStack(notAnError, new StackMapper());
    expect(notAnError.stack).toBe(frame);
  });

  it('leaves an error whose stack cannot be written as it was instead of throwing', () => {
    const { line, column } = at('throw new Error');
    const stack = `Error: settle_failed\n    at settle (${bundle}:${line}:${column})`;
    // A stack defined read-only, then frozen: assigning to it throws on every Node (since Node 22 a
    // plain error's stack is an accessor, so freezing alone no longer makes it read-only).
    const error = new Error('settle_failed');
    Object.defineProperty(error, 'stack', { value: stack, writable: false, configurable: false });
    Object.freeze(error);
    expect(() => mapErrorStack(error, new StackMapper())).not.toThrow();
    expect(error.stack).toBe(stack);
  });
});
