/**
 * Intake with a key-fetching scheme (jwks: Plaid) and the methods intake answers: the key port is
 * asked only for the kid the request names and only for jwks sources; a port that cannot answer
 * makes a 503 (the provider retries), never a stored event; methods other than POST and a
 * preset's GET handshake are 405.
 */
import { generateKeyPairSync } from 'node:crypto';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { signatureHeaders } from '../../core/schemes';
import { publicJwkOf } from '../../core/schemes/jwks';
import type { VerificationKeysPort } from '../../core/schemes/types';
import { createIngestHandler } from '../../lambdas/ingest/app';
import { createDocumentClient } from '../../adapters/clients';
import { EventStore } from '../../adapters/event-store';
import type { SecretsPort } from '../../adapters/secrets';
import { KeyFetchError } from '../../adapters/verification-keys';
import { httpEvent, NOW, signedHeaders, TEST_HASH_KEY, TEST_SECRET } from '../support/factories';
import { capturingLogger } from '../support/logs';

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

function setup(verificationKeys?: VerificationKeysPort) {
  const { logger, lines } = capturingLogger();
  const secrets: SecretsPort = {
    payloadHashKey: async () => TEST_HASH_KEY,
    get: async (source) => ({ current: source === 'plaid' ? CREDENTIALS : TEST_SECRET }),
    refresh: async (source) => ({ current: source === 'plaid' ? CREDENTIALS : TEST_SECRET }),
  };
  const store = new EventStore({ client: createDocumentClient({ region: 'us-east-1' }), tableName: 'events' });
  const handler = createIngestHandler({
    config,
    store,
    secrets,
    logger,
    clock: () => NOW,
    ...(verificationKeys ? { verificationKeys } : {}),
  });
  return { handler, lines };
}

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
