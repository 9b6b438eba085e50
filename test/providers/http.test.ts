/**
 * Every scheme family end to end through HTTP: the local gateway (local/http-gateway.ts) in front of
 * the real intake handler and the EventStore table's adapters on DynamoDB Local, sources written as `provider: '<name>'`,
 * requests signed by the provider's own npm code where it can sign (Svix, Stripe, Sanity, HubSpot,
 * Twilio, Octokit) and by our signer where the provider's code only verifies (its acceptance of
 * that signer is proved in test/providers/sdk.test.ts). Handshakes are answered and leave no item.
 */
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { Signature as HubSpotSignature } from '@hubspot/api-client';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { encodeSignatureHeader } from '@sanity/webhook';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import type { SecretsPort } from '../../adapters/secrets';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import { ALL_SCHEMES, signatureHeaders } from '../../core/schemes';
import { createIngestHandler } from '../../lambdas/ingest/app';
import { type HttpGateway, startHttpGateway } from '../../local/http-gateway';
import { createTable, startTestDynamo } from '../support/dynamo';
import { TEST_HASH_KEY } from '../support/factories';
import { capturingLogger } from '../support/logs';
import { ed25519Pair } from './support';

const TABLE = 'providers-http';
const discord = ed25519Pair();
const sendgrid = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const SECRETS = {
  clerk: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  stripe: 'whsec_4eC39HqLyjWDarjtT1zdp7dc9Kq2',
  sanity: 'sanity-webhook-secret-8f2c',
  hubspot: 'hubspot-client-secret-8f2c1a7e',
  github: 'gh_webhook_secret_7Hq2xV9pLm4',
  twilio: '9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a',
  discord: discord.raw.toString('hex'),
  sendgrid: sendgrid.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
  vonage: 'vonage-signature-secret-8f2c1a7e5b3d9c4e',
  zoom: 'zoom-secret-token-Q7x2Lm',
  slack: '8f742231b10e8888abcd99yyyzzz85a5',
} as const;
type Name = keyof typeof SECRETS;

/** Tenant and key from where the preset reads its event id when it names neither. */
const SOURCES: HookledgerConfigInput['sources'] = [
  { id: 'clerk', provider: 'clerk', attribution: { tenantId: { body: 'data.organization_id' }, keyId: { body: 'data.id' } } },
  { id: 'stripe', provider: 'stripe', attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } } },
  { id: 'sanity', provider: 'sanity', attribution: { tenantId: { body: '_type' }, keyId: { body: '_id' } } },
  { id: 'hubspot', provider: 'hubspot', attribution: { keyId: { body: '0.objectId' } } },
  { id: 'github', provider: 'github', attribution: { tenantId: { body: 'installation.id' }, keyId: { body: 'repository.id' } } },
  { id: 'twilio', provider: 'twilio', attribution: { keyId: { body: 'MessagingServiceSid' } } },
  { id: 'discord', provider: 'discord', attribution: { keyId: { body: 'application_id' } } },
  { id: 'sendgrid', provider: 'sendgrid', attribution: { tenantId: { body: '0.tenant' }, keyId: { body: '0.sg_message_id' } } },
  { id: 'vonage', provider: 'vonage', attribution: { keyId: { body: 'to' } } },
  { id: 'zoom', provider: 'zoom', attribution: { keyId: { body: 'payload.object.host_id' } } },
  { id: 'slack', provider: 'slack', attribution: { keyId: { body: 'api_app_id' } } },
];

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let gateway: HttpGateway;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  await createTable(dynamo.client, TABLE, true);
  const config = defineConfig({
    sources: SOURCES,
    consumers: [{ id: 'billing', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/billing.ts' }],
  });
  const secrets: SecretsPort = {
    get: async (source) => ({ current: SECRETS[source as Name] }),
    refresh: async (source) => ({ current: SECRETS[source as Name] }),
    payloadHashKey: async () => TEST_HASH_KEY,
  };
  const handler = createIngestHandler({
    schemes: ALL_SCHEMES,
    config,
    store: intakeStore(eventStores({ client: dynamo.doc, tableName: TABLE })),
    secrets,
    logger: capturingLogger().logger,
  });
  gateway = await startHttpGateway({ port: 0, handler });
}, 120_000);

afterAll(async () => {
  await gateway?.close();
  await dynamo?.stop();
});

const urlOf = (source: Name, query = '') => `${gateway.url}/hooks/${source}${query}`;

async function post(source: Name, body: string, headers: Record<string, string>, query = '') {
  const res = await fetch(urlOf(source, query), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function stored(source: Name, eventId: string) {
  const item = await dynamo.doc.send(new GetCommand({ TableName: TABLE, Key: { pk: `evt#${source}#${eventId}` }, ConsistentRead: true }));
  return item.Item;
}

const ours = (source: Name, body: string, secret: string, url?: string) => {
  const scheme = SOURCES.find((s) => s.id === source)!;
  const config = defineConfig({
    sources: [scheme],
    consumers: [{ id: 'billing', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/billing.ts' }],
  });
  return signatureHeaders(config.sources[0]!.scheme, {
    body: Buffer.from(body),
    secret,
    now: Date.now(),
    messageId: 'msg_2Kp7QeWd9Lm',
    url,
  });
};

describe('scheme families through HTTP, each recorded once on DynamoDB Local', () => {
  it('standard-webhooks (svix headers): Clerk, signed by the svix library', async () => {
    const body = '{"type":"user.created","data":{"id":"user_2NNEqL2nrIRdJ194ndJqAHwEfxC","organization_id":"org_204"}}';
    const now = new Date();
    const headers = {
      'svix-id': 'msg_2Kp7QeWd9Lm',
      'svix-timestamp': String(Math.floor(now.getTime() / 1000)),
      'svix-signature': new SvixWebhook(SECRETS.clerk).sign('msg_2Kp7QeWd9Lm', now, body),
    };
    expect(await post('clerk', body, headers)).toEqual({ status: 202, body: { event_id: 'msg_2Kp7QeWd9Lm', deliveries: 1 } });
    expect(await stored('clerk', 'msg_2Kp7QeWd9Lm')).toMatchObject({ eventType: 'user.created', tenantId: 'org_204' });
  });

  it('stripe: signed by the stripe library', async () => {
    const body = '{"id":"evt_1Qb7XcLkdIwHu7ix","type":"invoice.paid","account":"acct_204","data":{"object":{"id":"in_8Rt2Lm"}}}';
    const header = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRETS.stripe });
    expect(await post('stripe', body, { 'stripe-signature': header })).toEqual({
      status: 202,
      body: { event_id: 'evt_1Qb7XcLkdIwHu7ix', deliveries: 1 },
    });
    expect(await stored('stripe', 'evt_1Qb7XcLkdIwHu7ix')).toMatchObject({ tenantId: 'acct_204', keyId: 'in_8Rt2Lm' });
  });

  it('timestamped-hmac: Sanity, signed by @sanity/webhook', async () => {
    const body = '{"_id":"movie_204","_type":"movie","title":"Alien"}';
    const headers = {
      'sanity-webhook-signature': await encodeSignatureHeader(body, Date.now(), SECRETS.sanity),
      'idempotency-key': 'c2f9a1d7-3b8e-4f6a-9d0c-5e7b1a2f3c4d',
      'sanity-operation': 'update',
    };
    expect((await post('sanity', body, headers)).status).toBe(202);
    expect(await stored('sanity', 'c2f9a1d7-3b8e-4f6a-9d0c-5e7b1a2f3c4d')).toMatchObject({ eventType: 'update', keyId: 'movie_204' });
  });

  it('hmac-template over the URL: HubSpot v3, signed by @hubspot/api-client for the gateway URL', async () => {
    const body = '[{"eventId":1964547513,"portalId":62515,"subscriptionType":"contact.creation","objectId":123}]';
    const timestamp = Date.now();
    const signature = HubSpotSignature.getSignature('POST', 'v3', {
      signature: '',
      clientSecret: SECRETS.hubspot,
      requestBody: body,
      url: urlOf('hubspot'),
      timestamp,
    });
    const headers = { 'x-hubspot-signature-v3': signature, 'x-hubspot-request-timestamp': String(timestamp) };
    expect(await post('hubspot', body, headers)).toEqual({ status: 202, body: { event_id: '1964547513', deliveries: 1 } });
    expect(await stored('hubspot', '1964547513')).toMatchObject({ eventType: 'contact.creation', tenantId: '62515', keyId: '123' });
  });

  it('hmac over the body: GitHub, signed by @octokit/webhooks-methods', async () => {
    const body = '{"action":"opened","installation":{"id":4210},"repository":{"id":77}}';
    const headers = {
      'x-hub-signature-256': await octokitSign(SECRETS.github, body),
      'x-github-delivery': 'd3b07384-d9a0-4c9f-8d6e-2f1b7c0e5a11',
      'x-github-event': 'pull_request',
    };
    expect((await post('github', body, headers)).status).toBe(202);
    expect(await stored('github', 'd3b07384-d9a0-4c9f-8d6e-2f1b7c0e5a11')).toMatchObject({ eventType: 'pull_request', tenantId: '4210' });
  });

  it('twilio: a form body signed by the twilio library for the gateway URL, query string included', async () => {
    const form = {
      AccountSid: 'AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c',
      MessageSid: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
      MessageStatus: 'delivered',
      MessagingServiceSid: 'MG9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d',
    };
    const signature = twilio.getExpectedTwilioSignature(SECRETS.twilio, urlOf('twilio', '?region=eu'), form);
    const res = await post(
      'twilio',
      new URLSearchParams(form).toString(),
      { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
      '?region=eu',
    );
    expect(res).toEqual({ status: 202, body: { event_id: 'SM1f0e8ae6ade43cb3c0ce4525424e404f', deliveries: 1 } });
    expect(await stored('twilio', 'SM1f0e8ae6ade43cb3c0ce4525424e404f')).toMatchObject({
      eventType: 'delivered',
      tenantId: 'AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c',
    });
  });

  it('ed25519: a Discord interaction', async () => {
    const body = '{"id":"1114196498442174495","application_id":"1114196498442174000","type":2,"guild_id":"613425648685547541"}';
    expect((await post('discord', body, ours('discord', body, discord.seed.toString('hex')))).status).toBe(202);
    expect(await stored('discord', '1114196498442174495')).toMatchObject({ eventType: '2', tenantId: '613425648685547541' });
  });

  it('ECDSA: a SendGrid batch (a JSON array)', async () => {
    const body =
      '[{"email":"ada@example.com","event":"delivered","sg_event_id":"sg_evt_8f2c1a7e5b3d","sg_message_id":"14c5d75ce93","tenant":"tenant_204"}]';
    const key = sendgrid.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
    expect((await post('sendgrid', body, ours('sendgrid', body, key))).status).toBe(202);
    expect(await stored('sendgrid', 'sg_evt_8f2c1a7e5b3d')).toMatchObject({ eventType: 'delivered', tenantId: 'tenant_204' });
  });

  it('jwt: a Vonage status webhook', async () => {
    const body = '{"message_uuid":"aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab","to":"447700900000","status":"delivered","api_key":"abcd1234"}';
    expect((await post('vonage', body, ours('vonage', body, SECRETS.vonage))).status).toBe(202);
    expect(await stored('vonage', 'aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab')).toMatchObject({ tenantId: 'abcd1234' });
  });
});

describe('handshakes through HTTP: answered, nothing stored', () => {
  const itemCount = async () => (await dynamo.doc.send(new ScanCommand({ TableName: TABLE, ConsistentRead: true }))).Items?.length ?? 0;

  it('zoom endpoint.url_validation', async () => {
    const before = await itemCount();
    const body = '{"event":"endpoint.url_validation","payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"}}';
    expect(await post('zoom', body, ours('zoom', body, SECRETS.zoom))).toEqual({
      status: 200,
      body: {
        plainToken: 'qgg8vlvZRS6UYooatFL8Aw',
        encryptedToken: createHmac('sha256', SECRETS.zoom).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex'),
      },
    });
    expect(await itemCount()).toBe(before);
  });

  it('discord PING', async () => {
    const before = await itemCount();
    const body = '{"id":"1114196498442174000","application_id":"1114196498442174000","type":1}';
    expect(await post('discord', body, ours('discord', body, discord.seed.toString('hex')))).toEqual({ status: 200, body: { type: 1 } });
    expect(await itemCount()).toBe(before);
  });

  it('slack url_verification through the preset', async () => {
    const before = await itemCount();
    const body =
      '{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}';
    expect(await post('slack', body, ours('slack', body, SECRETS.slack))).toEqual({
      status: 200,
      body: { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' },
    });
    expect(await itemCount()).toBe(before);
  });
});
