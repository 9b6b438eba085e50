/**
 * Twilio verification costs time linear in the body: before any authentication, the verifier groups
 * the form's parameters in one pass (it used to call getAll once per distinct name: 20,000 fields,
 * 150 KB, took over 10 s). Proved deterministically by counting the URLSearchParams work the
 * verifier does (entries visited, and a full scan per get/getAll/has), and by timing the size the
 * issue measured against reading the same form once.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { twilioVerifier } from '../../../core/schemes/twilio';
import type { VerifyInput } from '../../../core/schemes/types';
import { twilioSignature } from '../../support/twilio';

const TOKEN = '9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a';
const URL = 'https://hooks.example.com/hooks/twilio-sms';
const NOW = Date.parse('2026-11-30T08:00:00Z');

/** `count` distinct fields (`F00000=v00000&...`), about 7.5 bytes each once encoded. */
function fields(count: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < count; i++) out[`F${String(i).padStart(5, '0')}`] = `v${i}`;
  return out;
}

const input = (body: string, signature: string): VerifyInput => ({
  rawBody: Buffer.from(body, 'utf8'),
  headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
  now: NOW,
  toleranceSeconds: 300,
  url: URL,
});

const proto = URLSearchParams.prototype;
const original = {
  entries: proto.entries,
  keys: proto.keys,
  values: proto.values,
  iterator: proto[Symbol.iterator],
  forEach: proto.forEach,
  get: proto.get,
  getAll: proto.getAll,
  has: proto.has,
};

afterEach(() => {
  proto.entries = original.entries;
  proto.keys = original.keys;
  proto.values = original.values;
  proto[Symbol.iterator] = original.iterator;
  proto.forEach = original.forEach;
  proto.get = original.get;
  proto.getAll = original.getAll;
  proto.has = original.has;
});

/**
 * Runs `run` counting URLSearchParams work: every entry an iterator yields or forEach visits is one
 * unit; a get, getAll or has scans the whole list, so it costs the list's length.
 */
function formWork(run: () => unknown): number {
  let work = 0;
  const size = (params: URLSearchParams): number => {
    let n = 0;
    for (const _ of original.entries.call(params)) n++;
    return n;
  };
  const counted = <T>(method: (this: URLSearchParams) => IterableIterator<T>) =>
    function (this: URLSearchParams): IterableIterator<T> {
      const inner = method.call(this);
      const it: IterableIterator<T> = {
        next() {
          const step = inner.next();
          if (!step.done) work++;
          return step;
        },
        [Symbol.iterator]() {
          return it;
        },
      };
      return it;
    };
  proto.entries = counted(original.entries);
  proto.keys = counted(original.keys);
  proto.values = counted(original.values);
  proto[Symbol.iterator] = proto.entries;
  proto.forEach = function (this: URLSearchParams, callback: (value: string, name: string, params: URLSearchParams) => void) {
    work += size(this);
    original.forEach.call(this, callback);
  };
  proto.get = function (this: URLSearchParams, name: string) {
    work += size(this);
    return original.get.call(this, name);
  };
  proto.getAll = function (this: URLSearchParams, name: string) {
    work += size(this);
    return original.getAll.call(this, name);
  };
  proto.has = function (this: URLSearchParams, name: string, value?: string) {
    work += size(this);
    return value === undefined ? original.has.call(this, name) : original.has.call(this, name, value);
  };
  run();
  return work;
}

describe('twilio verification is linear in the form (quadratic before any authentication)', () => {
  it('verifies a 20,000-field form (150 KB) at the cost of reading it a few times: with getAll per distinct name it cost hundreds of reads (over 10 s)', () => {
    const form = fields(20_000);
    const body = new URLSearchParams(form).toString();
    expect(body.length).toBeGreaterThan(150_000);
    const signature = twilioSignature(TOKEN, URL, form);
    expect(twilioVerifier.verify(input(body, signature), { current: TOKEN })).toEqual({ ok: true, secretVersion: 'current' });
    // Relative to reading the same form once, measured alongside (fastest of 3 each), so a loaded
    // machine slows both alike.
    const fastest = (run: () => void) =>
      Math.min(
        ...[1, 2, 3].map(() => {
          const started = performance.now();
          run();
          return performance.now() - started;
        }),
      );
    const read = fastest(() => {
      for (const _ of new URLSearchParams(Buffer.from(body).toString('utf8'))) {
        // visit every field once
      }
    });
    const verified = fastest(() => twilioVerifier.verify(input(body, 'AAAA'), { current: TOKEN }));
    // Measured: about 4-18x on a loaded two-core machine; 260x with getAll per distinct name.
    expect(verified / read).toBeLessThan(60);
  });

  it('does form work proportional to the field count: twice the fields, twice the work (at most 2.2x)', () => {
    const work = (count: number) => {
      const form = fields(count);
      const body = new URLSearchParams(form).toString();
      // A wrong signature: the work before any authentication is the same, and the attacker's.
      return formWork(() => expect(twilioVerifier.verify(input(body, 'AAAA'), { current: TOKEN })).toMatchObject({ ok: false }));
    };
    const small = work(2_000);
    const large = work(4_000);
    expect(small).toBeGreaterThanOrEqual(2_000);
    expect(small).toBeLessThanOrEqual(4 * 2_000);
    expect(large / small).toBeLessThanOrEqual(2.2);
  });

  it('still signs repeated parameters as the twilio library does: each name once, its values sorted', () => {
    const body = 'To=%2B14155550199&MediaUrl=https%3A%2F%2Fb.example&From=%2B14155550123&MediaUrl=https%3A%2F%2Fa.example';
    const signature = twilioSignature(TOKEN, URL, {
      From: '+14155550123',
      MediaUrl: ['https://b.example', 'https://a.example'],
      To: '+14155550199',
    });
    expect(twilioVerifier.verify(input(body, signature), { current: TOKEN })).toEqual({ ok: true, secretVersion: 'current' });
  });
});
