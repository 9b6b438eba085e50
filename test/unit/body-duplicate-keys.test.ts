/**
 * JSON bodies with a repeated key (core/body.ts, issue #37 item 5). JSON.parse keeps the last of two
 * equal keys, other parsers the first: `{"id":"evt_1","id":"evt_2"}` was recorded as evt_2 while a
 * consumer's parser could read evt_1 from the same signed bytes. The reader refuses a repeated key in
 * any object, at any depth (`duplicate_key`, naming the key and where it is), in one pass.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BodyFormatError, MAX_JSON_DEPTH, readBody, readFormBody } from '../../core/body';
import { parseBody } from '../../lambdas/recording/parse';

const refusal = (text: string) => {
  try {
    readBody(Buffer.from(text, 'utf8'), 'json');
  } catch (error) {
    if (error instanceof BodyFormatError) return { code: error.code, message: error.message };
    throw error;
  }
  return undefined;
};

describe('readBody refuses a JSON body that repeats a key (duplicate_key)', () => {
  it('refuses {"id":"evt_1","id":"evt_2"} naming the key', () => {
    expect(refusal('{"id":"evt_1","id":"evt_2"}')).toEqual({
      code: 'duplicate_key',
      message:
        'body repeats the key "id" (at body.id); each key may appear once in an object, so that every parser reads the same value from the signed bytes',
    });
  });

  it('names a repeated key deep in an object and in an array element by its dotted path', () => {
    expect(
      refusal('{"type":"payment.succeeded","data":{"object":{"tenant_id":"tenant_204","tenant_id":"tenant_311"}}}')?.message,
    ).toContain('"tenant_id" (at body.data.object.tenant_id)');
    expect(refusal('[{"sg_event_id":"a"},{"sg_event_id":"b","email":"x","sg_event_id":"c"}]')?.message).toContain(
      '"sg_event_id" (at body.1.sg_event_id)',
    );
    expect(refusal('{"data":{"items":[1,2,{"k":1}],"account":"acct_1","account":"acct_2"}}')?.message).toContain(
      '"account" (at body.data.account)',
    );
  });

  it('sees through escapes: "id" and "\\u0069d" are the same key', () => {
    expect(refusal('{"id":"evt_1","\\u0069d":"evt_2"}')).toMatchObject({ code: 'duplicate_key' });
    expect(refusal('{"id":"evt_1","\\u0069d":"evt_2"}')?.message).toContain('"id" (at body.id)');
  });

  it('accepts the same key in sibling objects, keys written inside string values, and escaped quotes and brackets in strings', () => {
    expect(readBody(Buffer.from('{"a":{"id":1},"b":{"id":2},"c":[{"id":3},{"id":4}]}'), 'json')).toEqual({
      a: { id: 1 },
      b: { id: 2 },
      c: [{ id: 3 }, { id: 4 }],
    });
    expect(readBody(Buffer.from('{"note":"{\\"id\\":1,\\"id\\":2}","id":"evt_01J8K7M2Q4"}'), 'json')).toEqual({
      note: '{"id":1,"id":2}',
      id: 'evt_01J8K7M2Q4',
    });
    expect(readBody(Buffer.from('{"a":"x\\\\","b":"}]{[\\"","c":{"a":"\\\\\\"","b":1}}'), 'json')).toEqual({
      a: 'x\\',
      b: '}]{["',
      c: { a: '\\"', b: 1 },
    });
  });

  it('reads every JSON object a serializer writes as JSON.parse does, and refuses it with any of its keys written twice', () => {
    const object = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 4 }), { minKeys: 1, maxKeys: 6 });
    fc.assert(
      fc.property(object, fc.nat(), (value, pick) => {
        const text = JSON.stringify(value);
        // Prototype keys are refused on their own (forbidden_key).
        fc.pre(!/"(__proto__|constructor|prototype)"/.test(text));
        const keys = Object.keys(value);
        expect(readBody(Buffer.from(text), 'json')).toEqual(JSON.parse(text));
        const key = keys[pick % keys.length]!;
        const twice = `{${JSON.stringify(key)}:0,${text.slice(1)}`;
        expect(refusal(twice)).toMatchObject({ code: 'duplicate_key' });
      }),
      { numRuns: 500 },
    );
  });

  it('shortens a very long repeated key in the message', () => {
    const key = 'k'.repeat(5000);
    const message = refusal(`{"${key}":1,"${key}":2}`)?.message ?? '';
    expect(message.length).toBeLessThan(400);
    expect(message).toContain(`"${'k'.repeat(64)}..." (5000 characters)`);
  });

  it('answers invalid JSON as invalid_json, and hostile nesting as too_deep, before looking for repeats', () => {
    expect(refusal('{"id":"evt_1","id":"evt_2"')).toMatchObject({ code: 'invalid_json' });
    const deep = `${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}{"id":1,"id":2}${'}'.repeat(MAX_JSON_DEPTH + 1)}`;
    expect(refusal(deep)).toMatchObject({ code: 'too_deep' });
  });

  it('reads 40,000 distinct keys in one object (a flat 600 KB body) as before', () => {
    const body = Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`field_${i}`, i]));
    expect(Object.keys(readBody(Buffer.from(JSON.stringify(body)), 'json'))).toHaveLength(40_000);
  });

  it('at intake: parseBody answers 400 duplicate_key', () => {
    let thrown: unknown;
    try {
      parseBody(Buffer.from('{"id":"evt_1","type":"payment.succeeded","id":"evt_2"}'), 'json');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'duplicate_key', status: 400 });
  });

  it('leaves form bodies as they were: a repeated field is the list of its values (attribution refuses it)', () => {
    expect(readFormBody(Buffer.from('id=evt_1&id=evt_2&type=x'))).toEqual({ id: ['evt_1', 'evt_2'], type: 'x' });
  });
});
