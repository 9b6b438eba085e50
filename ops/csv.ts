/** CSV for spreadsheets (the usage export of the CLI and the console): RFC 4180, never a formula. */

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
