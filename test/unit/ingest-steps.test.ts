/**
 * Intake's steps one at a time (lambdas/ingest: request.ts, handshake.ts, verify.ts, record.ts,
 * respond.ts), and the handler's one read of the signing secrets per request.
 */
import { createHmac } from 'node:crypto';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../adapters/clients';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import type { SecretsPort } from '../../adapters/secrets';
import { defineConfig } from '../../core/config/schema';
import type { EventItem, KeyItem } from '../../core/model';
import { ALL_SCHEMES, signatureHeaders } from '../../core/schemes';
import type { SigningSecrets } from '../../core/schemes/types';
import { createIngestHandler } from '../../lambdas/ingest/app';
import { answerHandshake } from '../../lambdas/ingest/handshake';
import { checkShape, route } from '../../lambdas/ingest/request';
import { respond } from '../../lambdas/ingest/respond';
import { readSecrets, verify } from '../../lambdas/ingest/verify';
import { InputError } from '../../lambdas/recording/parse';
import { attribute, checkKey, claimBody, readBody, record } from '../../lambdas/recording/record';
import type { IngestRequest } from '../../lambdas/recording/request';
import { httpEvent, NOW, OLD_SECRET, platformEvent, signedHeaders, TEST_HASH_KEY, TEST_SECRET } from '../support/factories';
import { capturingLogger } from '../support/logs';

const ZOOM_SECRET = 'zoom-secret-token-Q7x2Lm';
const SLACK_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const OKTA_SECRET = 'okta-shared-secret-6Rw2Yp';
const HMAC = 'a'.repeat(64);
const platformAttribution = {
  eventId: { body: 'id' },
  eventType: { body: 'type' },
  tenantId: { body: 'tenant_id' },
  keyId: { body: 'key_id' },
};

const config = defineConfig({
  sources: [
    { id: 'platform', scheme: { type: 'standard-webhooks' }, maxBodyBytes: 1024, attribution: platformAttribution },
    { id: 'platform-keyed', scheme: { type: 'standard-webhooks' }, enforceKeyRegistry: true, attribution: platformAttribution },
    { id: 'platform-by-body', scheme: { type: 'standard-webhooks' }, replayProtection: 'body', attribution: platformAttribution },
    { id: 'twilio-sms', provider: 'twilio', maxFormFields: 2, attribution: { keyId: { body: 'MessagingServiceSid' } } },
    { id: 'zoom-meetings', provider: 'zoom', attribution: { keyId: { body: 'payload.object.host_id' } } },
    // Written by hand: the slack scheme itself declares Slack's url_verification handshake.
    {
      id: 'slack-events',
      scheme: { type: 'slack' },
      attribution: {
        eventId: { body: 'event_id' },
        eventType: { body: 'event.type' },
        tenantId: { body: 'team_id' },
        keyId: { body: 'api_app_id' },
      },
    },
    { id: 'wa', provider: 'meta', verifyToken: 'vt_9c2f7a1e5b3d4c6e', attribution: { keyId: { body: 'object' } } },
    { id: 'okta', provider: 'okta', attribution: { tenantId: { value: 'tenant_204' }, keyId: { value: 'key_okta' } } },
    { id: 'graph', provider: 'microsoft-graph', attribution: { keyId: { body: 'value.0.subscriptionId' } } },
  ],
  consumers: [
    { id: 'billing-meter', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/billing-meter.ts' },
    { id: 'risk-evaluator', subscribes: ['payment.*'], fields: ['id'], entry: 'lambdas/consumers/risk-evaluator.ts' },
  ],
  retention: { payloadDays: 30 },
});

/** A request as API Gateway hands it over for https://hooks.example.com/hooks/<source>?<query>. */
function event(source: string, body: string, headers: Record<string, string>, options: { query?: string; method?: string } = {}) {
  const base = httpEvent(source, body, { host: 'hooks.example.com', 'x-forwarded-proto': 'https', ...headers });
  const method = options.method ?? 'POST';
  return {
    ...base,
    rawQueryString: options.query ?? '',
    requestContext: { ...base.requestContext, http: { ...base.requestContext.http, method } },
  } as APIGatewayProxyEventV2;
}

const requestOf = (e: APIGatewayProxyEventV2): IngestRequest => route(e, config, NOW);

/** What a step threw, as [code, status, message]. */
function refusal(step: () => unknown): [string, number, string] {
  try {
    step();
  } catch (error) {
    if (error instanceof InputError) return [error.code, error.status, error.message];
    throw error;
  }
  throw new Error('the step accepted the request');
}

async function refusalOf(step: () => Promise<unknown>): Promise<[string, number, string]> {
  try {
    await step();
  } catch (error) {
    if (error instanceof InputError) return [error.code, error.status, error.message];
    throw error;
  }
  throw new Error('the step accepted the request');
}

/** A secrets port that counts its calls. */
function countingSecrets(value: SigningSecrets, refreshed: SigningSecrets = value) {
  const calls = { get: 0, refresh: 0, payloadHashKey: 0 };
  const port: SecretsPort = {
    get: async () => {
      calls.get++;
      return value;
    },
    refresh: async () => {
      calls.refresh++;
      return refreshed;
    },
    payloadHashKey: async () => {
      calls.payloadHashKey++;
      return TEST_HASH_KEY;
    },
  };
  return { port, calls };
}

const platformBody = JSON.stringify(platformEvent());
const zoomValidation = JSON.stringify({
  event: 'endpoint.url_validation',
  event_ts: 1764489600000,
  payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' },
});
const sign = (sourceIndex: number, body: string, secret: string) =>
  signatureHeaders(config.sources[sourceIndex]!.scheme, { body: Buffer.from(body), secret, now: NOW, messageId: 'msg_2Kp7QeWd9' });

describe('route', () => {
  it('answers 404 unknown_source for /hooks/nope, naming the path', () => {
    expect(refusal(() => requestOf(event('nope', '{}', {})))).toEqual([
      'unknown_source',
      404,
      'no webhook source is registered at /hooks/nope',
    ]);
  });

  it('reads a base64 request into lower-cased headers, the bytes, the method and the URL the provider signed', () => {
    const e = event(
      'platform',
      Buffer.from(platformBody) as unknown as string,
      { 'Content-Type': 'application/json' },
      { query: 'bodySHA256=x1' },
    );
    const request = requestOf({ ...e, isBase64Encoded: true, body: Buffer.from(platformBody).toString('base64') });
    expect(request.source.id).toBe('platform');
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.rawBody.toString('utf8')).toBe(platformBody);
    expect(request.url).toBe('https://hooks.example.com/hooks/platform?bodySHA256=x1');
    expect(request.query.get('bodySHA256')).toBe('x1');
    expect(request.receivedAt).toBe(NOW);
  });
});

describe('checkShape', () => {
  it('refuses 101 headers on a source accepting 100 (400 too_many_headers)', () => {
    const headers = Object.fromEntries(Array.from({ length: 99 }, (_, i) => [`x-h${i}`, 'v']));
    expect(refusal(() => checkShape(requestOf(event('platform', platformBody, headers)), ALL_SCHEMES))).toEqual([
      'too_many_headers',
      400,
      'request has 101 headers; source "platform" accepts at most 100 (maxHeaders)',
    ]);
  });

  it('refuses a 1025-byte body on a source accepting 1024 (413 payload_too_large)', () => {
    expect(refusal(() => checkShape(requestOf(event('platform', 'x'.repeat(1025), {})), ALL_SCHEMES))).toEqual([
      'payload_too_large',
      413,
      'body is 1025 bytes; source "platform" accepts at most 1024',
    ]);
  });

  it('refuses a header value carrying a NUL (400 invalid_header), naming the header only', () => {
    expect(refusal(() => checkShape(requestOf(event('platform', platformBody, { 'x-note': 'a\u0000b' })), ALL_SCHEMES))).toEqual([
      'invalid_header',
      400,
      'header x-note contains control characters',
    ]);
  });

  it('answers a GET on a source without a GET handshake 405 with Allow: POST', () => {
    try {
      checkShape(requestOf(event('slack-events', '', {}, { method: 'GET' })), ALL_SCHEMES);
      throw new Error('accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(InputError);
      expect([(error as InputError).code, (error as InputError).status, (error as InputError).headers]).toEqual([
        'method_not_allowed',
        405,
        { allow: 'POST' },
      ]);
    }
  });

  it("refuses a JSON source's body re-sent as application/x-www-form-urlencoded (415)", () => {
    const [code, status] = refusal(() =>
      checkShape(requestOf(event('platform', platformBody, { 'content-type': 'application/x-www-form-urlencoded' })), ALL_SCHEMES),
    );
    expect([code, status]).toEqual(['unsupported_media_type', 415]);
  });

  it('refuses a form of 3 fields on a source accepting 2 (413 too_many_fields)', () => {
    const e = event('twilio-sms', 'a=1&b=2&c=3', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(refusal(() => checkShape(requestOf(e), ALL_SCHEMES))).toEqual([
      'too_many_fields',
      413,
      'body has 3 form fields; source "twilio-sms" accepts at most 2 (maxFormFields)',
    ]);
  });

  it("leaves a GET handshake's media type alone: Meta's GET with a form Content-Type passes", () => {
    expect(
      checkShape(requestOf(event('wa', '', { 'content-type': 'application/x-www-form-urlencoded' }, { method: 'GET' })), ALL_SCHEMES),
    ).toBeUndefined();
  });
});

describe('answerHandshake', () => {
  it("resolves a hand-written slack-scheme source's handshake from the scheme, as data", () => {
    expect(config.sources.find((s) => s.id === 'slack-events')?.handshake).toBe('slack-url-verification');
    expect(config.sources.find((s) => s.id === 'platform')?.handshake).toBeUndefined();
  });

  it("answers Meta's GET hub.challenge before verification and nothing after", () => {
    const query = 'hub.mode=subscribe&hub.verify_token=vt_9c2f7a1e5b3d4c6e&hub.challenge=1158201444';
    const request = requestOf(event('wa', '', {}, { method: 'GET', query }));
    expect(answerHandshake(request, 'before-verification')).toMatchObject({ statusCode: 200, body: '1158201444' });
  });

  it("answers Graph's POST ?validationToken= before verification, and lets its notifications through", () => {
    const validation = requestOf(event('graph', '', {}, { query: 'validationToken=Validation%3A%20Testing%20client' }));
    expect(answerHandshake(validation, 'before-verification')).toMatchObject({ statusCode: 200, body: 'Validation: Testing client' });
    expect(answerHandshake(requestOf(event('graph', '{"value":[]}', {})), 'before-verification')).toBeUndefined();
  });

  it("computes nothing for a signed-POST handshake before verification (Slack, Zoom) nor for Okta's GET", () => {
    const slack = requestOf(
      event('slack-events', '{"type":"url_verification","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}', {}),
    );
    expect(answerHandshake(slack, 'before-verification')).toBeUndefined();
    const okta = requestOf(event('okta', '', { 'x-okta-verification-challenge': 'gKrtJ1lzRk4XL8Hy' }, { method: 'GET' }));
    expect(answerHandshake(okta, 'before-verification')).toBeUndefined();
  });

  it("answers Slack's url_verification after verification with the challenge, and an ordinary event not at all", () => {
    const request = requestOf(event('slack-events', '', {}));
    const challenge = { type: 'url_verification', challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' };
    expect(answerHandshake(request, 'after-verification', { body: challenge, secret: SLACK_SECRET })).toMatchObject({
      statusCode: 200,
      body: JSON.stringify({ challenge: challenge.challenge }),
    });
    const eventBody = { type: 'event_callback', event_id: 'Ev08MFMKH6', team_id: 'T0001', event: { type: 'app_mention' } };
    expect(answerHandshake(request, 'after-verification', { body: eventBody, secret: SLACK_SECRET })).toBeUndefined();
  });

  it("answers Zoom's url_validation with the HMAC under the secret that verified the request", () => {
    const request = requestOf(event('zoom-meetings', zoomValidation, {}));
    const reply = answerHandshake(request, 'after-verification', { body: JSON.parse(zoomValidation), secret: ZOOM_SECRET });
    expect(JSON.parse(reply?.body ?? '')).toEqual({
      plainToken: 'qgg8vlvZRS6UYooatFL8Aw',
      encryptedToken: createHmac('sha256', ZOOM_SECRET).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex'),
    });
  });

  it("answers Okta's verification GET after its Authorization was checked", () => {
    const request = requestOf(event('okta', '', { 'x-okta-verification-challenge': 'gKrtJ1lzRk4XL8Hy' }, { method: 'GET' }));
    expect(answerHandshake(request, 'after-verification', { body: {}, secret: OKTA_SECRET })).toMatchObject({
      statusCode: 200,
      body: JSON.stringify({ verification: 'gKrtJ1lzRk4XL8Hy' }),
    });
  });
});

describe('readSecrets and verify', () => {
  it('reads the secrets once and drops a previous secret whose overlap has ended', async () => {
    const { port, calls } = countingSecrets({ current: TEST_SECRET, previous: OLD_SECRET, previousUntil: NOW });
    expect(await readSecrets(port, requestOf(event('platform', platformBody, {})))).toEqual({ current: TEST_SECRET });
    expect(calls).toEqual({ get: 1, refresh: 0, payloadHashKey: 0 });
  });

  it('accepts the current secret without a refresh and names it', async () => {
    const { port, calls } = countingSecrets({ current: TEST_SECRET });
    const request = requestOf(event('platform', platformBody, signedHeaders(platformBody)));
    expect(await verify(request, { current: TEST_SECRET }, { schemes: ALL_SCHEMES, secrets: port })).toEqual({
      secretVersion: 'current',
      secret: TEST_SECRET,
    });
    expect(calls).toEqual({ get: 0, refresh: 0, payloadHashKey: 0 });
  });

  it('names the previous secret when it verified inside its overlap', async () => {
    const { port } = countingSecrets({ current: TEST_SECRET });
    const request = requestOf(event('platform', platformBody, signedHeaders(platformBody, { secret: OLD_SECRET })));
    const secrets = { current: TEST_SECRET, previous: OLD_SECRET, previousUntil: NOW + 3_600_000 };
    expect(await verify(request, secrets, { schemes: ALL_SCHEMES, secrets: port })).toEqual({
      secretVersion: 'previous',
      secret: OLD_SECRET,
    });
  });

  it('refreshes exactly once on a mismatch and verifies with the just-rotated secret', async () => {
    const { port, calls } = countingSecrets({ current: OLD_SECRET }, { current: TEST_SECRET, previous: OLD_SECRET });
    const request = requestOf(event('platform', platformBody, signedHeaders(platformBody)));
    expect(await verify(request, { current: OLD_SECRET }, { schemes: ALL_SCHEMES, secrets: port })).toEqual({
      secretVersion: 'current',
      secret: TEST_SECRET,
    });
    expect(calls).toEqual({ get: 0, refresh: 1, payloadHashKey: 0 });
  });

  it('refuses a forged signature 401 signature_mismatch after exactly one refresh', async () => {
    const { port, calls } = countingSecrets({ current: TEST_SECRET });
    const request = requestOf(event('platform', platformBody, signedHeaders(platformBody, { secret: OLD_SECRET })));
    const [code, status] = await refusalOf(() => verify(request, { current: TEST_SECRET }, { schemes: ALL_SCHEMES, secrets: port }));
    expect([code, status, calls.refresh]).toEqual(['signature_mismatch', 401, 1]);
  });

  it('refuses an unsigned request 401 missing_signature without a refresh', async () => {
    const { port, calls } = countingSecrets({ current: TEST_SECRET });
    const request = requestOf(event('platform', platformBody, { 'content-type': 'application/json' }));
    const [code, status] = await refusalOf(() => verify(request, { current: TEST_SECRET }, { schemes: ALL_SCHEMES, secrets: port }));
    expect([code, status, calls.refresh]).toEqual(['missing_signature', 401, 0]);
  });
});

describe('readBody and attribute', () => {
  it("reads a JSON source's body as JSON and a Twilio source's as form fields", () => {
    expect(readBody(requestOf(event('platform', platformBody, {})))).toMatchObject({ id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204' });
    expect(readBody(requestOf(event('twilio-sms', 'MessageSid=SM9a2c7e&Body=hi', {})))).toEqual({ MessageSid: 'SM9a2c7e', Body: 'hi' });
  });

  it('refuses a body that is not JSON on a JSON source (400 invalid_json)', () => {
    const [code, status] = refusal(() => readBody(requestOf(event('platform', '{"id":', {}))));
    expect([code, status]).toEqual(['invalid_json', 400]);
  });

  it('reads no body for a GET (a handshake)', () => {
    expect(readBody(requestOf(event('okta', '', {}, { method: 'GET' })))).toEqual({});
  });

  it('reads the four attribution fields from the signed body', () => {
    const request = requestOf(event('platform', platformBody, {}));
    expect(attribute(request, readBody(request), HMAC)).toEqual({
      eventId: 'evt_01J8K7M2Q4',
      eventType: 'payment.succeeded',
      tenantId: 'tenant_204',
      keyId: 'key_42',
    });
  });

  it('refuses an event without tenant_id (400 missing_attribution, naming where it was expected)', () => {
    const body = JSON.stringify({ id: 'evt_01J8K7M2Q4', type: 'payment.succeeded', key_id: 'key_42' });
    const request = requestOf(event('platform', body, {}));
    expect(refusal(() => attribute(request, readBody(request), HMAC))).toEqual([
      'missing_attribution',
      400,
      'tenant_id is missing: expected it at body.tenant_id',
    ]);
  });
});

const requested = { eventId: 'evt_01J8K7M2Q4', eventType: 'payment.succeeded', tenantId: 'tenant_204', keyId: 'key_42' };

function keyRegistry(keys: Record<string, KeyItem>) {
  const asked: string[] = [];
  return {
    asked,
    store: {
      getKey: async (keyId: string) => {
        asked.push(keyId);
        return keys[keyId];
      },
    },
  };
}

const key = (tenantId: string): KeyItem => ({
  pk: 'key#key_42',
  kind: 'key',
  keyId: 'key_42',
  tenantId,
  status: 'active',
  createdAt: NOW - 1000,
});

describe('checkKey', () => {
  it('never reads the registry for a source that does not enforce it', async () => {
    const { store, asked } = keyRegistry({});
    await checkKey(requestOf(event('platform', platformBody, {})), requested, store);
    expect(asked).toEqual([]);
  });

  it('refuses an unregistered key_42 (403 unknown_key)', async () => {
    const { store, asked } = keyRegistry({});
    expect(await refusalOf(() => checkKey(requestOf(event('platform-keyed', platformBody, {})), requested, store))).toEqual([
      'unknown_key',
      403,
      'key_id key_42 is not registered; issue it first',
    ]);
    expect(asked).toEqual(['key_42']);
  });

  it("refuses tenant_204's event under tenant_977's key (403 key_tenant_mismatch)", async () => {
    const { store } = keyRegistry({ key_42: key('tenant_977') });
    expect(await refusalOf(() => checkKey(requestOf(event('platform-keyed', platformBody, {})), requested, store))).toEqual([
      'key_tenant_mismatch',
      403,
      'key_id key_42 does not belong to tenant tenant_204',
    ]);
  });

  it("accepts tenant_204's own key after one registry read", async () => {
    const { store, asked } = keyRegistry({ key_42: key('tenant_204') });
    await checkKey(requestOf(event('platform-keyed', platformBody, {})), requested, store);
    expect(asked).toEqual(['key_42']);
  });
});

describe('claimBody', () => {
  function claims(first?: typeof requested) {
    const made: unknown[] = [];
    return {
      made,
      store: {
        claimBody: async (claim: { source: string; claimedAt: number } & typeof requested, payloadHmac: string) => {
          made.push([claim, payloadHmac]);
          return first ? { source: claim.source, ...first } : claim;
        },
      },
    };
  }

  it('claims nothing on a source protected by event id', async () => {
    const { store, made } = claims();
    expect(await claimBody(requestOf(event('platform', platformBody, {})), requested, HMAC, store)).toEqual(requested);
    expect(made).toEqual([]);
  });

  it('claims the bytes on a source protected by body, and takes the event they first came with', async () => {
    const first = { ...requested, eventId: 'evt_01J8K7M2Q3' };
    const { store, made } = claims(first);
    const claimed = await claimBody(requestOf(event('platform-by-body', platformBody, {})), requested, HMAC, store);
    expect(claimed.eventId).toBe('evt_01J8K7M2Q3');
    expect(made).toEqual([[{ source: 'platform-by-body', ...requested, claimedAt: NOW }, HMAC]]);
  });
});

describe('record', () => {
  it('writes one receipt for payment.succeeded with two deliveries, its expiry 30 days on', async () => {
    const written: [Omit<EventItem, 'pk' | 'kind'>, string][] = [];
    const store = {
      recordEvent: async (item: Omit<EventItem, 'pk' | 'kind'>, rawBody: Buffer) => {
        written.push([item, rawBody.toString('utf8')]);
        return 'recorded' as const;
      },
    };
    const request = requestOf(event('platform', platformBody, {}));
    const result = await record(
      request,
      { attribution: requested, body: readBody(request), payloadHmac: HMAC, secretVersion: 'previous' },
      config,
      store,
    );
    expect(result).toEqual({ outcome: 'recorded', attribution: requested, consumers: ['billing-meter', 'risk-evaluator'] });
    expect(written).toEqual([
      [
        {
          source: 'platform',
          eventId: 'evt_01J8K7M2Q4',
          eventType: 'payment.succeeded',
          tenantId: 'tenant_204',
          keyId: 'key_42',
          receivedAt: NOW,
          consumers: ['billing-meter', 'risk-evaluator'],
          payloadHmac: HMAC,
          payloadBytes: Buffer.byteLength(platformBody),
          secretVersion: 'previous',
          payloadExpiresAt: NOW + 30 * 86_400_000,
        },
        platformBody,
      ],
    ]);
  });
});

describe('respond', () => {
  const consumers = ['billing-meter', 'risk-evaluator'];

  it('answers a recorded event 202 with its id and 2 deliveries', () => {
    const result = respond({ outcome: 'recorded', attribution: requested, consumers }, requested);
    expect(result.outcome).toBe('recorded');
    expect([result.response.statusCode, JSON.parse(result.response.body as string)]).toEqual([
      202,
      { event_id: 'evt_01J8K7M2Q4', deliveries: 2 },
    ]);
  });

  it('answers a retry 200 duplicate, and a retry of the same bytes under another event id duplicate_body', () => {
    expect(respond({ outcome: 'duplicate', attribution: requested, consumers }, requested).outcome).toBe('duplicate');
    const replayed = respond({ outcome: 'duplicate', attribution: requested, consumers }, { ...requested, eventId: 'evt_01J8K7M2Z9' });
    expect(replayed.outcome).toBe('duplicate_body');
    expect([replayed.response.statusCode, JSON.parse(replayed.response.body as string)]).toEqual([
      200,
      { status: 'duplicate', event_id: 'evt_01J8K7M2Q4' },
    ]);
  });

  it('answers other bytes under a recorded event id 200 duplicate_conflict', () => {
    const result = respond({ outcome: 'duplicate_conflict', attribution: requested, consumers }, requested);
    expect([result.outcome, JSON.parse(result.response.body as string)]).toEqual([
      'duplicate_conflict',
      { status: 'duplicate_conflict', event_id: 'evt_01J8K7M2Q4' },
    ]);
  });
});

describe('the handler reads the signing secrets once per request', () => {
  const ddbMock = mockClient(DynamoDBDocumentClient);
  afterEach(() => ddbMock.reset());

  function handlerWith(port: SecretsPort) {
    const { logger } = capturingLogger();
    const store = intakeStore(eventStores({ client: createDocumentClient({ region: 'us-east-1' }), tableName: 'events' }));
    return createIngestHandler({ schemes: ALL_SCHEMES, config, store, secrets: port, logger, clock: () => NOW });
  }

  it('records a platform event with one get, no refresh, one hash key read', async () => {
    ddbMock.on(PutCommand).resolves({});
    const { port, calls } = countingSecrets({ current: TEST_SECRET });
    const res = await handlerWith(port)(event('platform', platformBody, signedHeaders(platformBody)));
    expect(res.statusCode).toBe(202);
    expect(calls).toEqual({ get: 1, refresh: 0, payloadHashKey: 1 });
  });

  it("answers Zoom's url_validation with one get and no refresh", async () => {
    const { port, calls } = countingSecrets({ current: ZOOM_SECRET });
    const res = await handlerWith(port)(
      event('zoom-meetings', zoomValidation, { 'content-type': 'application/json', ...sign(4, zoomValidation, ZOOM_SECRET) }),
    );
    expect(res.statusCode).toBe(200);
    expect(calls).toEqual({ get: 1, refresh: 0, payloadHashKey: 0 });
  });

  it('records a Slack event on a hand-written slack source with one get and no refresh', async () => {
    ddbMock.on(PutCommand).resolves({});
    const { port, calls } = countingSecrets({ current: SLACK_SECRET });
    const body = JSON.stringify({
      type: 'event_callback',
      event_id: 'Ev08MFMKH6',
      team_id: 'T0001',
      api_app_id: 'A0KRD7HC3',
      event: { type: 'app_mention' },
    });
    const res = await handlerWith(port)(
      event('slack-events', body, { 'content-type': 'application/json', ...sign(5, body, SLACK_SECRET) }),
    );
    expect(res.statusCode).toBe(202);
    expect(calls).toEqual({ get: 1, refresh: 0, payloadHashKey: 1 });
  });

  it("answers Zoom's url_validation signed with a just-rotated secret after one refresh, its HMAC under that secret", async () => {
    const { port, calls } = countingSecrets({ current: 'zoom-secret-before-rotation' }, { current: ZOOM_SECRET });
    const res = await handlerWith(port)(
      event('zoom-meetings', zoomValidation, { 'content-type': 'application/json', ...sign(4, zoomValidation, ZOOM_SECRET) }),
    );
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body!).encryptedToken).toBe(createHmac('sha256', ZOOM_SECRET).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex'));
    expect(calls).toEqual({ get: 1, refresh: 1, payloadHashKey: 0 });
  });

  it('refuses a forged platform signature 401 after one get and exactly one refresh, storing nothing', async () => {
    const { port, calls } = countingSecrets({ current: TEST_SECRET });
    const res = await handlerWith(port)(event('platform', platformBody, signedHeaders(platformBody, { secret: OLD_SECRET })));
    expect(res.statusCode).toBe(401);
    expect(calls).toEqual({ get: 1, refresh: 1, payloadHashKey: 0 });
    expect(ddbMock.calls()).toHaveLength(0);
  });
});
