/**
 * An HTTP destination's request, checked whole before it is sent (core/transform.ts
 * checkTransformRequest, run by lambdas/runtime/http.ts `transformed`), and what counts toward the
 * circuit breaker: a request that could never be built is quarantined and never touches it; only
 * failures of the destination itself (refused connections, timeouts, 5xx, 429) do.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { MAX_TRANSFORM_HEADER_BYTES, MAX_TRANSFORM_HEADERS, type Transform } from '../../core/transform';
import { PermanentError, RetryableError } from '../../lambdas/runtime/errors';
import { createHttpHandle, transformed } from '../../lambdas/runtime/http';
import type { DeliveryContext } from '../../lambdas/runtime/runtime';
import { NOW, TEST_SECRET } from '../support/factories';
import { capturingLogger } from '../support/logs';

const delivery = (payload: Record<string, unknown> = { id: 'evt_01J8K7M2Q4', data: { reference: 'Zoë ✓' } }): DeliveryContext => ({
  attribution: { source: 'platform', eventId: 'evt_01J8K7M2Q4', eventType: 'payment.succeeded', tenantId: 'tenant_204', keyId: 'key_42' },
  consumerId: 'crm-sync',
  payload,
  attempt: 1,
  idempotencyKey: 'platform:evt_01J8K7M2Q4#crm-sync',
  keyStatus: async () => 'active',
  logger: capturingLogger().logger,
});

/** What `transformed` refused, as the runtime records it: its category and message. */
async function refusal(transform: Transform): Promise<{ category: string; message: string }> {
  const error = await transformed(transform, delivery()).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PermanentError);
  const { category, message } = error as PermanentError;
  return { category, message };
}

const withHeaders =
  (headers: Record<string, unknown>): Transform =>
  () =>
    ({ body: { deal: 1 }, headers }) as never;

describe('a transform result checked as the request fetch will send (transformed)', () => {
  it('quarantines a header value with a character above U+00FF ("Zoë ✓") as transform_invalid, naming header and index, never the value', async () => {
    const got = await refusal(({ payload }) => ({
      body: {},
      headers: { 'x-crm-reference': String((payload.data as { reference: string }).reference) },
    }));
    expect(got).toEqual({
      category: 'transform_invalid',
      message:
        'transform header x-crm-reference: its value has a character above U+00FF at index 4; header values carry Latin-1 only ' +
        '(percent-encode it, e.g. encodeURIComponent, or send it in the body)',
    });
    expect(got.message).not.toContain('Zoë');
  });

  it('sends Latin-1 ("Zoë") and a tab inside a value, and trims spaces and tabs around it as fetch does', async () => {
    const out = await transformed(withHeaders({ 'x-crm-reference': 'Zoë', 'x-note': ' a\tb \t' }), delivery());
    expect(out.headers).toEqual({ 'x-crm-reference': 'Zoë', 'x-note': 'a\tb' });
  });

  it.each([
    ['a line feed', 'v\nx-injected: 1', 1],
    ['a carriage return', 'v\r', 1],
    ['NUL', 'a\u0000', 1],
    ['a control character (U+0001)', 'a\u0001b', 1],
    ['DEL (U+007F)', 'ab\u007f', 2],
  ])('quarantines a header value with %s as transform_invalid', async (_what, value, index) => {
    expect(await refusal(withHeaders({ 'x-a': value }))).toEqual({
      category: 'transform_invalid',
      message: `transform header x-a: its value has a control character at index ${index}; line breaks and other controls cannot be sent`,
    });
  });

  it.each([['x a'], [''], ['x-é'], ['x:y'], ['x-a\r\n']])(
    'quarantines the header name %j (not a token), without quoting it',
    async (name) => {
      expect(await refusal(withHeaders({ 'x-ok': '1', [name]: 'v' }))).toEqual({
        category: 'transform_invalid',
        message: "transform header 2's name is not a header name: letters, digits and !#$%&'*+.^_`|~- only",
      });
    },
  );

  it.each([['Webhook-Signature'], ['webhook-id'], ['Hookledger-Attempt'], ['Content-Type'], ['user-agent']])(
    "refuses %s: hookledger's own header",
    async (name) => {
      expect(await refusal(withHeaders({ [name]: 'v1,forged' }))).toEqual({
        category: 'transform_invalid',
        message: `transform header ${name} is hookledger's own and cannot be set`,
      });
    },
  );

  it.each([
    ['Host'],
    ['Content-Length'],
    ['Transfer-Encoding'],
    ['Connection'],
    ['Keep-Alive'],
    ['Upgrade'],
    ['Expect'],
    ['TE'],
    ['Trailer'],
    ['Cookie'],
    ['Origin'],
    ['Proxy-Authorization'],
    ['Sec-Fetch-Mode'],
  ])('refuses %s: a request header HTTP itself sets (forbidden in the Fetch standard)', async (name) => {
    expect(await refusal(withHeaders({ [name]: '1' }))).toEqual({
      category: 'transform_invalid',
      message: `transform header ${name} is set by HTTP itself (a forbidden request header in the Fetch standard) and cannot be set by a transform`,
    });
  });

  it('refuses the same header twice in different case (fetch would join them)', async () => {
    expect(await refusal(withHeaders({ 'X-Ref': 'a', 'x-ref': 'b' }))).toEqual({
      category: 'transform_invalid',
      message: 'transform header x-ref is given twice (header names are case-insensitive)',
    });
  });

  it.each([
    [42, 'number'],
    [undefined, 'undefined'],
    [null, 'null'],
    [{ v: 1 }, 'object'],
  ])('refuses a header value %j: must be a string, got %s', async (value, type) => {
    expect(await refusal(withHeaders({ 'x-n': value }))).toEqual({
      category: 'transform_invalid',
      message: `transform header x-n must be a string, got ${type}`,
    });
  });

  it('refuses headers that are not a plain object of strings: an array, a Map, a string, symbol keys', async () => {
    const notObject = { category: 'transform_invalid', message: 'transform headers must be a plain object of strings' };
    expect(await refusal(() => ({ body: {}, headers: [['x-a', '1']] as never }))).toEqual(notObject);
    expect(await refusal(() => ({ body: {}, headers: new Map([['x-a', '1']]) as never }))).toEqual(notObject);
    expect(await refusal(() => ({ body: {}, headers: 'x-a: 1' as never }))).toEqual(notObject);
    expect(await refusal(() => ({ body: {}, headers: { [Symbol('x-a')]: '1' } as never }))).toEqual(notObject);
  });

  it(`refuses more than ${MAX_TRANSFORM_HEADERS} headers, and more than ${MAX_TRANSFORM_HEADER_BYTES} bytes of them`, async () => {
    const many = Object.fromEntries(Array.from({ length: MAX_TRANSFORM_HEADERS + 1 }, (_, i) => [`x-h${i}`, '1']));
    expect(await refusal(withHeaders(many))).toEqual({
      category: 'transform_invalid',
      message: `transform returned ${MAX_TRANSFORM_HEADERS + 1} headers; at most ${MAX_TRANSFORM_HEADERS} are sent`,
    });
    expect(await refusal(withHeaders({ 'x-big': 'a'.repeat(MAX_TRANSFORM_HEADER_BYTES) }))).toEqual({
      category: 'transform_invalid',
      message: `transform headers take ${MAX_TRANSFORM_HEADER_BYTES + 'x-big'.length + 4} bytes; at most ${MAX_TRANSFORM_HEADER_BYTES} are sent`,
    });
  });

  it('quarantines a result whose getters or proxy traps throw, without repeating what they threw (it may hold payload values)', async () => {
    const expected = {
      category: 'transform_invalid',
      message: "reading the transform's result threw (Error); return plain data, not getters or proxies",
    };
    const throwing = () => {
      throw new Error('Zoë ✓ acct_secret_value');
    };
    expect(
      await refusal(() => ({
        body: {},
        get headers(): Record<string, string> {
          return throwing();
        },
      })),
    ).toEqual(expected);
    expect(
      await refusal(() => ({
        body: {},
        headers: {
          get 'x-a'(): string {
            return throwing();
          },
        },
      })),
    ).toEqual(expected);
    expect(await refusal(() => new Proxy({ body: {} }, { has: throwing, get: throwing }) as never)).toEqual(expected);
    expect(await refusal(() => ({ body: {}, headers: new Proxy({}, { ownKeys: throwing }) }))).toEqual(expected);
  });

  it('refuses a body JSON cannot write (a BigInt, a cycle, a throwing toJSON), naming only the error class', async () => {
    const cycle: Record<string, unknown> = { name: 'Zoë ✓' };
    cycle.self = cycle;
    for (const body of [{ amount: 10n }, cycle, { toJSON: () => JSON.parse('{') }]) {
      const got = await refusal(() => ({ body }));
      expect(got.category).toBe('transform_invalid');
      expect(got.message).toMatch(/^transform returned a body that is not JSON \((TypeError|SyntaxError)\)/);
      expect(got.message).not.toContain('Zoë');
    }
    expect(await refusal(() => ({ body: undefined }))).toEqual({
      category: 'transform_invalid',
      message: 'transform returned a body that is not JSON (undefined or a function)',
    });
  });

  it('reads each getter once and returns plain copies: the body serialised once, headers as data properties', async () => {
    let bodyReads = 0;
    let headerReads = 0;
    const out = await transformed(
      () => ({
        get body() {
          bodyReads++;
          return { deal: bodyReads === 1 ? 'first' : 'later' };
        },
        headers: {
          get 'x-a'() {
            headerReads++;
            return headerReads === 1 ? 'ok' : 'Zoë ✓';
          },
        },
      }),
      delivery(),
    );
    expect(out.json).toBe('{"deal":"first"}');
    expect(Object.getOwnPropertyDescriptor(out.headers, 'x-a')).toMatchObject({ value: 'ok' });
    expect([bodyReads, headerReads]).toEqual([1, 1]);
  });
});

describe('the HTTP handle and the circuit breaker', () => {
  const config = defineConfig({
    sources: [
      {
        id: 'platform',
        scheme: { type: 'standard-webhooks' },
        attribution: { eventId: { body: 'id' }, eventType: { body: 'type' }, tenantId: { body: 'tenant_id' }, keyId: { body: 'key_id' } },
      },
    ],
    consumers: [
      {
        id: 'crm-sync',
        kind: 'http',
        url: 'http://127.0.0.1/deals',
        subscribes: ['payment.*'],
        fields: ['id', 'data'],
        http: { breakAfterFailures: 1 },
      },
    ],
  });

  /** A port nothing listens on: a server's, closed again. */
  let closedUrl = '';
  beforeAll(async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/deals`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
  });

  function handleWith(options: { fetch: typeof fetch; transform?: Transform }) {
    const consumer = { ...config.consumers[0]!, url: closedUrl };
    const breaker = { recordBreakerFailure: vi.fn(async () => 1), resetBreaker: vi.fn(async () => undefined) };
    const pause = vi.fn(async () => undefined);
    const handle = createHttpHandle({
      consumer,
      secrets: { get: async () => ({ current: TEST_SECRET }) },
      breaker,
      pause,
      logger: capturingLogger().logger,
      fetch: options.fetch,
      clock: () => NOW,
      sleep: async () => undefined,
      ...(options.transform ? { transform: options.transform } : {}),
    });
    return { handle, breaker, pause };
  }

  /** Node's own fetch, given one more header than hookledger sends: its own refusal, as a transform's bad header made it. */
  const fetchAdding =
    (headers: Record<string, string>): typeof fetch =>
    (url, init) =>
      fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } });

  it('never sends, and never counts toward the breaker, a transform header "Zoë ✓": quarantined transform_invalid', async () => {
    const sent = vi.fn(fetch);
    const { handle, breaker, pause } = handleWith({
      fetch: sent,
      transform: ({ payload }) => ({ body: {}, headers: { 'x-crm-reference': (payload.data as { reference: string }).reference } }),
    });
    const error = await handle(delivery()).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'PermanentError', category: 'transform_invalid' });
    expect(sent).not.toHaveBeenCalled();
    expect(breaker.recordBreakerFailure).not.toHaveBeenCalled();
    expect(pause).not.toHaveBeenCalled();
  });

  it.each([
    ['a header value fetch cannot convert (TypeError)', { 'x-crm-reference': 'Zoë ✓' }, 'request_invalid'],
    ['a header undici refuses (fetch failed: UND_ERR_NOT_SUPPORTED)', { expect: '100-continue' }, 'request_invalid'],
    ['a control character undici refuses (fetch failed: UND_ERR_INVALID_ARG)', { 'x-a': 'a\u0001b' }, 'request_invalid'],
  ])('quarantines a request fetch refuses before sending, %s, without counting it toward the breaker', async (_what, extra, category) => {
    const { handle, breaker, pause } = handleWith({ fetch: fetchAdding(extra) });
    const error = await handle(delivery()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentError);
    expect(error).toMatchObject({ category });
    expect((error as Error).message).not.toContain('Zoë');
    expect(breaker.recordBreakerFailure).not.toHaveBeenCalled();
    expect(pause).not.toHaveBeenCalled();
  });

  it('counts a refused connection (network) and a 503 toward the breaker, and opens it', async () => {
    const refused = handleWith({ fetch });
    const error = await refused.handle(delivery()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableError);
    expect(error).toMatchObject({ category: 'network' });
    expect(refused.breaker.recordBreakerFailure).toHaveBeenCalledTimes(1);
    expect(refused.pause).toHaveBeenCalledWith('crm-sync');

    const unavailable = handleWith({ fetch: async () => new Response('down', { status: 503 }) });
    expect(await unavailable.handle(delivery()).catch((e: unknown) => e)).toMatchObject({ category: 'http_503' });
    expect(unavailable.breaker.recordBreakerFailure).toHaveBeenCalledTimes(1);
  });
});
