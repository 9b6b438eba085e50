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

/**
 * A spreadsheet reads a cell starting with one of these as a formula (OWASP, CSV injection):
 * `=`, `+`, `-`, `@`, tab and carriage return.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A cell holding one of these is quoted: the comma, `;` (the list separator of many locales), tab, quote, line breaks. */
const NEEDS_QUOTES = /[",;\t\r\n]/;

/**
 * One CSV cell (RFC 4180), never a formula: text starting with a formula character gets a `'`
 * prefix and is quoted, as OWASP recommends for CSV injection (`=HYPERLINK(...)` -> `"'=HYPERLINK(...)"`);
 * text holding a separator, quote or line break is quoted, quotes doubled. Numbers are written as
 * numbers (a negative count is a number, not a formula).
 */
export function csvCell(value: string | number): string {
  if (typeof value === 'number') return String(value);
  if (FORMULA_START.test(value)) return `"'${value.replaceAll('"', '""')}"`;
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** RFC 4180 CSV: CRLF line ends, every cell through `csvCell`. */
export function csv(rows: readonly (readonly (string | number)[])[]): string {
  return `${rows.map((row) => row.map(csvCell).join(',')).join('\r\n')}\r\n`;
}
