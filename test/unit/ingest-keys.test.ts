/**
 * Intake with a key-fetching scheme (jwks: Plaid) and the methods intake answers: the key port is
 * asked only for the kid the request names and only for jwks sources; a port that cannot answer
 * makes a 503 (the provider retries), never a stored event; methods other than POST and a
 * preset's GET handshake are 405.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpVerificationKeys, KeyFetchError } from '../../adapters/verification-keys';
import { defineConfig } from '../../core/config/schema';
import { signatureHeaders } from '../../core/schemes';
import { publicJwkOf } from '../../core/schemes/jwks';
import type { VerificationKeysPort } from '../../core/schemes/types';
import { httpEvent, NOW, signedHeaders, TEST_SECRET } from '../support/factories';
import { mockedIntake } from '../support/ingest';

const ddbMock = mockClient(DynamoDBDocumentClient);
afterEach(() => ddbMock.reset());

const signingKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .privateKey.export({ format: 'der', type: 'pkcs8' })
  .toString('base64');
const jwk = publicJwkOf(signingKey);
const CREDENTIALS = 'client_5f2a7c1e:secret_9c1d3b8a';
const BODY = '{"environment":"sandbox","item_id":"wz666MBjYWTp2PDzzggYhM6oWWmBb","webhook_code":"SYNC_UPDATES_AVAILABLE"}';

const config = defineConfig({
  sources: [
    { id: 'plaid', provider: 'plaid', attribution: { keyId: { body: 'environment' } } },
    {
      id: 'platform',
      scheme: { type: 'standard-webhooks' },
      attribution: { eventId: { body: 'id' }, eventType: { body: 'type' }, tenantId: { body: 'tenant_id' }, keyId: { body: 'key_id' } },
    },
  ],
  consumers: [{ id: 'billing', subscribes: ['*'], fields: ['item_id'], entry: 'lambdas/consumers/billing.ts' }],
});

const setup = (verificationKeys?: VerificationKeysPort) =>
  mockedIntake({
    config,
    secretOf: (source) => (source === 'plaid' ? CREDENTIALS : TEST_SECRET),
    ...(verificationKeys ? { verificationKeys } : {}),
  });

function plaidRequest(body = BODY): APIGatewayProxyEventV2 {
  const headers = signatureHeaders(
    { type: 'jwks', header: 'plaid-verification' },
    { body: Buffer.from(BODY), secret: signingKey, now: NOW, messageId: 'm' },
  );
  return httpEvent('plaid', body, { 'content-type': 'application/json', ...headers });
}

const asked: unknown[] = [];
const fakeKeys = (answer: () => Promise<typeof jwk | undefined>): VerificationKeysPort => ({
  get: async (request) => {
    asked.push(request);
    return answer();
  },
});

describe('intake with a jwks source', () => {
  it('asks the port for the kid the token names, with the source credentials, and records the event', async () => {
    ddbMock.on(PutCommand).resolves({});
    asked.length = 0;
    const { handler } = setup(fakeKeys(async () => jwk));
    const res = await handler(plaidRequest());
    expect(res.statusCode).toBe(202);
    expect(asked).toEqual([
      { sourceId: 'plaid', kid: jwk.kid, url: 'https://production.plaid.com/webhook_verification_key/get', credentials: CREDENTIALS },
    ]);
    expect(ddbMock.commandCalls(PutCommand).length).toBeGreaterThan(0);
  });

  it('refuses 401 when the port knows no such key, and 503 when it cannot answer; stores nothing, logs no credential', async () => {
    const unknown = setup(fakeKeys(async () => undefined));
    expect(await unknown.handler(plaidRequest())).toMatchObject({ statusCode: 401 });
    const failing = setup(fakeKeys(async () => Promise.reject(new KeyFetchError('the verification key endpoint answered 502'))));
    const res = await failing.handler(plaidRequest());
    expect(res).toMatchObject({ statusCode: 503 });
    expect(JSON.parse(res.body as string)).toEqual({ error: 'unavailable', message: 'the event could not be accepted; retry later' });
    const unwired = setup();
    expect(await unwired.handler(plaidRequest())).toMatchObject({ statusCode: 503 });
    expect(ddbMock.commandCalls(PutCommand)).toHaveLength(0);
    for (const { lines } of [unknown, failing, unwired]) expect(JSON.stringify(lines)).not.toContain('secret_9c1d3b8a');
  });

  it('never asks the port for a source of another scheme', async () => {
    ddbMock.on(PutCommand).resolves({});
    asked.length = 0;
    const { handler } = setup(fakeKeys(async () => jwk));
    const body = JSON.stringify({ id: 'evt_01J8K7K001', type: 'payment.succeeded', tenant_id: 'tenant_204', key_id: 'key_42' });
    const res = await handler(httpEvent('platform', body, signedHeaders(body, { secret: TEST_SECRET, at: NOW, msgId: 'msg_1' })));
    expect(res.statusCode).toBe(202);
    expect(asked).toEqual([]);
  });
});

describe('invented kids against a fresh container (the real key port, a local key endpoint)', () => {
  let server: Server;
  let keysUrl: string;
  const asked: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        const body = JSON.parse(text) as { key_id: string };
        asked.push(body.key_id);
        const known = body.key_id === jwk.kid;
        res.writeHead(known ? 200 : 400, { 'content-type': 'application/json' });
        res.end(JSON.stringify(known ? { key: jwk } : { error_code: 'INVALID_WEBHOOK_VERIFICATION_KEY_ID' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    keysUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook_verification_key/get`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** A well-formed Plaid request signed with someone else's key: its kid is one Plaid never issued. */
  const invented = (i: number) => {
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
    const headers = signatureHeaders(
      { type: 'jwks', header: 'plaid-verification' },
      { body: Buffer.from(BODY), secret: key, now: NOW, messageId: `m${i}` },
    );
    return httpEvent('plaid', BODY, { 'content-type': 'application/json', ...headers });
  };

  it('ten invented kids before the genuine one spend the miss budget; the genuine request is 202 at its retry, stored once', async () => {
    ddbMock.on(PutCommand).resolves({});
    asked.length = 0;
    const plaid = defineConfig({
      ...config,
      sources: [{ ...config.sources[0]!, scheme: { type: 'jwks', header: 'plaid-verification', keysUrl } }],
    });
    let now = NOW;
    const { handler } = mockedIntake({
      config: plaid,
      secretOf: () => CREDENTIALS,
      clock: () => now,
      verificationKeys: new HttpVerificationKeys({ clock: () => now }),
    });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await handler(invented(i))).statusCode as number);
    expect(statuses).toEqual([...Array(10).fill(401), 503, 503]);
    expect(ddbMock.commandCalls(PutCommand)).toHaveLength(0);

    expect(await handler(plaidRequest())).toMatchObject({ statusCode: 503 }); // the budget is spent: the provider retries
    for (let i = 12; i < 40; i++) expect(await handler(invented(i))).toMatchObject({ statusCode: 503 });
    now += 30_000;
    expect(await handler(plaidRequest())).toMatchObject({ statusCode: 202 });
    expect(asked.filter((kid) => kid === jwk.kid)).toHaveLength(1);
    expect(asked).toHaveLength(11);
    // One event: its payload and its receipt, under the id derived from the signed body.
    const stored = ddbMock.commandCalls(PutCommand).map((c) => String(c.args[0].input.Item?.pk));
    expect(stored).toHaveLength(2);
    expect(stored.filter((pk) => pk.startsWith('evt#plaid#bh_'))).toHaveLength(1);
  });
});

describe('methods', () => {
  it.each(['GET', 'PUT', 'DELETE'])(
    'answers %s 405 with Allow: POST for a source without a GET handshake, storing nothing',
    async (method) => {
      const { handler } = setup(fakeKeys(async () => jwk));
      const event = plaidRequest();
      const res = await handler({ ...event, requestContext: { ...event.requestContext, http: { ...event.requestContext.http, method } } });
      expect(res).toMatchObject({ statusCode: 405, headers: { allow: 'POST', 'content-type': 'application/json' } });
      expect(ddbMock.commandCalls(PutCommand)).toHaveLength(0);
    },
  );
});
