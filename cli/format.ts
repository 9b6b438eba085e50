/** Plain aligned tables for people; `--json` prints the data itself instead. */

export type Cell = string | number | boolean | undefined | null;

export interface Column<T> {
  readonly header: string;
  readonly value: (row: T) => Cell;
  /** Default: right for numbers, left otherwise. */
  readonly align?: 'left' | 'right';
}

export function table<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((row) => columns.map((c) => c.value(row)));
  const text = cells.map((row) => row.map((cell) => (cell === undefined || cell === null ? '-' : String(cell))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...text.map((row) => (row[i] as string).length)));
  const right = columns.map((c, i) => c.align === 'right' || (c.align === undefined && cells.some((row) => typeof row[i] === 'number')));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => (right[i] ? v.padStart(widths[i] as number) : v.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...text.map(line)].join('\n');
}

/** `key  value` lines, keys aligned. */
export function fields(entries: readonly (readonly [string, Cell])[]): string {
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${k.padEnd(width)}  ${v === undefined || v === null ? '-' : String(v)}`).join('\n');
}
