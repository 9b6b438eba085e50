/**
 * The consumer filter's matcher (core/filter.ts): EventBridge event-pattern semantics, proved on the
 * cases of the AWS EventBridge user guide ("Content filtering in Amazon EventBridge event patterns")
 * and by properties over generated events.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPattern, explainMatch, type FilterEvent, matchesPattern } from '../../core/filter';

const event = (body: unknown, over: Partial<FilterEvent> = {}): FilterEvent => ({
  source: 'platform',
  type: 'payment.succeeded',
  tenantId: 'tenant_204',
  keyId: 'key_7',
  body,
  ...over,
});

describe('EventBridge user guide cases', () => {
  it('prefix: "time" starting with 2017-10-02 matches 2017-10-02T18:43:48Z, not 2017-10-03T00:00:00Z', () => {
    const p = { body: { time: [{ prefix: '2017-10-02' }] } };
    expect(matchesPattern(p, event({ time: '2017-10-02T18:43:48Z' }))).toBe(true);
    expect(matchesPattern(p, event({ time: '2017-10-03T00:00:00Z' }))).toBe(false);
  });
  it('prefix with equals-ignore-case: EventB matches eventbridge and EVENTBRIDGE, not sns', () => {
    const p = { body: { service: [{ prefix: { 'equals-ignore-case': 'EventB' } }] } };
    expect(matchesPattern(p, event({ service: 'eventbridge' }))).toBe(true);
    expect(matchesPattern(p, event({ service: 'EVENTBRIDGE' }))).toBe(true);
    expect(matchesPattern(p, event({ service: 'sns' }))).toBe(false);
  });
  it('suffix: FileName ending in .png; with equals-ignore-case .PNG too', () => {
    const p = { body: { FileName: [{ suffix: '.png' }] } };
    expect(matchesPattern(p, event({ FileName: 'cat.png' }))).toBe(true);
    expect(matchesPattern(p, event({ FileName: 'cat.PNG' }))).toBe(false);
    const ci = { body: { FileName: [{ suffix: { 'equals-ignore-case': '.png' } }] } };
    expect(matchesPattern(ci, event({ FileName: 'cat.PNG' }))).toBe(true);
  });
  it('anything-but a string, a number, a list of strings, a list of numbers', () => {
    expect(matchesPattern({ body: { state: [{ 'anything-but': 'initializing' }] } }, event({ state: 'running' }))).toBe(true);
    expect(matchesPattern({ body: { state: [{ 'anything-but': 'initializing' }] } }, event({ state: 'initializing' }))).toBe(false);
    expect(matchesPattern({ body: { 'x-limit': [{ 'anything-but': 123 }] } }, event({ 'x-limit': 124 }))).toBe(true);
    expect(matchesPattern({ body: { 'x-limit': [{ 'anything-but': 123 }] } }, event({ 'x-limit': 123 }))).toBe(false);
    const list = { body: { state: [{ 'anything-but': ['stopped', 'overloaded'] }] } };
    expect(matchesPattern(list, event({ state: 'overloaded' }))).toBe(false);
    expect(matchesPattern(list, event({ state: 'running' }))).toBe(true);
    const nums = { body: { 'x-limit': [{ 'anything-but': [100, 200, 300] }] } };
    expect(matchesPattern(nums, event({ 'x-limit': 200 }))).toBe(false);
    expect(matchesPattern(nums, event({ 'x-limit': 201 }))).toBe(true);
  });
  it('anything-but prefix, suffix and equals-ignore-case', () => {
    expect(matchesPattern({ body: { state: [{ 'anything-but': { prefix: 'init' } }] } }, event({ state: 'initializing' }))).toBe(false);
    expect(matchesPattern({ body: { state: [{ 'anything-but': { prefix: 'init' } }] } }, event({ state: 'running' }))).toBe(true);
    expect(matchesPattern({ body: { f: [{ 'anything-but': { suffix: '.png' } }] } }, event({ f: 'a.png' }))).toBe(false);
    expect(matchesPattern({ body: { f: [{ 'anything-but': { suffix: '.png' } }] } }, event({ f: 'a.txt' }))).toBe(true);
    const ci = { body: { state: [{ 'anything-but': { 'equals-ignore-case': 'initializing' } }] } };
    expect(matchesPattern(ci, event({ state: 'INITIALIZING' }))).toBe(false);
    expect(matchesPattern(ci, event({ state: 'stopped' }))).toBe(true);
  });
  it('numeric ranges: > 0 and <= 5 (c-count), = 3.018e2, < 10 (d-count), only JSON numbers', () => {
    const p = {
      body: { 'c-count': [{ numeric: ['>', 0, '<=', 5] }], 'd-count': [{ numeric: ['<', 10] }], 'x-limit': [{ numeric: ['=', 3.018e2] }] },
    };
    expect(matchesPattern(p, event({ 'c-count': 5, 'd-count': 9.99, 'x-limit': 301.8 }))).toBe(true);
    expect(matchesPattern(p, event({ 'c-count': 0, 'd-count': 9.99, 'x-limit': 301.8 }))).toBe(false);
    expect(matchesPattern(p, event({ 'c-count': 5.01, 'd-count': 9.99, 'x-limit': 301.8 }))).toBe(false);
    expect(matchesPattern(p, event({ 'c-count': '5', 'd-count': 9.99, 'x-limit': 301.8 }))).toBe(false);
  });
  it('exists true and false, on leaves only; null is a value that exists', () => {
    expect(matchesPattern({ body: { detail: { c: [{ exists: true }] } } }, event({ detail: { c: 'x' } }))).toBe(true);
    expect(matchesPattern({ body: { detail: { c: [{ exists: true }] } } }, event({ detail: { c: null } }))).toBe(true);
    expect(matchesPattern({ body: { detail: { c: [{ exists: true }] } } }, event({ detail: {} }))).toBe(false);
    expect(matchesPattern({ body: { detail: { c: [{ exists: false }] } } }, event({ detail: {} }))).toBe(true);
    expect(matchesPattern({ body: { detail: { c: [{ exists: false }] } } }, event({}))).toBe(true);
    expect(matchesPattern({ body: { detail: { c: [{ exists: false }] } } }, event({ detail: { c: 1 } }))).toBe(false);
    // An object is not a leaf: exists: true does not match it.
    expect(matchesPattern({ body: { detail: [{ exists: true }] } }, event({ detail: { c: 1 } }))).toBe(false);
  });
  it('null and the empty string are matched exactly; a missing field matches neither', () => {
    expect(matchesPattern({ body: { UserID: [null] } }, event({ UserID: null }))).toBe(true);
    expect(matchesPattern({ body: { UserID: [null] } }, event({}))).toBe(false);
    expect(matchesPattern({ body: { LastName: [''] } }, event({ LastName: '' }))).toBe(true);
    expect(matchesPattern({ body: { LastName: [''] } }, event({ LastName: 'x' }))).toBe(false);
  });
  it('arrays: an event array matches when any element matches (resources)', () => {
    const p = { body: { resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f'] } };
    expect(matchesPattern(p, event({ resources: ['arn:x', 'arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f'] }))).toBe(true);
    expect(matchesPattern(p, event({ resources: ['arn:x', 'arn:y'] }))).toBe(false);
  });
  it('arrays of objects: one element must match the whole nested pattern', () => {
    const p = { body: { items: { sku: ['A1'], qty: [{ numeric: ['>', 1] }] } } };
    expect(
      matchesPattern(
        p,
        event({
          items: [
            { sku: 'A1', qty: 1 },
            { sku: 'B2', qty: 5 },
          ],
        }),
      ),
    ).toBe(false);
    expect(
      matchesPattern(
        p,
        event({
          items: [
            { sku: 'B2', qty: 5 },
            { sku: 'A1', qty: 2 },
          ],
        }),
      ),
    ).toBe(true);
  });
  it('$or: Location is New York, or Day is Monday; nested $or inside an object', () => {
    const p = { body: { $or: [{ Location: ['New York'] }, { Day: ['Monday'] }] } };
    expect(matchesPattern(p, event({ Location: 'Boston', Day: 'Monday' }))).toBe(true);
    expect(matchesPattern(p, event({ Location: 'New York', Day: 'Friday' }))).toBe(true);
    expect(matchesPattern(p, event({ Location: 'Boston', Day: 'Friday' }))).toBe(false);
    const top = { $or: [{ type: ['invoice.paid'] }, { body: { data: { amount: [{ numeric: ['>=', 1000] }] } } }] };
    expect(matchesPattern(top, event({ data: { amount: 2000 } }))).toBe(true);
    expect(matchesPattern(top, event({ data: { amount: 20 } }, { type: 'invoice.paid' }))).toBe(true);
    expect(matchesPattern(top, event({ data: { amount: 20 } }))).toBe(false);
  });
  it('equals-ignore-case and wildcard', () => {
    expect(matchesPattern({ body: { name: [{ 'equals-ignore-case': 'alice' }] } }, event({ name: 'ALICE' }))).toBe(true);
    expect(matchesPattern({ body: { name: [{ 'equals-ignore-case': 'alice' }] } }, event({ name: 'bob' }))).toBe(false);
    const w = { body: { EventBusArn: [{ wildcard: 'arn:aws:events:us-east-1:*:event-bus/*' }] } };
    expect(matchesPattern(w, event({ EventBusArn: 'arn:aws:events:us-east-1:123456789012:event-bus/default' }))).toBe(true);
    expect(matchesPattern(w, event({ EventBusArn: 'arn:aws:events:us-west-2:123456789012:event-bus/default' }))).toBe(false);
    expect(matchesPattern({ body: { f: [{ 'anything-but': { wildcard: '*/lib/*' } }] } }, event({ f: 'dir/lib/a.ts' }))).toBe(false);
  });
  it('the envelope: source, type, tenantId and keyId are matched like body fields', () => {
    const p = {
      source: ['platform'],
      type: [{ prefix: 'payment.' }],
      tenantId: [{ 'anything-but': ['tenant_311'] }],
      keyId: [{ exists: true }],
    };
    expect(matchesPattern(p, event({}))).toBe(true);
    expect(matchesPattern(p, event({}, { tenantId: 'tenant_311' }))).toBe(false);
    expect(matchesPattern(p, event({}, { type: 'invoice.paid' }))).toBe(false);
  });
  it('a string "100" never matches a number pattern, and a number never matches the string "100"', () => {
    expect(matchesPattern({ body: { a: [100] } }, event({ a: '100' }))).toBe(false);
    expect(matchesPattern({ body: { a: ['100'] } }, event({ a: 100 }))).toBe(false);
    expect(matchesPattern({ body: { a: [{ numeric: ['>=', 100] }] } }, event({ a: '100' }))).toBe(false);
  });
});

describe('explainMatch names the part of the pattern that decided', () => {
  const p = { body: { data: { currency: ['usd'], amount: [{ numeric: ['>=', 100] }] } } };
  it('a string amount "150": no match, decided by body.data.amount', () => {
    const r = explainMatch(p, event({ data: { currency: 'usd', amount: '150' } }));
    expect(r.matched).toBe(false);
    expect(r.path).toBe('body.data.amount');
    expect(r.reason).toBe('value "150" matches none of [{"numeric":[">=",100]}]');
  });
  it('a missing currency: no match, decided by body.data.currency', () => {
    const r = explainMatch(p, event({ data: { amount: 150 } }));
    expect(r).toMatchObject({ matched: false, path: 'body.data.currency', reason: 'field is missing; matches none of ["usd"]' });
  });
  it('a match lists every leaf that held', () => {
    const r = explainMatch(p, event({ data: { currency: 'usd', amount: 100 } }));
    expect(r.matched).toBe(true);
    expect(r.reason).toBe('body.data.currency: "usd" matches "usd"; body.data.amount: 100 matches {"numeric":[">=",100]}');
  });
  it('an $or with no branch matching says so, with each branch', () => {
    const r = explainMatch({ $or: [{ type: ['a'] }, { tenantId: ['b'] }] }, event({}));
    expect(r).toMatchObject({ matched: false, path: '$or' });
    expect(r.reason).toBe(
      'no branch matched: [0] type: value "payment.succeeded" matches none of ["a"]; [1] tenantId: value "tenant_204" matches none of ["b"]',
    );
  });
});

describe('checkPattern refuses what EventBridge would, with the path', () => {
  const issues = (p: unknown) => checkPattern(p).map((i) => `${i.path.join('.')}: ${i.message}`);
  it('accepts the issue example and an $or of two', () => {
    expect(issues({ body: { data: { currency: ['usd'], amount: [{ numeric: ['>=', 100] }] } } })).toEqual([]);
    expect(issues({ $or: [{ type: ['a'] }, { body: { x: [{ exists: false }] } }] })).toEqual([]);
  });
  it('refuses an unknown envelope key (a typo in "tenantID")', () => {
    expect(issues({ tenantID: ['t'] })).toEqual(['tenantID: unknown field: a filter matches source, type, tenantId, keyId, body or $or']);
  });
  it('refuses a bare value where a list of matchers is expected', () => {
    expect(issues({ body: { currency: 'usd' } })).toEqual(['body.currency: a leaf must be a list of matchers, like ["usd"]']);
  });
  it('refuses an unknown operator, a bad numeric range, an empty list and a lone $or branch', () => {
    expect(issues({ body: { a: [{ regex: 'x' }] } })).toEqual([
      'body.a.0: unknown matcher {"regex":...}; use prefix, suffix, equals-ignore-case, wildcard, anything-but, numeric or exists',
    ]);
    expect(issues({ body: { a: [{ numeric: ['>=', '100'] }] } })).toEqual([
      'body.a.0.numeric: numeric must be [op, number] or [op, number, op, number] with op one of =, <, <=, >, >=',
    ]);
    expect(issues({ body: { a: [{ numeric: ['>', 10, '<', 5] }] } })).toEqual(['body.a.0.numeric: the range is empty: > 10 and < 5']);
    expect(issues({ body: { a: [] } })).toEqual(['body.a: an empty list matches nothing; give at least one matcher']);
    expect(issues({ $or: [{ type: ['a'] }] })).toEqual(['$or: $or needs at least two patterns']);
    expect(issues({ body: { a: [{ exists: 'yes' }] } })).toEqual(['body.a.0.exists: exists must be true or false']);
    expect(issues({})).toEqual([': a pattern must name at least one field']);
  });
});

describe('properties', () => {
  const scalar = fc.oneof(fc.string({ maxLength: 8 }), fc.integer({ min: -1000, max: 1000 }), fc.boolean(), fc.constant(null));
  it('an exact-value pattern built from an event matches it', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), scalar, { minKeys: 1, maxKeys: 5 }), (body) => {
        const pattern = { body: Object.fromEntries(Object.entries(body).map(([k, v]) => [k, [v]])) };
        expect(checkPattern(pattern)).toEqual([]);
        expect(matchesPattern(pattern, event(body))).toBe(true);
      }),
    );
  });
  it('anything-but V and [V] are exact complements on present scalar values', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 4 }), fc.integer({ min: -5, max: 5 })),
        fc.oneof(fc.string({ maxLength: 4 }), fc.integer({ min: -5, max: 5 })),
        (v, x) => {
          const is = matchesPattern({ body: { a: [v] } }, event({ a: x }));
          const isNot = matchesPattern({ body: { a: [{ 'anything-but': v }] } }, event({ a: x }));
          expect(is).not.toBe(isNot);
        },
      ),
    );
  });
  it('numeric [>=, b] agrees with x >= b for every number, and never matches a numeric string', () => {
    fc.assert(
      fc.property(fc.double({ min: -1e9, max: 1e9, noNaN: true }), fc.double({ min: -1e9, max: 1e9, noNaN: true }), (x, b) => {
        const p = { body: { amount: [{ numeric: ['>=', b] }] } };
        expect(matchesPattern(p, event({ amount: x }))).toBe(x >= b);
        expect(matchesPattern(p, event({ amount: String(x) }))).toBe(false);
      }),
    );
  });
  it('$or of two patterns is the disjunction of each', () => {
    const leaf = fc.constantFrom<unknown[]>(
      ['usd'],
      [{ prefix: 'e' }],
      [{ numeric: ['>', 0] }],
      [{ exists: false }],
      [{ 'anything-but': 'eur' }],
    );
    const value = fc.oneof(fc.constantFrom('usd', 'eur', 'gbp'), fc.integer({ min: -2, max: 2 }), fc.constant(undefined));
    fc.assert(
      fc.property(leaf, leaf, value, value, (l1, l2, a, b) => {
        const body: Record<string, unknown> = {};
        if (a !== undefined) body.a = a;
        if (b !== undefined) body.b = b;
        const p1 = { body: { a: l1 } };
        const p2 = { body: { b: l2 } };
        const either = matchesPattern({ $or: [p1, p2] }, event(body));
        expect(either).toBe(matchesPattern(p1, event(body)) || matchesPattern(p2, event(body)));
      }),
    );
  });
  it("intake's matchesPattern (no explanation built) agrees with explainMatch on every JSON body", () => {
    const patterns = [
      { body: { data: { currency: ['usd'], amount: [{ numeric: ['>=', 100] }] } } },
      { $or: [{ body: { a: [{ exists: false }] } }, { body: { b: [{ prefix: 'x' }, 3] } }] },
      { body: { items: { sku: [{ 'anything-but': ['A1'] }] } } },
    ];
    fc.assert(
      fc.property(fc.constantFrom(...patterns), fc.jsonValue(), (p, body) => {
        expect(matchesPattern(p, event(body))).toBe(explainMatch(p, event(body)).matched);
      }),
    );
  });
  it('a pattern never throws on any JSON body', () => {
    const p = { body: { data: { currency: ['usd'], amount: [{ numeric: ['>=', 100] }], tags: [{ prefix: 'x' }] } } };
    fc.assert(fc.property(fc.jsonValue(), (body) => typeof matchesPattern(p, event(body)) === 'boolean'));
  });
});
