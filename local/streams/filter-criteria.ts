/**
 * Lambda event-source FilterCriteria, evaluated the way Lambda evaluates them against the record it
 * would send (EventBridge pattern syntax). Covered: nested objects, lists of exact values (strings,
 * numbers, booleans, null), `{ exists }`, `{ prefix }` and `{ 'anything-but': value | list |
 * { prefix } }`. Anything else is refused when the filter is compiled, not silently ignored.
 *
 * A record matches when any pattern matches (Lambda ORs the filters); no patterns means everything
 * matches. Like EventBridge, every matcher except `{ exists: false }` needs the field present, and
 * an array value in the record matches when any element does.
 */
import { HookledgerError } from '../../core/errors';

export type FilterPattern = { readonly [key: string]: FilterPattern | readonly Matcher[] };
export type Matcher =
  | string
  | number
  | boolean
  | null
  | { readonly exists: boolean }
  | { readonly prefix: string }
  | { readonly 'anything-but': string | number | readonly (string | number)[] | { readonly prefix: string } };

export class FilterCriteriaError extends HookledgerError {
  override readonly name = 'FilterCriteriaError';
}

export type RecordFilter = (record: unknown) => boolean;

/**
 * Compiles patterns given as objects or as the JSON strings Lambda stores (`{"Pattern": "..."}`'s
 * value); throws FilterCriteriaError naming the bad part.
 */
export function compileFilters(patterns: readonly (FilterPattern | string)[] | undefined): RecordFilter {
  if (!patterns || patterns.length === 0) return () => true;
  const parsed = patterns.map((pattern, i) => {
    const value: unknown = typeof pattern === 'string' ? parseJson(pattern, i) : pattern;
    validatePattern(value, `filters[${i}]`);
    return value as FilterPattern;
  });
  return (record) => parsed.some((pattern) => matchesPattern(pattern, record));
}

function parseJson(text: string, index: number): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new FilterCriteriaError(`filters[${index}] is not valid JSON`, { cause });
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validatePattern(pattern: unknown, where: string): void {
  if (!isPlainObject(pattern) || Object.keys(pattern).length === 0) {
    throw new FilterCriteriaError(`${where} must be a non-empty object, got ${JSON.stringify(pattern)}`);
  }
  for (const [key, value] of Object.entries(pattern)) {
    const at = `${where}.${key}`;
    if (Array.isArray(value)) {
      if (value.length === 0) throw new FilterCriteriaError(`${at} must list at least one value`);
      value.forEach((matcher, i) => {
        validateMatcher(matcher, `${at}[${i}]`);
      });
    } else {
      validatePattern(value, at);
    }
  }
}

function validateMatcher(matcher: unknown, where: string): void {
  if (matcher === null || ['string', 'number', 'boolean'].includes(typeof matcher)) return;
  if (!isPlainObject(matcher)) throw new FilterCriteriaError(`${where}: unsupported matcher ${JSON.stringify(matcher)}`);
  const keys = Object.keys(matcher);
  const [operator] = keys;
  if (keys.length !== 1 || operator === undefined) {
    throw new FilterCriteriaError(`${where}: a matcher object has exactly one operator, got ${JSON.stringify(matcher)}`);
  }
  const operand = matcher[operator];
  switch (operator) {
    case 'exists':
      if (typeof operand !== 'boolean') throw new FilterCriteriaError(`${where}: exists takes true or false`);
      return;
    case 'prefix':
      if (typeof operand !== 'string') throw new FilterCriteriaError(`${where}: prefix takes a string`);
      return;
    case 'anything-but': {
      const ok =
        typeof operand === 'string' ||
        typeof operand === 'number' ||
        (Array.isArray(operand) && operand.every((v) => typeof v === 'string' || typeof v === 'number')) ||
        (isPlainObject(operand) && Object.keys(operand).length === 1 && typeof operand.prefix === 'string');
      if (!ok) throw new FilterCriteriaError(`${where}: anything-but takes a value, a list of values or { prefix }`);
      return;
    }
    default:
      throw new FilterCriteriaError(`${where}: operator "${operator}" is not emulated locally (supported: exists, prefix, anything-but)`);
  }
}

function matchesPattern(pattern: FilterPattern, value: unknown): boolean {
  const object = isPlainObject(value) ? value : undefined;
  return Object.entries(pattern).every(([key, sub]) => {
    const field = object?.[key];
    if (Array.isArray(sub)) return matchesField(sub as readonly Matcher[], field);
    // A nested pattern over a missing field can still match through `{ exists: false }` leaves.
    return matchesPattern(sub as FilterPattern, field);
  });
}

function matchesField(matchers: readonly Matcher[], field: unknown): boolean {
  const present = field !== undefined;
  const values: unknown[] = Array.isArray(field) ? field : [field];
  return matchers.some((matcher) => {
    if (isPlainObject(matcher) && 'exists' in matcher) return matcher.exists === present;
    if (!present) return false;
    return values.some((value) => matchesValue(matcher, value));
  });
}

function matchesValue(matcher: Matcher, value: unknown): boolean {
  if (!isPlainObject(matcher)) return matcher === value;
  if ('prefix' in matcher) return typeof value === 'string' && value.startsWith(matcher.prefix);
  if ('anything-but' in matcher) {
    const operand = matcher['anything-but'];
    if (isPlainObject(operand)) return typeof value === 'string' && !value.startsWith(operand.prefix);
    const excluded: unknown[] = Array.isArray(operand) ? operand : [operand];
    return !excluded.includes(value);
  }
  return false;
}
