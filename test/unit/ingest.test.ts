import { ConditionalCheckFailedException, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../adapters/clients';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import { payloadHmac } from '../../adapters/payload-hash';
import type { SecretsPort } from '../../adapters/secrets';
import { defineConfig } from '../../core/config/schema';
import { ALL_SCHEMES, signatureHeaders } from '../../core/schemes';
import config from '../../hookledger.config';
import { createIngestHandler } from '../../lambdas/ingest/app';
import { httpEvent, NOW, OLD_SECRET, platformEvent, signedHeaders, TEST_HASH_KEY, TEST_SECRET } from '../support/factories';
import { capturingLogger } from '../support/logs';

const ddbMock = mockClient(DynamoDBDocumentClient);

function setup(secrets: SecretsPort = staticSecrets({ current: TEST_SECRET }), cfg = config) {
  const { logger, lines } = capturingLogger();
  const outcomes: string[] = [];
  const store = intakeStore(eventStores({ client: createDocumentClient({ region: 'us-east-1' }), tableName: 'events' }));
  const handler = createIngestHandler({
    schemes: ALL_SCHEMES,
    config: cfg,
    store,
    secrets,
    logger,
    clock: () => NOW,
    onOutcome: (o) => outcomes.push(o),
  });
  return { handler, lines, outcomes };
}

function staticSecrets(
  value: { current: string; previous?: string; previousUntil?: number },
  refreshed = value,
): SecretsPort & { refreshes: number } {
  const port = {
    refreshes: 0,
    payloadHashKey: async () => TEST_HASH_KEY,
    get: async () => value,
    refresh: async () => {
      port.refreshes++;
      return refreshed;
    },
  };
  return port;
}

const putItems = () => ddbMock.commandCalls(PutCommand).map((c) => c.args[0].input.Item as Record<string, unknown>);

afterEach(() => ddbMock.reset());

describe('intake', () => {
  describe('a verified first delivery', () => {
    it('stores payload then receipt and answers 202 with three deliveries for payment.succeeded', async () => {
      ddbMock.on(PutCommand).resolves({});
      const { handler } = setup();
      const body = JSON.stringify(platformEvent());
      const res = await handler(httpEvent('platform', body, signedHeaders(body)));
      expect(res.statusCode).toBe(202);
      expect(JSON.parse(res.body!)).toEqual({ event_id: 'evt_01J8K7M2Q4', deliveries: 3 });
      const [payload, receipt] = putItems();
      const hmac = payloadHmac(TEST_HASH_KEY, Buffer.from(body));
      expect(payload).toMatchObject({ pk: `pay#platform#evt_01J8K7M2Q4#${hmac}`, kind: 'payload' });
      expect(receipt).toMatchObject({
        payloadHmac: hmac,
        pk: 'evt#platform#evt_01J8K7M2Q4',
        kind: 'event',
        tenantId: 'tenant_204',
        keyId: 'key_42',
        eventType: 'payment.succeeded',
        consumers: ['billing-meter', 'audit-writer', 'risk-evaluator'],
        secretVersion: 'current',
        receivedAt: NOW,
        payloadExpiresAt: NOW + 30 * 86_400_000,
      });
      expect(ddbMock.commandCalls(PutCommand)[1]?.args[0].input.ConditionExpression).toBe('attribute_not_exists(pk)');
    });

    it('honours a base64-encoded body and routes invoice.paid to two consumers', async () => {
      ddbMock.on(PutCommand).resolves({});
      const { handler } = setup();
      const body = JSON.stringify(platformEvent({ id: 'evt_01J8K7M2R5', type: 'invoice.paid' }));
      const res = await handler(httpEvent('platform', Buffer.from(body), signedHeaders(body)));
      expect(res.statusCode).toBe(202);
      expect(JSON.parse(res.body!)).toEqual({ event_id: 'evt_01J8K7M2R5', deliveries: 2 });
    });
  });

  describe('outcomes', () => {
    it('reports recorded, duplicate and each refusal by its code, once per request', async () => {
      const { handler, outcomes } = setup();
      const body = JSON.stringify(platformEvent());
      ddbMock.on(PutCommand).resolves({});
      await handler(httpEvent('platform', body, signedHeaders(body)));
      ddbMock.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'exists', $metadata: {} }));
      ddbMock.on(GetCommand).resolves({ Item: { payloadHmac: payloadHmac(TEST_HASH_KEY, Buffer.from(body)) } });
      await handler(httpEvent('platform', body, signedHeaders(body)));
      await handler(httpEvent('platform', body, { ...signedHeaders(body), 'webhook-signature': 'v1,AAAA' }));
      await handler(httpEvent('nope', body, {}));
      ddbMock.on(PutCommand).rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));
      await handler(httpEvent('platform', body, signedHeaders(body)));
      expect(outcomes).toEqual(['recorded', 'duplicate', 'signature_mismatch', 'unknown_source', 'storage_unavailable']);
    });
  });

  describe('a duplicate delivery', () => {
    it('answers 200 duplicate when the receipt already exists with the same keyed hash', async () => {
      const body = JSON.stringify(platformEvent());
      ddbMock.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'exists', $metadata: {} }));
      ddbMock.on(GetCommand).resolves({ Item: { payloadHmac: payloadHmac(TEST_HASH_KEY, Buffer.from(body)) } });
      const { handler } = setup();
      const res = await handler(httpEvent('platform', body, signedHeaders(body)));
      expect(res.statusCode).toBe(200);
      expect(JSON.parse(res.body!)).toEqual({ status: 'duplicate', event_id: 'evt_01J8K7M2Q4' });
    });
  });

  describe('storage failure', () => {
    it('answers 503 so the provider retries when DynamoDB throttles', async () => {
      ddbMock.on(PutCommand).rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));
      const { handler } = setup();
      const body = JSON.stringify(platformEvent());
      const res = await handler(httpEvent('platform', body, signedHeaders(body)));
      expect(res.statusCode).toBe(503);
      expect(JSON.parse(res.body!).error).toBe('storage_unavailable');
    });
  });

  describe('verification', () => {
    it('answers 401, stores nothing and logs only the reason for a wrong signature', async () => {
      const { handler, lines } = setup();
      const body = JSON.stringify(platformEvent());
      const headers = signedHeaders(body, { secret: 'whsec_d3JvbmcgYnV0IHZhbGlkIGJhc2U2NA==' });
      const res = await handler(httpEvent('platform', body, headers));
      expect(res.statusCode).toBe(401);
      expect(JSON.parse(res.body!).error).toBe('signature_mismatch');
      expect(ddbMock.calls()).toHaveLength(0);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('"reason":"signature_mismatch"');
      for (const secretish of [TEST_SECRET, headers['webhook-signature'], 'tenant_204', 'card_last4']) {
        expect(lines.join('\n')).not.toContain(secretish);
      }
    });

    it('refreshes the cached secret once after a mismatch, then accepts a just-rotated secret', async () => {
      ddbMock.on(PutCommand).resolves({});
      const secrets = staticSecrets({ current: OLD_SECRET }, { current: TEST_SECRET, previous: OLD_SECRET });
      const { handler } = setup(secrets);
      const body = JSON.stringify(platformEvent());
      const res = await handler(httpEvent('platform', body, signedHeaders(body)));
      expect(res.statusCode).toBe(202);
      expect(secrets.refreshes).toBe(1);
    });

    it('records that the previous secret verified an event during the rotation overlap', async () => {
      ddbMock.on(PutCommand).resolves({});
      const { handler } = setup(staticSecrets({ current: TEST_SECRET, previous: OLD_SECRET, previousUntil: NOW + 3_600_000 }));
      const body = JSON.stringify(platformEvent());
      const res = await handler(httpEvent('platform', body, signedHeaders(body, { secret: OLD_SECRET })));
      expect(res.statusCode).toBe(202);
      expect(putItems()[1]).toMatchObject({ secretVersion: 'previous' });
    });

    it('answers 401 signature_mismatch for the previous secret once its overlap has ended, storing nothing', async () => {
      const { handler, outcomes } = setup(staticSecrets({ current: TEST_SECRET, previous: OLD_SECRET, previousUntil: NOW }));
      const body = JSON.stringify(platformEvent());
      const res = await handler(httpEvent('platform', body, signedHeaders(body, { secret: OLD_SECRET })));
      expect(res.statusCode).toBe(401);
      expect(JSON.parse(res.body!).error).toBe('signature_mismatch');
      expect(outcomes).toEqual(['signature_mismatch']);
      expect(ddbMock.calls()).toHaveLength(0);
    });

    it('refuses the previous secret with 401 once the port no longer returns it (retired), storing nothing', async () => {
      const { handler } = setup(staticSecrets({ current: TEST_SECRET }));
      const body = JSON.stringify(platformEvent());
      const res = await handler(httpEvent('platform', body, signedHeaders(body, { secret: OLD_SECRET })));
      expect(res.statusCode).toBe(401);
      expect(JSON.parse(res.body!).error).toBe('signature_mismatch');
      expect(ddbMock.calls()).toHaveLength(0);
    });

    it('takes a previous-secret match inside the overlap from the port without a second lookup', async () => {
      ddbMock.on(PutCommand).resolves({});
      const secrets = staticSecrets({ current: TEST_SECRET, previous: OLD_SECRET, previousUntil: NOW + 3_600_000 });
      const { handler } = setup(secrets);
      const body = JSON.stringify(platformEvent());
      const res = await handler(httpEvent('platform', body, signedHeaders(body, { secret: OLD_SECRET })));
      expect(res.statusCode).toBe(202);
      expect(secrets.refreshes).toBe(0);
    });

    it('answers 401 timestamp_out_of_tolerance for a signature made 301 s ago', async () => {
      const { handler } = setup();
      const body = JSON.stringify(platformEvent());
      const res = await handler(httpEvent('platform', body, signedHeaders(body, { at: NOW - 301_000 })));
      expect(res.statusCode).toBe(401);
      expect(JSON.parse(res.body!).error).toBe('timestamp_out_of_tolerance');
    });
  });

  describe('bad input', () => {
    it('answers 404 for an unknown source without reading any secret', async () => {
      const { handler } = setup();
      const res = await handler(httpEvent('stripe-eu', '{}', {}));
      expect(res.statusCode).toBe(404);
      expect(JSON.parse(res.body!)).toMatchObject({ error: 'unknown_source' });
    });

    it('answers 413 above the source limit before verifying', async () => {
      const small = defineConfig({ ...config, sources: [{ ...config.sources[0]!, maxBodyBytes: 1024 }] });
      const { handler } = setup(undefined, small);
      const body = JSON.stringify(platformEvent({ data: { filler: 'x'.repeat(2000) } }));
      const res = await handler(httpEvent('platform', body, signedHeaders(body)));
      expect(res.statusCode).toBe(413);
      expect(JSON.parse(res.body!).message).toMatch(/accepts at most 1024/);
    });

    it('answers 400 naming tenant_id when it is missing', async () => {
      const { handler } = setup();
      const { tenant_id: _, ...rest } = platformEvent();
      const body = JSON.stringify(rest);
      const res = await handler(httpEvent('platform', body, signedHeaders(body)));
      expect(res.statusCode).toBe(400);
      expect(JSON.parse(res.body!)).toEqual({
        error: 'missing_attribution',
        message: 'tenant_id is missing: expected it at body.tenant_id',
      });
      expect(ddbMock.commandCalls(PutCommand)).toHaveLength(0);
    });

    it('records a whole-number key_id as its decimal string (GitHub sends ids as JSON numbers)', async () => {
      ddbMock.on(PutCommand).resolves({});
      const { handler } = setup();
      const body = JSON.stringify({ ...platformEvent(), key_id: 48213907 });
      const res = await handler(httpEvent('platform', body, signedHeaders(body)));
      expect(res.statusCode).toBe(202);
      expect(putItems()[1]).toMatchObject({ keyId: '48213907' });
    });

    it.each([
      [42.5, 'a fractional number'],
      [2 ** 53 + 2, 'an integer beyond 2^53'],
      [true, 'a boolean'],
      [{ id: 7 }, 'an object'],
      [['key_42'], 'an array'],
    ])('answers 400 naming key_id for %j (%s) and stores nothing', async (value, described) => {
      const { handler } = setup();
      const body = JSON.stringify({ ...platformEvent(), key_id: value });
      const res = await handler(httpEvent('platform', body, signedHeaders(body)));
      expect(res.statusCode).toBe(400);
      expect(JSON.parse(res.body!)).toEqual({
        error: 'invalid_attribution',
        message: `key_id at body.key_id must be a string or a whole number, got ${described}`,
      });
      expect(ddbMock.calls()).toHaveLength(0);
    });

    it('answers 400 for a __proto__ key and for absurd nesting', async () => {
      const { handler } = setup();
      const proto = '{"id":"evt_1","type":"a","tenant_id":"t","key_id":"k","__proto__":{"admin":true}}';
      expect(JSON.parse((await handler(httpEvent('platform', proto, signedHeaders(proto)))).body!).error).toBe('forbidden_key');
      const deep = `{"id":"evt_1","type":"a","tenant_id":"t","key_id":"k","x":${'['.repeat(40)}${']'.repeat(40)}}`;
      expect(JSON.parse((await handler(httpEvent('platform', deep, signedHeaders(deep)))).body!).error).toBe('too_deep');
    });

    it('answers 400 for a body that is not UTF-8', async () => {
      const { handler } = setup();
      const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
      // Sign the exact bytes: the reference library signs strings, so use send's signer (proved against the verifier).
      const headers = signatureHeaders(
        { type: 'standard-webhooks' },
        { body: bytes, secret: TEST_SECRET, now: NOW, messageId: 'msg_2Kp7QeWd9' },
      );
      const res = await handler(httpEvent('platform', bytes, headers));
      expect(res.statusCode).toBe(400);
      expect(JSON.parse(res.body!).error).toBe('invalid_encoding');
    });

    it('answers 400 for a header value with a control character', async () => {
      const { handler } = setup();
      const body = JSON.stringify(platformEvent());
      const res = await handler(httpEvent('platform', body, { ...signedHeaders(body), 'x-trace': 'a\u0001b' }));
      expect(res.statusCode).toBe(400);
      expect(JSON.parse(res.body!)).toEqual({ error: 'invalid_header', message: 'header x-trace contains control characters' });
    });
  });

  describe('key registry', () => {
    const enforcing = defineConfig({ ...config, sources: [{ ...config.sources[0]!, enforceKeyRegistry: true }] });
    it('answers 403 for a key of another tenant and stores nothing', async () => {
      ddbMock.on(GetCommand).resolves({ Item: { pk: 'key#key_42', keyId: 'key_42', tenantId: 'tenant_777', status: 'active' } });
      const { handler } = setup(undefined, enforcing);
      const body = JSON.stringify(platformEvent());
      const res = await handler(httpEvent('platform', body, signedHeaders(body)));
      expect(res.statusCode).toBe(403);
      expect(JSON.parse(res.body!).error).toBe('key_tenant_mismatch');
      expect(ddbMock.commandCalls(PutCommand)).toHaveLength(0);
    });
    it('still records an event whose key was already revoked, under the captured tenant', async () => {
      ddbMock.on(GetCommand).resolves({ Item: { pk: 'key#key_42', keyId: 'key_42', tenantId: 'tenant_204', status: 'revoked' } });
      ddbMock.on(PutCommand).resolves({});
      const { handler } = setup(undefined, enforcing);
      const body = JSON.stringify(platformEvent());
      const res = await handler(httpEvent('platform', body, signedHeaders(body)));
      expect(res.statusCode).toBe(202);
      expect(putItems()[1]).toMatchObject({ tenantId: 'tenant_204', keyId: 'key_42' });
    });
  });
});
