/**
 * The adapters stay small: every class in adapters/ fits in 250 lines (issue 22: one 411-line
 * EventStore served five kinds of caller, each narrowing it with its own Pick<>), and the CDK
 * construct and the storage adapter no longer share a class name.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MAX_CLASS_LINES = 250;

/** `[file:Class, lines]` of every top-level class of a folder's .ts files (declaration to its closing `}` at column 0). */
function classSizes(folder: string): Array<[string, number]> {
  const sizes: Array<[string, number]> = [];
  for (const file of readdirSync(path.join(ROOT, folder)).filter((f) => f.endsWith('.ts'))) {
    const lines = readFileSync(path.join(ROOT, folder, file), 'utf8').split('\n');
    lines.forEach((line, start) => {
      const name = /^(?:export )?(?:abstract )?class (\w+)/.exec(line)?.[1];
      if (!name) return;
      const end = lines.findIndex((l, i) => i > start && l.startsWith('}'));
      sizes.push([`${folder}/${file}:${name}`, end - start + 1]);
    });
  }
  return sizes;
}

const classNames = (folder: string) => new Set(classSizes(folder).map(([id]) => id.split(':')[1]));

describe('adapter class sizes', () => {
  it(`keeps every class in adapters/ within ${MAX_CLASS_LINES} lines (no 400-line store serving every caller)`, () => {
    const sizes = classSizes('adapters');
    expect(sizes.length).toBeGreaterThan(5);
    expect(sizes.filter(([, lines]) => lines > MAX_CLASS_LINES)).toEqual([]);
  });

  it('gives the CDK construct and the storage adapters no class name in common (two EventStores)', () => {
    const adapters = classNames('adapters');
    expect([...classNames('lib/constructs')].filter((name) => adapters.has(name))).toEqual([]);
  });
});
