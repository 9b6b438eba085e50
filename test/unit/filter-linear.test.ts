/**
 * Wildcard filters in linear time, and the bound on what any matcher reads (core/filter.ts, issue
 * #37 item 1). A glob is matched by prefix, suffix and `indexOf` for the parts between its stars,
 * never by a backtracking regular expression; a string longer than MAX_FILTER_VALUE_CHARS matches
 * no matcher but `exists`. The work a match does is counted (characters of the field a comparison
 * or search can have read), so linearity is proved by a count, not a clock.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPattern, explainMatch, type FilterEvent, globMatches, MAX_FILTER_VALUE_CHARS, matchesPattern } from '../../core/filter';

const event = (body: unknown): FilterEvent => ({
  source: 'platform',
  type: 'payment.succeeded',
  tenantId: 'tenant_204',
  keyId: 'key_42',
  body,
});
const email = (wildcard: string) => ({ body: { data: { email: [{ wildcard }] } } });

/** The matcher this module used before: one `.*` per star. The reference model, on short strings only. */
const regexGlob = (glob: string, subject: string) =>
  new RegExp(
    `^${glob
      .split('*')
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  ).test(subject);

/** Globs as checkPattern accepts them (no `**`), from characters that make subjects collide with them. */
const globOf = (parts: string[], leadingStar: boolean, trailingStar: boolean) =>
  `${leadingStar ? '*' : ''}${parts.join('*')}${trailingStar ? '*' : ''}`;
const part = fc.string({ unit: fc.constantFrom('a', 'b', '@', '.'), minLength: 1, maxLength: 4 });
const glob = fc
  .tuple(fc.array(part, { minLength: 1, maxLength: 5 }), fc.boolean(), fc.boolean())
  .map(([parts, lead, trail]) => globOf(parts, lead, trail));

describe('globMatches: EventBridge wildcard semantics', () => {
  it('matches *@*.example.com against ops@billing.example.com and @.example.com, not ops@example.com', () => {
    expect(globMatches('*@*.example.com', 'ops@billing.example.com')).toBe(true);
    expect(globMatches('*@*.example.com', '@.example.com')).toBe(true);
    expect(globMatches('*@*.example.com', 'ops@example.com')).toBe(false);
  });

  it('never lets a middle part overlap the suffix: a*bc*c does not match abc, matches abcc', () => {
    expect(globMatches('a*bc*c', 'abc')).toBe(false);
    expect(globMatches('a*bc*c', 'abcc')).toBe(true);
  });

  it('never lets the prefix overlap the suffix: ab*ba does not match aba, matches abba', () => {
    expect(globMatches('ab*ba', 'aba')).toBe(false);
    expect(globMatches('ab*ba', 'abba')).toBe(true);
  });

  it('reads a glob without a star as an exact value, a lone star as anything (the empty string and line breaks too)', () => {
    expect(globMatches('invoice.paid', 'invoice.paid')).toBe(true);
    expect(globMatches('invoice.paid', 'invoice.paid.x')).toBe(false);
    expect(globMatches('*', '')).toBe(true);
    expect(globMatches('a*b', 'a\nb')).toBe(true);
  });

  it('reads a backslash as itself, as before: C:\\* matches C:\\Users, not C:/Users', () => {
    expect(globMatches('C:\\*', 'C:\\Users')).toBe(true);
    expect(globMatches('C:\\*', 'C:/Users')).toBe(false);
  });

  it('agrees with the regular expression it replaces on every glob and short field', () => {
    const subject = fc.string({ unit: fc.constantFrom('a', 'b', '@', '.', '\n'), maxLength: 14 });
    fc.assert(
      fc.property(glob, subject, (g, s) => {
        expect(globMatches(g, s)).toBe(regexGlob(g, s));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('globMatches: work linear in the length of the field', () => {
  /**
   * Fields built to make a backtracking matcher slow: a run of one of the glob's own characters (or
   * of a whole part), with or without the glob's last part at the end.
   */
  const hostile = (g: string, n: number, unitIndex: number, withTail: boolean) => {
    const parts = g.split('*').filter(Boolean);
    const units = [...new Set([...g.replaceAll('*', ''), ...parts])];
    const unit = units[unitIndex % units.length]!;
    return unit.repeat(Math.ceil(n / unit.length)) + (withTail ? parts.at(-1)! : '');
  };

  it('reads at most n + |glob| characters of an n-character field, for every glob shape', () => {
    fc.assert(
      fc.property(glob, fc.integer({ min: 1, max: 4000 }), fc.nat(), fc.boolean(), (g, n, unitIndex, withTail) => {
        const subject = hostile(g, n, unitIndex, withTail);
        const work = { chars: 0 };
        globMatches(g, subject, work);
        expect(work.chars).toBeLessThanOrEqual(subject.length + g.length);
      }),
      { numRuns: 500 },
    );
  });

  it('does the same work per character on 10,000 and 80,000 "@" against *@*.example.com and *@*@*@*.x', () => {
    for (const g of ['*@*.example.com', '*@*@*@*.x']) {
      const small = { chars: 0 };
      const large = { chars: 0 };
      globMatches(g, '@'.repeat(10_000), small);
      globMatches(g, '@'.repeat(80_000), large);
      expect(large.chars).toBeLessThanOrEqual(8 * small.chars + g.length);
    }
  });

  it('answers *@*.example.com against a field of 80,000 "@" at intake in well under a second (the regex took 12.75 s)', () => {
    const started = performance.now();
    expect(matchesPattern(email('*@*.example.com'), event({ data: { email: '@'.repeat(80_000) } }))).toBe(false);
    expect(matchesPattern(email('*@*.example.com'), event({ data: { email: '@'.repeat(MAX_FILTER_VALUE_CHARS) } }))).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe(`values longer than MAX_FILTER_VALUE_CHARS (${MAX_FILTER_VALUE_CHARS})`, () => {
  const long = `ops@billing.example.com${'x'.repeat(MAX_FILTER_VALUE_CHARS)}`;
  const atBound = `${'a'.repeat(MAX_FILTER_VALUE_CHARS - 'a@b.example.com'.length)}a@b.example.com`;

  it('match no string matcher: exact, prefix, suffix, equals-ignore-case, wildcard, anything-but (any form)', () => {
    const matchers: unknown[] = [
      long,
      { prefix: 'ops@' },
      { prefix: { 'equals-ignore-case': 'OPS@' } },
      { suffix: 'xxx' },
      { suffix: { 'equals-ignore-case': 'XXX' } },
      { 'equals-ignore-case': long.toUpperCase() },
      { wildcard: 'ops@*' },
      { 'anything-but': 'evt_01J8K7M2Q4' },
      { 'anything-but': ['evt_01J8K7M2Q4'] },
      { 'anything-but': [7] },
      { 'anything-but': { prefix: 'zzz' } },
      { 'anything-but': { suffix: 'zzz' } },
      { 'anything-but': { wildcard: 'zzz*' } },
      { 'anything-but': { 'equals-ignore-case': 'zzz' } },
    ];
    for (const m of matchers) {
      expect({ m: JSON.stringify(m).slice(0, 60), hit: matchesPattern({ body: { email: [m] } }, event({ email: long })) }).toEqual({
        m: JSON.stringify(m).slice(0, 60),
        hit: false,
      });
    }
    // In an array too: the long element is skipped, a short one still matches.
    expect(matchesPattern({ body: { email: [{ prefix: 'ops@' }] } }, event({ email: [long, 'ops@a.example.com'] }))).toBe(true);
    expect(matchesPattern({ body: { email: [{ prefix: 'ops@' }] } }, event({ email: [long] }))).toBe(false);
  });

  it('still satisfy exists: true (presence reads no characters)', () => {
    expect(matchesPattern({ body: { email: [{ exists: true }] } }, event({ email: long }))).toBe(true);
    expect(matchesPattern({ body: { email: [{ exists: false }] } }, event({ email: long }))).toBe(false);
  });

  it('are matched as usual at exactly the bound', () => {
    expect(atBound.length).toBe(MAX_FILTER_VALUE_CHARS);
    expect(matchesPattern(email('*@*.example.com'), event({ data: { email: atBound } }))).toBe(true);
    expect(matchesPattern({ body: { v: [{ 'anything-but': 'x' }] } }, event({ v: atBound }))).toBe(true);
  });

  it('are explained by their length and the bound, without echoing the value', () => {
    const explained = explainMatch(email('*@*.example.com'), event({ data: { email: long } }));
    expect(explained.matched).toBe(false);
    expect(explained.path).toBe('body.data.email');
    expect(explained.reason).toBe(
      `value of ${long.length} characters is longer than ${MAX_FILTER_VALUE_CHARS}, which no matcher but exists reads; matches none of [{"wildcard":"*@*.example.com"}]`,
    );
  });

  it('cannot be written in a pattern: checkPattern refuses a matcher string over the bound, naming where', () => {
    const tooLong = 'p'.repeat(MAX_FILTER_VALUE_CHARS + 1);
    expect(checkPattern({ body: { a: [tooLong] } }).map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      `body.a.0: a matcher string holds at most ${MAX_FILTER_VALUE_CHARS} characters (longer values never match), got ${tooLong.length}`,
    ]);
    expect(checkPattern({ body: { a: [{ wildcard: `*${tooLong}` }] } }).map((i) => i.path.join('.'))).toEqual(['body.a.0.wildcard']);
    expect(checkPattern({ body: { a: [{ 'anything-but': { prefix: tooLong } }] } }).map((i) => i.path.join('.'))).toEqual([
      'body.a.0.anything-but',
    ]);
  });
});
