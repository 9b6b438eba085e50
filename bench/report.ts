import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../core/paths';
/** Plain-text tables for the console. */

export function printTable(title: string, header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
}

export function printNotes(notes: readonly string[]): void {
  for (const note of notes) console.log(`  * ${note}`);
}

export const fmt = {
  n: (v: number, digits = 2) => v.toFixed(digits),
  ms: (v: number) => `${v.toFixed(v < 10 ? 1 : 0)} ms`,
  usd: (v: number) => `$${v.toFixed(v < 0.1 ? 3 : 2)}`,
  kb: (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`,
  bytes: (bytes: number) => `${bytes} B`,
  rps: (v: number) => `${v.toFixed(0)}/s`,
};

/**
 * Every absolute path in `value`'s strings rewritten relative to the repository (`../shared/AWS-FACTS.md`),
 * so results never carry the path of the machine the bench ran on.
 */
export function repoRelative<T>(value: T, root: string = PROJECT_ROOT): T {
  return JSON.parse(JSON.stringify(value), (_key, v: unknown) =>
    typeof v === 'string'
      ? v.replace(/(^|\s)(\/[\w.@+-]+(?:\/[\w.@+-]+)+)/g, (_m, pre: string, p: string) => `${pre}${path.relative(root, p)}`)
      : v,
  ) as T;
}

/**
 * Merges `entries` into bench/results.json, every other key kept as it is: a section that runs after
 * the whole bench wrote the file, or alone (`npx tsx bench/scale.ts`), adds its own key.
 */
export function mergeResults(entries: Record<string, unknown>, file: string = path.join(PROJECT_ROOT, 'bench', 'results.json')): void {
  const results = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  writeFileSync(file, `${JSON.stringify({ ...results, ...repoRelative(entries) }, null, 2)}\n`);
}
