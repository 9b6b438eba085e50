/**
 * The scheme families beyond an HMAC of the body: Mailgun's token-only signature, ES256 tokens whose keys
 * are fetched by kid (Plaid), shared secrets (Okta's header, Microsoft Graph's clientState), the
 * cached key port, and the unsigned handshakes' answers.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpVerificationKeys, KeyFetchError } from '../../../adapters/verification-keys';
import { keyRequestFor, signatureHeaders, signedBody, verifierFor } from '../../../core/schemes';
import { jwkThumbprint } from '../../../core/schemes/jwks';
import { mailgunSignature } from '../../../core/schemes/mailgun';
import type { JsonWebKey, VerifyInput } from '../../../core/schemes/types';
import { answerGetHandshake, answerGraphValidation } from '../../../lambdas/ingest/handshake';
import { InputError } from '../../../lambdas/recording/parse';

const NOW = Date.parse('2026-11-30T08:00:00Z');
const T = Math.floor(NOW / 1000);
const input = (rawBody: string | Buffer, headers: Record<string, string> = {}, extra: Partial<VerifyInput> = {}): VerifyInput => ({
  rawBody: Buffer.isBuffer(rawBody) ? rawBody : Buffer.from(rawBody, 'utf8'),
  headers,
  now: NOW,
  toleranceSeconds: 300,
  ...extra,
});

describe('mailgun: HMAC-SHA256 of timestamp + token, carried in the body', () => {
  const KEY = 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0';
  const TOKEN = 'e0b5477167110d68991efc6b9f89f0a11066af27834600e1a7';
  const json = { type: 'mailgun' as const };
  const body = (overrides: { timestamp?: string; token?: string; signature?: string; event?: string } = {}) => {
    const timestamp = overrides.timestamp ?? String(T);
    const token = overrides.token ?? TOKEN;
    const signature = overrides.signature ?? mailgunSignature(KEY, timestamp, token);
    return JSON.stringify({
      signature: { timestamp, token, signature },
      'event-data': { id: 'CPgfbmQMTCKtHW6uIWtuVe', event: overrides.event ?? 'delivered', recipient: 'alice@example.com' },
    });
  };
  const verify = (raw: string, headers: Record<string, string> = { 'content-type': 'application/json' }, secret = KEY) =>
    verifierFor(json).verify(input(raw, headers), { current: secret });

  it('accepts the signature computed as the docs describe (hex HMAC-SHA256 of timestamp then token)', () => {
    expect(verify(body())).toEqual({ ok: true, secretVersion: 'current' });
  });

  it('is what our signer puts in the body, and the docs snippet agrees with it', () => {
    const signed = JSON.parse(
      signedBody(json, { body: Buffer.from('{"event-data":{"event":"opened"}}'), secret: KEY, now: NOW, messageId: TOKEN }).toString(),
    );
    expect(signed.signature).toEqual({ timestamp: String(T), token: TOKEN, signature: mailgunSignature(KEY, String(T), TOKEN) });
    expect(signed['event-data']).toEqual({ event: 'opened' });
  });

  it('accepts a rewritten event-data, because Mailgun does not sign it (why attribution reads only the token)', () => {
    expect(verify(body({ event: 'complained' }))).toEqual({ ok: true, secretVersion: 'current' });
  });

  it('refuses another signing key, a changed token and a changed timestamp: signature_mismatch', () => {
    expect(verify(body(), undefined, 'key-other')).toMatchObject({ ok: false, code: 'signature_mismatch' });
    const forged = body().replace(TOKEN, `${TOKEN.slice(0, -1)}8`);
    expect(verify(forged)).toMatchObject({ ok: false, code: 'signature_mismatch' });
    const moved = body().replace(`"timestamp":"${T}"`, `"timestamp":"${T + 1}"`);
    expect(verify(moved)).toMatchObject({ ok: false, code: 'signature_mismatch' });
  });

  it('refuses a timestamp older than the tolerance: timestamp_out_of_tolerance', () => {
    expect(verify(body({ timestamp: String(T - 301) }))).toMatchObject({ ok: false, code: 'timestamp_out_of_tolerance' });
    expect(verify(body({ timestamp: String(T - 300) }))).toEqual({ ok: true, secretVersion: 'current' });
  });

  it('refuses a body without the signature object, and a form post to a JSON-carrier source', () => {
    expect(verify('{"event-data":{"event":"delivered"}}')).toMatchObject({ ok: false, code: 'missing_signature' });
    const form = new URLSearchParams({ timestamp: String(T), token: TOKEN, signature: mailgunSignature(KEY, String(T), TOKEN) }).toString();
    expect(verify(form, { 'content-type': 'application/x-www-form-urlencoded' })).toMatchObject({
      ok: false,
      code: 'missing_signature',
      message: expect.stringMatching(/carrier: 'form'/),
    });
  });

  it("verifies a legacy form post with carrier: 'form' (top-level fields), and refuses a repeated token field", () => {
    const scheme = { type: 'mailgun' as const, carrier: 'form' as const };
    const fields = { event: 'delivered', timestamp: String(T), token: TOKEN, signature: mailgunSignature(KEY, String(T), TOKEN) };
    const headers = { 'content-type': 'application/x-www-form-urlencoded' };
    const ok = verifierFor(scheme).verify(input(new URLSearchParams(fields).toString(), headers), { current: KEY });
    expect(ok).toEqual({ ok: true, secretVersion: 'current' });
    const twice = `${new URLSearchParams(fields).toString()}&token=other`;
    expect(verifierFor(scheme).verify(input(twice, headers), { current: KEY })).toMatchObject({ ok: false, code: 'missing_signature' });
  });
});

describe('jwks: an ES256 token from jose (an independent implementation), its key fetched by kid', () => {
  const scheme = { type: 'jwks' as const, header: 'plaid-verification' };
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const BODY =
    '{\n  "environment": "sandbox",\n  "item_id": "wz666MBjYWTp2PDzzggYhM6oWWmBb",\n  "webhook_code": "SYNC_UPDATES_AVAILABLE"\n}';
  let jwk: JsonWebKey & { kid: string };
  let otherJwk: JsonWebKey;

  beforeAll(async () => {
    const exported = (await exportJWK(pair.publicKey)) as { kty: string; crv: string; x: string; y: string };
    jwk = { ...exported, kid: jwkThumbprint(exported), alg: 'ES256', expired_at: null };
    otherJwk = { ...(await exportJWK(other.publicKey)), kid: jwk.kid };
  });

  const token = async (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: jwk.kid, typ: 'JWT', ...header }).sign(pair.privateKey);
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  const verify = (jwt: string, body = BODY, keys: Record<string, JsonWebKey> = { [jwk.kid]: jwk }, now = NOW) =>
    verifierFor(scheme).verify(input(body, { 'plaid-verification': jwt }, { publicKeys: keys, now }), { current: 'client:secret' });

  it('names the kid and the configured key endpoint before anything is trusted', async () => {
    const jwt = await token({ iat: T, request_body_sha256: sha256(BODY) });
    expect(keyRequestFor(scheme, input(BODY, { 'plaid-verification': jwt }))).toEqual({
      kid: jwk.kid,
      url: 'https://production.plaid.com/webhook_verification_key/get',
    });
    expect(keyRequestFor(scheme, input(BODY, {}))).toBeUndefined();
  });

  it("accepts jose's token with the body's SHA-256 and a fresh iat", async () => {
    expect(verify(await token({ iat: T - 10, request_body_sha256: sha256(BODY) }))).toEqual({ ok: true, secretVersion: 'current' });
  });

  it('and jose verifies what our signer produces', async () => {
    const { jwtVerify, importJWK } = await import('jose');
    const secret = pair.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
    const headers = signatureHeaders(scheme, { body: Buffer.from(BODY), secret, now: NOW, messageId: 'm' });
    const { payload, protectedHeader } = await jwtVerify(headers['plaid-verification']!, await importJWK(jwk as never, 'ES256'), {
      currentDate: new Date(NOW),
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: jwk.kid });
    expect(payload).toEqual({ iat: T, request_body_sha256: sha256(BODY) });
  });

  it('refuses a tampered body, another key under the kid, and an unknown kid: signature_mismatch', async () => {
    const jwt = await token({ iat: T, request_body_sha256: sha256(BODY) });
    expect(verify(jwt, BODY.replace('SYNC_UPDATES_AVAILABLE', 'DEFAULT_UPDATE'))).toMatchObject({ ok: false, code: 'signature_mismatch' });
    expect(verify(jwt, BODY, { [jwk.kid]: otherJwk })).toMatchObject({ ok: false, code: 'signature_mismatch' });
    expect(verify(jwt, BODY, {})).toMatchObject({ ok: false, code: 'signature_mismatch', message: expect.stringMatching(/knows no key/) });
  });

  it('refuses an iat older than 5 minutes and a key Plaid has expired', async () => {
    expect(verify(await token({ iat: T - 301, request_body_sha256: sha256(BODY) }))).toMatchObject({
      ok: false,
      code: 'timestamp_out_of_tolerance',
    });
    const jwt = await token({ iat: T, request_body_sha256: sha256(BODY) });
    expect(verify(jwt, BODY, { [jwk.kid]: { ...jwk, expired_at: T - 60 } })).toMatchObject({ ok: false, code: 'signature_mismatch' });
  });

  it('refuses a token naming another algorithm (HS256 keyed with the public key, none)', async () => {
    const hs = await new SignJWT({ iat: T, request_body_sha256: sha256(BODY) })
      .setProtectedHeader({ alg: 'HS256', kid: jwk.kid })
      .sign(Buffer.from(JSON.stringify(jwk)));
    expect(verify(hs)).toMatchObject({ ok: false, code: 'malformed_signature' });
  });
});

describe('shared secrets: a header value (Okta) and clientState in every notification (Microsoft Graph)', () => {
  const okta = { type: 'shared-secret' as const, header: 'authorization' };
  it('accepts the configured value, the previous one during an overlap, and refuses anything else', () => {
    const check = (value: string | undefined) =>
      verifierFor(okta).verify(input('{}', value === undefined ? {} : { authorization: value }), {
        current: 'okta-hook-secret-7Qm2',
        previous: 'okta-hook-secret-old',
      });
    expect(check('okta-hook-secret-7Qm2')).toEqual({ ok: true, secretVersion: 'current' });
    expect(check('okta-hook-secret-old')).toEqual({ ok: true, secretVersion: 'previous' });
    expect(check('okta-hook-secret-7Qm')).toMatchObject({ ok: false, code: 'signature_mismatch' });
    expect(check(undefined)).toMatchObject({ ok: false, code: 'missing_signature' });
  });

  it('accepts a batch whose every item carries clientState, and refuses one item without or with another', () => {
    const graph = { type: 'client-state' as const };
    const item = (clientState?: string) => ({ id: 'lsgTZMr9KwAAA', changeType: 'created', ...(clientState ? { clientState } : {}) });
    const check = (...items: object[]) =>
      verifierFor(graph).verify(input(JSON.stringify({ value: items })), { current: 'graph-client-state-4Lx9' });
    expect(check(item('graph-client-state-4Lx9'), item('graph-client-state-4Lx9'))).toEqual({ ok: true, secretVersion: 'current' });
    expect(check(item('graph-client-state-4Lx9'), item('graph-client-state-4Lx8'))).toMatchObject({
      ok: false,
      code: 'signature_mismatch',
    });
    expect(check(item('graph-client-state-4Lx9'), item())).toMatchObject({ ok: false, code: 'missing_signature' });
    expect(check()).toMatchObject({ ok: false, code: 'missing_signature' });
  });
});

describe('the key port: fetched by kid, cached, misses remembered, rate-limited', () => {
  let server: Server;
  let url: string;
  const calls: Array<Record<string, unknown>> = [];
  const KEY = { kty: 'EC', crv: 'P-256', x: 'x0', y: 'y0', kid: 'kid_6c5516e1', alg: 'ES256', expired_at: null };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        const body = JSON.parse(text) as Record<string, unknown>;
        calls.push(body);
        const known = body.client_id === 'client_5f2a' && body.secret === 'secret_9c1d' && body.key_id === KEY.kid;
        res.writeHead(known ? 200 : 400, { 'content-type': 'application/json' });
        res.end(JSON.stringify(known ? { key: KEY, request_id: 'req_1' } : { error_code: 'INVALID_WEBHOOK_VERIFICATION_KEY_ID' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook_verification_key/get`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('fetches a kid once with the credentials, serves it from the cache, and remembers an unknown kid for a minute', async () => {
    calls.length = 0;
    let now = NOW;
    const keys = new HttpVerificationKeys({ clock: () => now });
    const ask = (kid: string) => keys.get({ sourceId: 'plaid', url, kid, credentials: 'client_5f2a:secret_9c1d' });
    expect(await Promise.all([ask(KEY.kid), ask(KEY.kid), ask(KEY.kid)])).toEqual([KEY, KEY, KEY]);
    expect(calls).toEqual([{ client_id: 'client_5f2a', secret: 'secret_9c1d', key_id: KEY.kid }]);
    expect(await ask('kid_unknown')).toBeUndefined();
    expect(await ask('kid_unknown')).toBeUndefined();
    expect(calls).toHaveLength(2);
    now += 60_001;
    expect(await ask('kid_unknown')).toBeUndefined();
    expect(await ask(KEY.kid)).toEqual(KEY);
    expect(calls).toHaveLength(3);
  });

  it('keeps serving a key past its TTL while the endpoint cannot be reached; an unknown kid then fails (503)', async () => {
    let now = NOW;
    let down = false;
    const fetchKey: typeof fetch = async (input, init) => {
      if (down) throw new TypeError('fetch failed');
      return fetch(input, init);
    };
    const keys = new HttpVerificationKeys({ clock: () => now, fetch: fetchKey, ttlMs: 1000 });
    const ask = (kid: string) => keys.get({ sourceId: 'plaid', url, kid, credentials: 'client_5f2a:secret_9c1d' });
    expect(await ask(KEY.kid)).toEqual(KEY);
    down = true;
    now += 5000;
    expect(await ask(KEY.kid)).toEqual(KEY);
    await expect(ask('kid_new')).rejects.toThrow(/did not answer \(TypeError\)/);
  });

  const junk = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `kid_invented_${String(from + i).padStart(4, '0')}`);

  it('ten invented kids a minute do not keep a fresh container from the genuine key: refused once (503), it is fetched at its retry', async () => {
    calls.length = 0;
    let now = NOW;
    const keys = new HttpVerificationKeys({ clock: () => now });
    const ask = (kid: string) => keys.get({ sourceId: 'plaid', url, kid, credentials: 'client_5f2a:secret_9c1d' });
    for (const kid of junk(10)) expect(await ask(kid)).toBeUndefined();
    await expect(ask(KEY.kid)).rejects.toThrow(
      new KeyFetchError('verification key fetches for source "plaid" found no key 10 times in the last minute; retry later'),
    );
    // The flood goes on (invented kids named once each), and the provider retries 40 s later.
    now += 20_000;
    for (const kid of junk(30, 10)) await expect(ask(kid)).rejects.toBeInstanceOf(KeyFetchError);
    now += 20_000;
    expect(await ask(KEY.kid)).toEqual(KEY);
    expect(calls.filter((c) => c.key_id === KEY.kid)).toHaveLength(1);
    expect(calls).toHaveLength(11);
  });

  it('a kid refused for the spent budget is fetched when named again, while invented kids named once stay refused', async () => {
    calls.length = 0;
    const keys = new HttpVerificationKeys({ clock: () => NOW });
    const ask = (kid: string) => keys.get({ sourceId: 'plaid', url, kid, credentials: 'client_5f2a:secret_9c1d' });
    for (const kid of junk(12)) await ask(kid).catch(() => undefined);
    await expect(ask(KEY.kid)).rejects.toBeInstanceOf(KeyFetchError);
    await expect(ask('kid_invented_9999')).rejects.toBeInstanceOf(KeyFetchError);
    expect(await ask(KEY.kid)).toEqual(KEY);
  });

  it("invented kids at one source spend nothing of a known kid's refresh nor of another source's budget", async () => {
    calls.length = 0;
    let now = NOW;
    const keys = new HttpVerificationKeys({ clock: () => now, ttlMs: 60_000 });
    const ask = (sourceId: string, kid: string) => keys.get({ sourceId, url, kid, credentials: 'client_5f2a:secret_9c1d' });
    expect(await ask('plaid', KEY.kid)).toEqual(KEY);
    now += 61_000; // the known key's TTL ran out
    for (const kid of junk(25)) await ask('plaid', kid).catch(() => undefined);
    expect(await ask('plaid', KEY.kid)).toEqual(KEY); // refreshed: a call, though the budget is spent
    expect(calls.filter((c) => c.key_id === KEY.kid)).toHaveLength(2);
    expect(await ask('plaid-eu', KEY.kid)).toEqual(KEY); // another source: its own budget
    expect(calls.filter((c) => c.key_id === KEY.kid)).toHaveLength(3);
  });

  it('bounds outbound calls under a flood: 200 invented kids named twice each cost 10 misses and 10 retries a minute, per source', async () => {
    calls.length = 0;
    let now = NOW;
    const keys = new HttpVerificationKeys({ clock: () => now });
    const ask = (kid: string) => keys.get({ sourceId: 'plaid', url, kid, credentials: 'client_5f2a:secret_9c1d' });
    let refused = 0;
    for (const kid of [...junk(200), ...junk(200)]) await ask(kid).catch(() => refused++);
    // The first 10 found no key (remembered: named again they cost nothing), the next 10 came back as retries.
    expect(calls).toHaveLength(20);
    expect(refused).toBe(190 + 180);
    now += 60_001;
    for (const kid of junk(200, 200)) await ask(kid).catch(() => refused++);
    expect(calls).toHaveLength(30);
  });

  it('keeps serving a known key while its refresh fails, asking the endpoint again only after missTtlMs', async () => {
    calls.length = 0;
    let now = NOW;
    let down = false;
    let attempts = 0;
    const fetchKey: typeof fetch = async (input, init) => {
      attempts++;
      if (down) throw new TypeError('fetch failed');
      return fetch(input, init);
    };
    const keys = new HttpVerificationKeys({ clock: () => now, fetch: fetchKey, ttlMs: 1000 });
    const ask = () => keys.get({ sourceId: 'plaid', url, kid: KEY.kid, credentials: 'client_5f2a:secret_9c1d' });
    expect(await ask()).toEqual(KEY);
    down = true;
    now += 5000;
    for (let i = 0; i < 50; i++) expect(await ask()).toEqual(KEY);
    expect(attempts).toBe(2);
    now += 60_001;
    expect(await ask()).toEqual(KEY);
    expect(attempts).toBe(3);
  });
});

describe('unsigned handshakes: exact answers, refusals as InputErrors', () => {
  const q = (text: string) => new URLSearchParams(text);
  it('Meta: echoes hub.challenge for the configured verify token only (403 otherwise)', () => {
    const ok = answerGetHandshake('meta-hub-challenge', {
      query: q('hub.mode=subscribe&hub.verify_token=vt_9c2f7a1e5b3d4c6e&hub.challenge=1158201444'),
      headers: {},
      verifyToken: 'vt_9c2f7a1e5b3d4c6e',
    });
    expect(ok).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'text/plain', 'x-content-type-options': 'nosniff' },
      body: '1158201444',
    });
    const wrong = () =>
      answerGetHandshake('meta-hub-challenge', {
        query: q('hub.mode=subscribe&hub.verify_token=vt_guess&hub.challenge=1158201444'),
        headers: {},
        verifyToken: 'vt_9c2f7a1e5b3d4c6e',
      });
    expect(wrong).toThrow(expect.objectContaining({ code: 'verify_token_mismatch', status: 403 }));
  });

  it('Dropbox and Graph: refuse a challenge too long or with control characters (never echoed)', () => {
    expect(() => answerGetHandshake('dropbox-challenge', { query: q(`challenge=${'a'.repeat(257)}`), headers: {} })).toThrow(InputError);
    expect(() => answerGetHandshake('dropbox-challenge', { query: q('challenge=a%0Ab'), headers: {} })).toThrow(InputError);
    expect(answerGraphValidation(q('validationToken=Validation%3A+Testing+client+application+reachability'))?.body).toBe(
      'Validation: Testing client application reachability',
    );
    expect(answerGraphValidation(q('other=1'))).toBeUndefined();
  });
});
