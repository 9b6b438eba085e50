/**
 * Section 8b: the worst case of a wildcard filter (issue #37 item 1). `*@*.example.com` against a
 * body field of 80,000 characters took 12.75 s with the regular expression it was compiled to (one
 * `.*` per star, backtracking); the glob matcher (core/filter.ts `globMatches`) reads each character
 * of the field at most once, and intake's matcher does not read a string longer than MAX_FILTER_VALUE_CHARS at all.
 *
 * Rows: the body (80,000 "@") and the matcher's own worst field (no "@", the suffix present,
 * so `indexOf` reads it to the end), through intake's `matchesPattern` and through `globMatches`
 * without the bound; and the replaced regex at the bound, for scale. Median µs per match over RUNS
 * samples, and the characters the glob matcher read (its work counter: deterministic, unlike time).
 *
 * `npm run bench -- --only wildcard` runs it alone (seconds, no emulators).
 */
import { HookledgerError } from '../core/errors';
import { type FilterEvent, globMatches, MAX_FILTER_VALUE_CHARS, matchesPattern } from '../core/filter';
import { printNotes, printTable } from './report';
import { median, round } from './stats';

export const WORST_CASE_PATTERN = '*@*.example.com';
/** The field: 80,000 characters. */
export const WORST_CASE_FIELD_CHARS = 80_000;
const RUNS = 31;
/** Matches per sample: one match is microseconds, below the timer's noise on a shared machine. */
const REPS = 20;
/** The replaced regex at the bound costs tens of milliseconds a match: a few samples, one match each. */
const REGEX_RUNS = 5;

/** A worst-case field matched the pattern: the bench would be timing something else. */
export class WildcardBenchError extends HookledgerError {
  override readonly name = 'WildcardBenchError';
}

export interface WildcardRow {
  readonly field: string;
  readonly chars: number;
  readonly via: 'matchesPattern' | 'globMatches' | 'regex (before)';
  readonly microsPerMatch: number;
  /** Characters of the field the glob matcher read (0: over the bound, not read); absent for the regex. */
  readonly charsRead?: number;
}

export interface WildcardBenchResult {
  readonly pattern: string;
  readonly boundChars: number;
  readonly runs: number;
  readonly rows: readonly WildcardRow[];
}

const event = (email: string): FilterEvent => ({
  source: 'platform',
  type: 'payment.succeeded',
  tenantId: 'tenant_204',
  keyId: 'key_42',
  body: { data: { email } },
});

/** The field that makes the glob matcher read the most: the suffix holds, the middle part never comes. */
const noAt = (chars: number) => `${'x'.repeat(chars - '.example.com'.length)}.example.com`;

function microsPerMatch(match: () => boolean, runs: number, reps: number): number {
  const samples: number[] = [];
  let hits = 0;
  for (let s = 0; s < runs; s++) {
    const start = process.hrtime.bigint();
    for (let r = 0; r < reps; r++) if (match()) hits++;
    samples.push(Number(process.hrtime.bigint() - start) / 1000 / reps);
  }
  // Every field here is built not to match: a hit means the bench measures something else.
  if (hits > 0) throw new WildcardBenchError(`a worst-case field matched ${WORST_CASE_PATTERN}; fix the bench's fields`);
  return median(samples);
}

function charsRead(subject: string, bounded: boolean): number {
  if (bounded && subject.length > MAX_FILTER_VALUE_CHARS) return 0;
  const work = { chars: 0 };
  globMatches(WORST_CASE_PATTERN, subject, work);
  return work.chars;
}

/** The replaced matcher, kept here only to show what it cost. */
function regexOf(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 's');
}

export function measureWorstCaseWildcard(options: { log?: (line: string) => void } = {}): WildcardBenchResult {
  const log = options.log ?? console.log;
  log(`8b. worst-case wildcard: ${WORST_CASE_PATTERN} against ${WORST_CASE_FIELD_CHARS.toLocaleString('en')}-character fields...`);
  const pattern = { body: { data: { email: [{ wildcard: WORST_CASE_PATTERN }] } } };
  const fields = [
    { field: `"@" x ${WORST_CASE_FIELD_CHARS}`, value: '@'.repeat(WORST_CASE_FIELD_CHARS) },
    { field: `no "@", ends .example.com, ${WORST_CASE_FIELD_CHARS}`, value: noAt(WORST_CASE_FIELD_CHARS) },
    { field: `no "@", ends .example.com, ${MAX_FILTER_VALUE_CHARS}`, value: noAt(MAX_FILTER_VALUE_CHARS) },
  ];
  const rows: WildcardRow[] = [];
  for (const { field, value } of fields) {
    const e = event(value);
    rows.push({
      field,
      chars: value.length,
      via: 'matchesPattern',
      microsPerMatch: round(microsPerMatch(() => matchesPattern(pattern, e), RUNS, REPS)),
      charsRead: charsRead(value, true),
    });
    if (value.length > MAX_FILTER_VALUE_CHARS) {
      rows.push({
        field,
        chars: value.length,
        via: 'globMatches',
        microsPerMatch: round(microsPerMatch(() => globMatches(WORST_CASE_PATTERN, value), RUNS, REPS)),
        charsRead: charsRead(value, false),
      });
    }
  }
  const regex = regexOf(WORST_CASE_PATTERN);
  const atBound = '@'.repeat(MAX_FILTER_VALUE_CHARS);
  rows.push({
    field: `"@" x ${MAX_FILTER_VALUE_CHARS}`,
    chars: atBound.length,
    via: 'regex (before)',
    microsPerMatch: round(microsPerMatch(() => regex.test(atBound), REGEX_RUNS, 1)),
  });
  return { pattern: WORST_CASE_PATTERN, boundChars: MAX_FILTER_VALUE_CHARS, runs: RUNS, rows };
}

export function printWorstCaseWildcard(r: WildcardBenchResult): void {
  printTable(
    `8b. Worst-case wildcard ${r.pattern} (median of ${r.runs} samples; intake reads at most ${r.boundChars} characters of a value)`,
    ['field', 'matcher', 'µs per match', 'characters read'],
    r.rows.map((row) => [row.field, row.via, String(row.microsPerMatch), row.charsRead === undefined ? '-' : String(row.charsRead)]),
  );
  printNotes([
    `the regex row is the matcher this replaced, at ${r.boundChars} characters; at 80,000 it took 12.75 s end to end (issue #37)`,
  ]);
}
