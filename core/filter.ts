/**
 * Consumer filters: EventBridge event patterns matched against `{ source, type, tenantId, keyId, body }`
 * (the body as the source reads it, core/body.ts). Pure and synchronous: intake evaluates them where
 * it writes the delivery set (core/config/routing.ts), the CLI's `filter test` and `backfill` with the
 * same functions. No zod here: the Lambdas import this module; `checkPattern` is what the config schema
 * calls at synth.
 *
 * Home-made on purpose (docs/consumers.md, "Filters"): no maintained npm package implements EventBridge
 * patterns (AWS's own matcher, Event Ruler, is Java; `TestEventPattern` is an API call per event).
 *
 * Semantics, as EventBridge's: the fields of a pattern must all match (AND); a list of matchers matches
 * when any matcher does (OR); `$or` holds two or more patterns, one of which must match; a nested object
 * matches the object at that field; when the event holds an array there, any element may match (for a
 * nested pattern, one element must match all of it). Matchers: exact values (string, number, boolean,
 * null), `prefix`, `suffix` (each also with `equals-ignore-case`), `equals-ignore-case`, `wildcard`,
 * `anything-but` (a value, a list, or a prefix / suffix / equals-ignore-case / wildcard), `numeric`
 * ranges (JSON numbers only: the string "100" is no number), `exists`. Not supported: `cidr`.
 *
 * Intake runs these on bodies an attacker can write, so no match may cost more than linear time:
 *  - `wildcard` is matched by `globMatches`: the part before the first `*` must be a prefix, the part
 *    after the last a suffix (not overlapping it), and the parts between are found in order by
 *    `indexOf`, each after the one before; leftmost is always right for `*`-only globs, so nothing
 *    backtracks: the searches read each character of the field at most once. A backslash is an
 *    ordinary character, as it always was here (no `\*` escape: that would change what existing
 *    patterns match).
 *  - A string longer than MAX_FILTER_VALUE_CHARS matches no matcher but `exists`: not an exact value,
 *    prefix, suffix, equals-ignore-case or wildcard, and not `anything-but` of any kind either. Never
 *    a truncated comparison: reading the first N characters would make a suffix or an exact value
 *    match strings they do not, and a value "not matched" by `anything-but` because it was too long
 *    to read would put a consumer on events its filter was written to keep out. A filter only ever
 *    narrows a subscription; a value too long to read narrows it. `checkPattern` refuses a matcher
 *    string over the bound (it could never match).
 */

export interface FilterEvent {
  readonly source: string;
  readonly type: string;
  readonly tenantId: string;
  readonly keyId: string;
  readonly body: unknown;
}

/** A pattern as written in the config (validated by `checkPattern` at synth). */
export type EventPattern = { readonly [field: string]: unknown };

/** The fields a filter may name at its top level. */
export const FILTER_FIELDS = ['source', 'type', 'tenantId', 'keyId', 'body'] as const;
/** At most this many matchers in one filter, and this depth of nesting. */
export const MAX_FILTER_MATCHERS = 100;
export const MAX_FILTER_DEPTH = 16;
/**
 * The longest string any matcher reads (UTF-16 code units). Long enough for the fields filters are
 * written for (ids, emails, URLs up to the common 8 KB limit, ARNs); a longer value matches no
 * matcher but `exists` (see above), so a filter's cost per value is bounded whatever the body holds.
 */
export const MAX_FILTER_VALUE_CHARS = 8192;

const NUMERIC_OPS = ['=', '<', '<=', '>', '>='] as const;
type NumericOp = (typeof NUMERIC_OPS)[number];
const OPERATORS = ['prefix', 'suffix', 'equals-ignore-case', 'wildcard', 'anything-but', 'numeric', 'exists'];

export interface PatternIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): boolean =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

// ---- validation ---------------------------------------------------------------------------------

/** Every problem of a pattern, each with its path inside the pattern; empty when it is valid. */
export function checkPattern(pattern: unknown): PatternIssue[] {
  const issues: PatternIssue[] = [];
  const count = { matchers: 0 };
  checkObject(pattern, [], true, issues, count);
  if (count.matchers > MAX_FILTER_MATCHERS) {
    issues.push({ path: [], message: `a filter holds at most ${MAX_FILTER_MATCHERS} matchers, got ${count.matchers}` });
  }
  return issues;
}

function checkObject(node: unknown, path: (string | number)[], top: boolean, issues: PatternIssue[], count: { matchers: number }): void {
  if (!isObject(node)) {
    issues.push({ path, message: 'a pattern must be an object of fields' });
    return;
  }
  if (path.length > MAX_FILTER_DEPTH * 2) {
    issues.push({ path, message: `a filter nests at most ${MAX_FILTER_DEPTH} levels` });
    return;
  }
  const keys = Object.keys(node);
  if (keys.length === 0) issues.push({ path, message: 'a pattern must name at least one field' });
  for (const key of keys) {
    const value = node[key];
    const at = [...path, key];
    if (key === '$or') {
      if (!Array.isArray(value) || value.length < 2) {
        issues.push({ path: at, message: '$or needs at least two patterns' });
        continue;
      }
      for (const [i, branch] of value.entries()) checkObject(branch, [...at, i], top, issues, count);
      continue;
    }
    if (top && !(FILTER_FIELDS as readonly string[]).includes(key)) {
      issues.push({ path: at, message: `unknown field: a filter matches ${FILTER_FIELDS.join(', ')} or $or` });
      continue;
    }
    if (top && key === 'body') {
      if (Array.isArray(value)) checkLeaf(value, at, issues, count);
      else checkObject(value, at, false, issues, count);
      continue;
    }
    if (Array.isArray(value)) checkLeaf(value, at, issues, count);
    else if (!top && isObject(value)) checkObject(value, at, false, issues, count);
    else issues.push({ path: at, message: `a leaf must be a list of matchers, like ${top ? '["payment.succeeded"]' : '["usd"]'}` });
  }
}

function checkLeaf(list: unknown[], path: (string | number)[], issues: PatternIssue[], count: { matchers: number }): void {
  if (list.length === 0) {
    issues.push({ path, message: 'an empty list matches nothing; give at least one matcher' });
    return;
  }
  list.forEach((m, i) => {
    count.matchers++;
    const problem = checkMatcher(m);
    if (problem) issues.push({ path: [...path, i, ...problem.at], message: problem.message });
  });
}

type MatcherProblem = { at: (string | number)[]; message: string };

function checkMatcher(m: unknown): MatcherProblem | undefined {
  const shape = checkMatcherShape(m);
  if (shape) return shape;
  const longest = longestString(m);
  if (longest <= MAX_FILTER_VALUE_CHARS) return undefined;
  return {
    at: isObject(m) ? [Object.keys(m)[0]!] : [],
    message: `a matcher string holds at most ${MAX_FILTER_VALUE_CHARS} characters (longer values never match), got ${longest}`,
  };
}

/** The length of the longest string in a (small, validated) matcher. */
function longestString(node: unknown): number {
  if (typeof node === 'string') return node.length;
  if (typeof node !== 'object' || node === null) return 0;
  return Math.max(0, ...Object.values(node).map(longestString));
}

function checkMatcherShape(m: unknown): MatcherProblem | undefined {
  if (isScalar(m)) return undefined;
  if (!isObject(m)) return { at: [], message: 'a matcher is a string, number, boolean, null, or an object like {"prefix": "us-"}' };
  const keys = Object.keys(m);
  if (keys.length !== 1)
    return { at: [], message: `a matcher object has exactly one operator, got ${keys.length}: ${JSON.stringify(keys)}` };
  const op = keys[0]!;
  const v = m[op];
  const bad = (message: string) => ({ at: [op], message });
  switch (op) {
    case 'prefix':
    case 'suffix':
      if (typeof v === 'string') return undefined;
      if (isObject(v) && Object.keys(v).length === 1 && typeof v['equals-ignore-case'] === 'string') return undefined;
      return bad(`${op} must be a string, or {"equals-ignore-case": string}`);
    case 'equals-ignore-case':
      return typeof v === 'string' ? undefined : bad('equals-ignore-case must be a string');
    case 'wildcard':
      if (typeof v !== 'string') return bad('wildcard must be a string');
      return v.includes('**') ? bad('wildcard must not hold consecutive * characters') : undefined;
    case 'exists':
      return typeof v === 'boolean' ? undefined : bad('exists must be true or false');
    case 'numeric':
      return checkNumeric(v, bad);
    case 'anything-but':
      return checkAnythingBut(v, bad);
    case 'cidr':
      return bad('cidr matching is not supported by hookledger filters');
    default:
      return {
        at: [],
        message: `unknown matcher {${JSON.stringify(op)}:...}; use ${OPERATORS.join(', ').replace(/, (?=[^,]*$)/, ' or ')}`,
      };
  }
}

function checkNumeric(v: unknown, bad: (message: string) => { at: (string | number)[]; message: string }) {
  const shape = 'numeric must be [op, number] or [op, number, op, number] with op one of =, <, <=, >, >=';
  if (!Array.isArray(v) || (v.length !== 2 && v.length !== 4)) return bad(shape);
  for (let i = 0; i < v.length; i += 2) {
    if (!NUMERIC_OPS.includes(v[i] as NumericOp) || typeof v[i + 1] !== 'number' || !Number.isFinite(v[i + 1])) return bad(shape);
  }
  if (v.length === 2) return undefined;
  const [op1, n1, op2, n2] = v as [NumericOp, number, NumericOp, number];
  if (!(op1 === '>' || op1 === '>=') || !(op2 === '<' || op2 === '<=')) {
    return bad('a numeric range is [">" or ">=", low, "<" or "<=", high]');
  }
  if (n1 > n2 || (n1 === n2 && (op1 === '>' || op2 === '<'))) return bad(`the range is empty: ${op1} ${n1} and ${op2} ${n2}`);
  return undefined;
}

function checkAnythingBut(v: unknown, bad: (message: string) => { at: (string | number)[]; message: string }) {
  if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) return undefined;
  if (Array.isArray(v)) {
    if (v.length > 0 && (v.every((x) => typeof x === 'string') || v.every((x) => typeof x === 'number' && Number.isFinite(x))))
      return undefined;
    return bad('anything-but takes a non-empty list of only strings or only numbers');
  }
  if (isObject(v) && Object.keys(v).length === 1) {
    const [op] = Object.keys(v) as [string];
    const inner = v[op];
    if (['prefix', 'suffix', 'wildcard'].includes(op) && typeof inner === 'string') return undefined;
    if (
      op === 'equals-ignore-case' &&
      (typeof inner === 'string' || (Array.isArray(inner) && inner.length > 0 && inner.every((x) => typeof x === 'string')))
    ) {
      return undefined;
    }
  }
  return bad('anything-but takes a string, a number, a list of them, or one of {prefix|suffix|wildcard|equals-ignore-case: string}');
}

// ---- matching -----------------------------------------------------------------------------------

/** Whether the event matches the pattern (a validated one). */
export function matchesPattern(pattern: EventPattern, event: FilterEvent): boolean {
  // Intake's path: no explanation strings built.
  return matchObject(pattern, event as unknown as Record<string, unknown>, '', false).ok;
}

export interface MatchExplanation {
  readonly matched: boolean;
  /** On no match: the field (dotted) or `$or` that failed first. On a match: undefined. */
  readonly path?: string;
  /** Why: the failed part's value and matchers, or every leaf that held. */
  readonly reason: string;
}

interface Outcome {
  readonly ok: boolean;
  readonly path?: string;
  readonly reason: string;
  /** On success: the leaves that held, `path: value matches matcher`. */
  readonly held: string[];
}

/** Whether the event matches, and which part of the pattern decided it. */
export function explainMatch(pattern: EventPattern, event: FilterEvent): MatchExplanation {
  const outcome = matchObject(pattern, event as unknown as Record<string, unknown>, '', true);
  return outcome.ok ? { matched: true, reason: outcome.held.join('; ') } : { matched: false, path: outcome.path, reason: outcome.reason };
}

const show = (v: unknown): string => JSON.stringify(v) ?? 'undefined';
const join = (base: string, key: string) => (base ? `${base}.${key}` : key);

const HELD: Outcome = { ok: true, reason: '', held: [] };
const FAILED: Outcome = { ok: false, reason: '', held: [] };

function matchObject(pattern: EventPattern, value: unknown, path: string, explain: boolean): Outcome {
  if (Array.isArray(value)) {
    // One element must match the whole nested pattern.
    let first: Outcome | undefined;
    for (const element of value) {
      const o = matchObject(pattern, element, path, explain);
      if (o.ok) return o;
      first ??= o;
    }
    return first ?? { ok: false, path, reason: 'the array is empty', held: [] };
  }
  const held: string[] = [];
  for (const [key, node] of Object.entries(pattern)) {
    if (key === '$or') {
      const branches = node as EventPattern[];
      const failures: string[] = [];
      let ok: Outcome | undefined;
      for (const [i, branch] of branches.entries()) {
        const o = matchObject(branch, value, path, explain);
        if (o.ok) {
          ok = o;
          break;
        }
        if (explain) failures.push(`[${i}] ${o.path}: ${o.reason}`);
      }
      if (!ok)
        return explain ? { ok: false, path: join(path, '$or'), reason: `no branch matched: ${failures.join('; ')}`, held: [] } : FAILED;
      held.push(...ok.held);
      continue;
    }
    const child = isObject(value) ? value[key] : undefined;
    const at = explain ? join(path, key) : '';
    const o = Array.isArray(node) ? matchLeaf(node, child, at, explain) : matchObject(node as EventPattern, child, at, explain);
    if (!o.ok) return o;
    if (explain) held.push(...o.held);
  }
  return explain ? { ok: true, reason: '', held } : HELD;
}

function matchLeaf(matchers: readonly unknown[], value: unknown, path: string, explain: boolean): Outcome {
  for (const m of matchers) {
    const hit = matchOne(m, value);
    if (hit !== undefined) return explain ? { ok: true, reason: '', held: [`${path}: ${show(hit)} matches ${show(m)}`] } : HELD;
  }
  if (!explain) return FAILED;
  const what =
    value === undefined
      ? 'field is missing;'
      : unreadable(value)
        ? `value of ${(value as string).length} characters is longer than ${MAX_FILTER_VALUE_CHARS}, which no matcher but exists reads;`
        : `value ${show(value)}`;
  return { ok: false, path, reason: `${what} matches none of ${show(matchers)}`, held: [] };
}

/** The value (or array element) the matcher held for, or undefined when it did not. */
function matchOne(m: unknown, value: unknown): unknown {
  if (isObject(m) && 'exists' in m) {
    const exists = value !== undefined && !isObject(value);
    if (m.exists === exists) return value === undefined ? NO_VALUE_SHOWN : value;
    return undefined;
  }
  if (value === undefined) return undefined;
  const values = Array.isArray(value) ? value : [value];
  for (const v of values) if (isScalar(v) && !unreadable(v) && scalarMatches(m, v)) return v;
  return undefined;
}

/** A string no matcher reads: longer than MAX_FILTER_VALUE_CHARS (see the module comment for why not truncated). */
const unreadable = (v: unknown): boolean => typeof v === 'string' && v.length > MAX_FILTER_VALUE_CHARS;
/** What `explainMatch` shows for `exists: false` on a missing field. */
const NO_VALUE_SHOWN = '(missing)';

function scalarMatches(m: unknown, v: unknown): boolean {
  if (!isObject(m)) return m === v;
  const [op] = Object.keys(m) as [string];
  const arg = m[op];
  switch (op) {
    case 'prefix':
    case 'suffix':
      return typeof v === 'string' && affix(op, arg, v);
    case 'equals-ignore-case':
      return typeof v === 'string' && v.toLowerCase() === (arg as string).toLowerCase();
    case 'wildcard':
      return typeof v === 'string' && globMatches(arg as string, v);
    case 'numeric':
      return typeof v === 'number' && numeric(arg as unknown[], v);
    case 'anything-but':
      return !anythingButExcludes(arg, v);
    default:
      return false;
  }
}

function affix(op: 'prefix' | 'suffix', arg: unknown, v: string): boolean {
  const ignoreCase = isObject(arg);
  const text = ignoreCase ? (arg['equals-ignore-case'] as string).toLowerCase() : (arg as string);
  const subject = ignoreCase ? v.toLowerCase() : v;
  return op === 'prefix' ? subject.startsWith(text) : subject.endsWith(text);
}

function anythingButExcludes(arg: unknown, v: unknown): boolean {
  if (Array.isArray(arg)) return arg.includes(v);
  if (!isObject(arg)) return arg === v;
  if (typeof v !== 'string') return false;
  const [op] = Object.keys(arg) as [string];
  const inner = arg[op];
  if (op === 'prefix' || op === 'suffix') return affix(op, inner, v);
  if (op === 'wildcard') return globMatches(inner as string, v);
  const list = Array.isArray(inner) ? (inner as string[]) : [inner as string];
  return list.some((s) => s.toLowerCase() === v.toLowerCase());
}

function numeric(range: readonly unknown[], v: number): boolean {
  for (let i = 0; i < range.length; i += 2) {
    const bound = range[i + 1] as number;
    switch (range[i] as NumericOp) {
      case '=':
        if (!(v === bound)) return false;
        break;
      case '<':
        if (!(v < bound)) return false;
        break;
      case '<=':
        if (!(v <= bound)) return false;
        break;
      case '>':
        if (!(v > bound)) return false;
        break;
      case '>=':
        if (!(v >= bound)) return false;
        break;
    }
  }
  return true;
}

/** What `globMatches` counts: the characters of the field a comparison or search can have read. */
export interface GlobWork {
  chars: number;
}

/**
 * Whether `subject` matches the glob (`*` any run of characters, everything else itself), in time
 * linear in the subject: prefix, suffix, then each middle part by `indexOf` after the last one found.
 * `work`, when given, is added the characters read (tests and the bench prove linearity with it).
 */
export function globMatches(glob: string, subject: string, work?: GlobWork): boolean {
  const parts = globParts(glob);
  if (parts.length === 1) {
    if (work) work.chars += Math.min(glob.length, subject.length);
    return subject === glob;
  }
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  // The prefix and the suffix may not share characters of the subject.
  if (subject.length < first.length + last.length) return false;
  if (work) work.chars += first.length + last.length;
  if (!subject.startsWith(first) || !subject.endsWith(last)) return false;
  const end = subject.length - last.length;
  let from = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i]!;
    const at = subject.indexOf(part, from);
    if (work) work.chars += (at < 0 ? subject.length : at + part.length) - from;
    // Leftmost is best: a later occurrence leaves less room for the parts after it.
    if (at < 0 || at + part.length > end) return false;
    from = at + part.length;
  }
  return true;
}

const globs = new Map<string, readonly string[]>();
/** A glob split at its stars, cached: a configuration holds a handful of them. */
function globParts(glob: string): readonly string[] {
  let parts = globs.get(glob);
  if (!parts) {
    parts = glob.split('*');
    if (globs.size < 1000) globs.set(glob, parts);
  }
  return parts;
}
