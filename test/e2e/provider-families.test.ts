/**
 * Every scheme family end to end through HTTP on the local stack (core/schemes/index.ts): the local gateway,
 * the real intake handler, DynamoDB Local and fauxqs, sources written as `provider: '<name>'`.
 * Each accepted request answers 202 and leaves exactly one receipt with its event id and tenant;
 * each handshake gets its provider's exact answer and leaves nothing; one tampered request per
 * family is refused and leaves nothing. Twilio's form body is also delivered to a consumer,
 * narrowed to its fields. Plaid's keys come from a local key server through the real key adapter.
 */
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanAll } from '../../adapters/table-scan';
import { defineConfig } from '../../core/config/schema';
import { KEY_PREFIX, tenantDayKey } from '../../core/model';
import { findProvider } from '../../core/providers/catalog';
import { type SchemeConfigInput, signatureHeaders, signedBody } from '../../core/schemes';
import { publicJwkOf } from '../../core/schemes/jwks';
import type { DeliveryContext } from '../../lambdas/runtime/runtime';
import type { LocalStack } from '../../local/stack';
import { startTestStack } from '../support/stack';
import { twilioSignature } from '../support/twilio';

const ed = generateKeyPairSync('ed25519');
const edRaw = (der: Buffer) => der.subarray(-32).toString('base64');
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const plaidKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
const plaidJwk = publicJwkOf(plaidKey);

/** What each source verifies with (the secrets file), and what the provider signs with. */
const VERIFY = {
  twilio: '9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a',
  mailgun: 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0',
  square: 'sq0wss-Qh2mV9xK4pL7nR3tB8cF1d',
  sendgrid: ec.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
  plaid: 'client_5f2a7c1e:secret_9c1d3b8a',
  v1a: `whpk_${edRaw(ed.publicKey.export({ format: 'der', type: 'spki' }))}`,
  slack: '8f742231b10e8888abcd99yyyzzz85a5',
  zoom: 'zoom-secret-token-Q7x2Lm',
  meta: 'meta-app-secret-5c1f9e2a',
  dropbox: 'dropbox-app-secret-2b7e',
  okta: 'okta-hook-secret-7Qm2xV',
  graph: 'graph-client-state-4Lx9pQ',
} as const;
type Source = keyof typeof VERIFY;
const SIGN: Record<Source, string> = {
  ...VERIFY,
  sendgrid: ec.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
  plaid: plaidKey,
  v1a: `whsk_${edRaw(ed.privateKey.export({ format: 'der', type: 'pkcs8' }))}`,
};
const META_VERIFY_TOKEN = 'vt_9c2f7a1e5b3d4c6e';
const PAYLOAD_HASH_KEY = 'e2e-payload-hash-key-7Qm2xV9Lr4Tb8Nc1';

// Plaid's /webhook_verification_key/get, locally: the key for its kid, to the right credentials only.
const keyRequests: Array<Record<string, unknown>> = [];
let keyServer: Server;
let keysUrl: string;

let stack: LocalStack;
const delivered: DeliveryContext[] = [];

beforeAll(async () => {
  keyServer = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const asked = JSON.parse(text) as Record<string, unknown>;
      keyRequests.push(asked);
      const known = asked.client_id === 'client_5f2a7c1e' && asked.secret === 'secret_9c1d3b8a' && asked.key_id === plaidJwk.kid;
      res.writeHead(known ? 200 : 400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(known ? { key: plaidJwk, request_id: 'Ega4Ad0dWqB7mQx' } : { error_code: 'INVALID_WEBHOOK_VERIFICATION_KEY_ID' }),
      );
    });
  });
  await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
  keysUrl = `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}/webhook_verification_key/get`;

  const config = defineConfig({
    sources: [
      { id: 'twilio', provider: 'twilio', attribution: { keyId: { body: 'MessagingServiceSid' } } },
      { id: 'mailgun', provider: 'mailgun', attribution: { tenantId: { value: 'tenant_204' }, keyId: { value: 'key_mailgun' } } },
      { id: 'square', provider: 'square', attribution: { keyId: { body: 'data.id' } } },
      { id: 'sendgrid', provider: 'sendgrid', attribution: { tenantId: { body: '0.tenant' }, keyId: { body: '0.sg_message_id' } } },
      {
        // Plaid's preset with the key endpoint moved to the local key server.
        id: 'plaid',
        provider: 'plaid',
        scheme: { type: 'jwks', header: 'plaid-verification', keysUrl },
        attribution: {
          eventId: { body: 'item_id' },
          eventType: { body: 'webhook_code' },
          tenantId: { body: 'item_id' },
          keyId: { body: 'environment' },
        },
      },
      { id: 'v1a', provider: 'standard-webhooks-v1a', attribution: { tenantId: { body: 'tenant_id' }, keyId: { body: 'key_id' } } },
      { id: 'slack', provider: 'slack', attribution: { keyId: { body: 'api_app_id' } } },
      { id: 'zoom', provider: 'zoom', attribution: { keyId: { body: 'payload.object.host_id' } } },
      // Meta's tenant is the preset's (entry.0.id); Dropbox names no tenant or key: fixed per source.
      { id: 'meta', provider: 'meta', verifyToken: META_VERIFY_TOKEN, attribution: { keyId: { body: 'entry.0.changes.0.field' } } },
      { id: 'dropbox', provider: 'dropbox', attribution: { tenantId: { value: 'tenant_204' }, keyId: { value: 'key_dropbox' } } },
      { id: 'okta', provider: 'okta', attribution: { tenantId: { value: 'tenant_311' }, keyId: { body: 'data.events.0.uuid' } } },
      { id: 'graph', provider: 'microsoft-graph', attribution: { keyId: { body: 'value.0.subscriptionId' } } },
    ],
    consumers: [
      {
        id: 'sms-log',
        subscribes: ['delivered'],
        fields: ['MessageSid', 'MessageStatus', 'To'],
        entry: 'lambdas/consumers/audit-writer.ts',
      },
    ],
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'hookledger-families-'));
  const secretsFile = path.join(dir, 'secrets.json');
  const sources = Object.fromEntries(Object.entries(VERIFY).map(([id, current]) => [id, { current }]));
  // A fixed payload-hash key, so the event ids derived from Meta's and Dropbox's bodies are known here.
  writeFileSync(secretsFile, JSON.stringify({ sources, payloadHashKey: PAYLOAD_HASH_KEY }), { mode: 0o600 });
  stack = await startTestStack({
    config,
    secretsFile,
    handles: {
      'sms-log': async (delivery) => {
        delivered.push(delivery);
        return { units: 1 };
      },
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await new Promise<void>((resolve) => keyServer?.close(() => resolve()));
});

const schemeOf = (source: Source): SchemeConfigInput => stack.config.sources.find((s) => s.id === source)!.scheme;

/**
 * Items of the EventStore, but the tenant-day registry (written once per tenant and UTC day, checked
 * apart) and the duplicate counts (one per source and hour, what Activity reads).
 */
async function itemCount(): Promise<number> {
  const items = await scanAll<{ pk: string }>(stack.handlers.ddb, { TableName: stack.resources.tables.events, ConsistentRead: true });
  return items.filter((item) => !item.pk.startsWith(KEY_PREFIX.tenantDay) && !item.pk.startsWith(KEY_PREFIX.duplicates)).length;
}

async function receipt(source: Source, eventId: string) {
  const key = { pk: `evt#${source}#${eventId}` };
  return (await stack.handlers.ddb.send(new GetCommand({ TableName: stack.resources.tables.events, Key: key, ConsistentRead: true }))).Item;
}

interface Sent {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

async function post(source: Source, body: string | Buffer, headers: Record<string, string>, query = ''): Promise<Sent> {
  const res = await fetch(`${stack.webhookUrl(source)}${query}`, { method: 'POST', headers, body });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function get(source: Source, query: string, headers: Record<string, string> = {}): Promise<Sent> {
  const res = await fetch(`${stack.webhookUrl(source)}${query}`, { headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Signs `body` as the source's provider does (headers, and the body itself for Mailgun and Graph). */
function signed(source: Source, body: string, options: { messageId?: string; url?: string; secret?: string } = {}) {
  const input = {
    body: Buffer.from(body, 'utf8'),
    secret: options.secret ?? SIGN[source],
    now: Date.now(),
    messageId: options.messageId ?? 'msg_2Kp7QeWd9Lm',
    url: options.url ?? stack.webhookUrl(source),
  };
  const scheme = schemeOf(source);
  return { body: signedBody(scheme, input), headers: { 'content-type': 'application/json', ...signatureHeaders(scheme, input) } };
}

/** Sends, expects 202 with one receipt more (and nothing else), returns the receipt. */
async function accepted(source: Source, send: () => Promise<Sent>, eventId: string, tenantId: string) {
  const before = await itemCount();
  const res = await send();
  expect(res.status, res.text).toBe(202);
  expect(JSON.parse(res.text)).toMatchObject({ event_id: eventId });
  const item = await receipt(source, eventId);
  expect(item).toMatchObject({ source, eventId, tenantId });
  // The receipt and its payload: two items, nothing for anyone else; the tenant's day is registered.
  expect(await itemCount()).toBe(before + 2);
  const day = new Date(item!.receivedAt as number).toISOString().slice(0, 10);
  const registry = await stack.handlers.ddb.send(
    new GetCommand({ TableName: stack.resources.tables.events, Key: { pk: tenantDayKey(day, tenantId) }, ConsistentRead: true }),
  );
  expect(registry.Item).toMatchObject({ kind: 'tenantDay', tenantId });
  return item;
}

/** Sends, expects `status` and `error`, and no item written. */
async function refused(send: () => Promise<Sent>, status: number, error: string) {
  const before = await itemCount();
  const res = await send();
  expect(res.status, res.text).toBe(status);
  expect(JSON.parse(res.text)).toMatchObject({ error });
  expect(await itemCount()).toBe(before);
}

/** Sends, expects the exact answer, and no item written. */
async function handshake(send: () => Promise<Sent>, expected: { body: string; contentType: string; nosniff?: boolean }) {
  const before = await itemCount();
  const res = await send();
  expect(res.status, res.text).toBe(200);
  expect(res.text).toBe(expected.body);
  expect(res.headers.get('content-type')).toBe(expected.contentType);
  if (expected.nosniff) expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(await itemCount()).toBe(before);
}

describe('twilio: a form body, stored as received, attributed from form fields, delivered narrowed', () => {
  const form = {
    AccountSid: 'AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c',
    ApiVersion: '2010-04-01',
    Body: 'Your code is 482913',
    From: '+14155550123',
    MessageSid: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
    MessageStatus: 'delivered',
    MessagingServiceSid: 'MG9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d',
    To: '+14155550199',
  };
  const body = new URLSearchParams(form).toString();
  const formHeaders = (signature: string) => ({ 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature });

  it('records the request signed as Twilio signs it for the gateway URL, under AccountSid, and delivers only the listed fields', async () => {
    const signature = twilioSignature(VERIFY.twilio, stack.webhookUrl('twilio'), form);
    const item = await accepted('twilio', () => post('twilio', body, formHeaders(signature)), form.MessageSid, form.AccountSid);
    expect(item).toMatchObject({ eventType: 'delivered', keyId: form.MessagingServiceSid, consumers: ['sms-log'] });
    const payload = await stack.handlers.stores.payloads.getPayload('twilio', form.MessageSid, item?.payloadHmac as string);
    expect(payload?.toString('utf8')).toBe(body);
    await stack.drain();
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.payload).toEqual({ MessageSid: form.MessageSid, MessageStatus: 'delivered', To: '+14155550199' });
    expect(delivered[0]?.attribution).toMatchObject({ source: 'twilio', eventId: form.MessageSid, tenantId: form.AccountSid });
  });

  it('refuses the same signature over a changed form field: 401, nothing stored', async () => {
    const signature = twilioSignature(VERIFY.twilio, stack.webhookUrl('twilio'), form);
    const forged = new URLSearchParams({ ...form, MessageSid: 'SM00000000000000000000000000000001' }).toString();
    await refused(() => post('twilio', forged, formHeaders(signature)), 401, 'signature_mismatch');
  });

  it('re-sent with its parameters reordered and re-encoded, it still verifies (Twilio signs the sorted parameters) and makes no second event: 200 duplicate_conflict under the signed MessageSid', async () => {
    const signature = twilioSignature(VERIFY.twilio, stack.webhookUrl('twilio'), form);
    const reordered = Object.entries(form)
      .reverse()
      .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
      .join('&');
    expect(reordered).not.toBe(body);
    const receiptsBefore = (
      await scanAll<{ pk: string }>(stack.handlers.ddb, { TableName: stack.resources.tables.events, ConsistentRead: true })
    )
      .filter((item) => item.pk.startsWith('evt#twilio#'))
      .map((item) => item.pk);
    expect(receiptsBefore).toEqual([`evt#twilio#${form.MessageSid}`]);
    const res = await post('twilio', reordered, formHeaders(signature));
    expect(res.status, res.text).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ status: 'duplicate_conflict', event_id: form.MessageSid });
    const receiptsAfter = (
      await scanAll<{ pk: string }>(stack.handlers.ddb, { TableName: stack.resources.tables.events, ConsistentRead: true })
    )
      .filter((item) => item.pk.startsWith('evt#twilio#'))
      .map((item) => item.pk);
    expect(receiptsAfter).toEqual([`evt#twilio#${form.MessageSid}`]);
    await stack.drain();
    expect(delivered).toHaveLength(1);
  });

  it('answers a GET 405 with Allow: POST (twilio has no GET handshake), nothing stored', async () => {
    const before = await itemCount();
    const res = await get('twilio', '?challenge=abc');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(JSON.parse(res.text)).toMatchObject({ error: 'method_not_allowed' });
    expect(await itemCount()).toBe(before);
  });
});

describe('mailgun: timestamp + token signed in the body', () => {
  const event = JSON.stringify({
    'event-data': { id: 'CPgfbmQMTCKtHW6uIWtuVe', event: 'delivered', recipient: 'alice@example.com', timestamp: 1764489600.12 },
  });
  const TOKEN = 'e0b5477167110d68991efc6b9f89f0a11066af27834600e1a7';

  it('records the delivery under its signed token, with the fixed type and tenant of the source', async () => {
    const request = signed('mailgun', event, { messageId: TOKEN });
    const item = await accepted('mailgun', () => post('mailgun', request.body, request.headers), TOKEN, 'tenant_204');
    expect(item).toMatchObject({ eventType: 'mailgun.event', keyId: 'key_mailgun' });

    // The same request again: a duplicate. Its unsigned event-data rewritten under the same signed
    // token still verifies (Mailgun does not sign it), but cannot become a second event: the token is
    // the event id, so it is a duplicate_conflict, audited, nothing else stored.
    const before = await itemCount();
    const again = await post('mailgun', request.body, request.headers);
    expect([again.status, JSON.parse(again.text)]).toEqual([200, { status: 'duplicate', event_id: TOKEN }]);
    expect(await itemCount()).toBe(before);
    const rewritten = request.body.toString('utf8').replace('"event":"delivered"', '"event":"complained"');
    const conflict = await post('mailgun', rewritten, request.headers);
    expect([conflict.status, JSON.parse(conflict.text)]).toEqual([200, { status: 'duplicate_conflict', event_id: TOKEN }]);
    expect(await itemCount()).toBe(before + 1);
    expect(await receipt('mailgun', TOKEN)).toEqual(item);
  });

  it('refuses a request whose signed token was changed: 401, nothing stored', async () => {
    const request = signed('mailgun', event, { messageId: 'f1c6a2e9b3d74c5e8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e' });
    const forged = request.body.toString('utf8').replace('"token":"f1c6', '"token":"f1c7');
    await refused(() => post('mailgun', forged, request.headers), 401, 'signature_mismatch');
  });
});

describe('square: HMAC over the notification URL and the body', () => {
  const event = JSON.stringify({
    merchant_id: '6SSW7HV8K2ST5',
    type: 'payment.updated',
    event_id: '13b867cf-db3d-4b1c-90b6-2f32a9d78124',
    created_at: '2026-11-30T08:00:00.000Z',
    data: { type: 'payment', id: 'hYy9pRFVxpDsO1FB05SunFWUe9JZY', object: { payment: { status: 'COMPLETED' } } },
  });

  it('records the event signed for the gateway URL under merchant_id', async () => {
    const request = signed('square', event);
    await accepted('square', () => post('square', request.body, request.headers), '13b867cf-db3d-4b1c-90b6-2f32a9d78124', '6SSW7HV8K2ST5');
  });

  it('refuses the same signature sent to another URL (a query string added): 401, nothing stored', async () => {
    const request = signed('square', event.replace('13b867cf', '23b867cf'));
    await refused(() => post('square', request.body, request.headers, '?replayed=1'), 401, 'signature_mismatch');
  });
});

describe('sendgrid: ECDSA over timestamp + body, a JSON array', () => {
  const batch = JSON.stringify([
    {
      email: 'alice@example.com',
      event: 'delivered',
      sg_event_id: 'ZGVsaXZlcmVkLTAtMjQ1MjQ4MTItZXhhbXBsZQ',
      sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
      tenant: 'tenant_204',
      timestamp: 1764489600,
    },
  ]);

  it('records the batch under its first sg_event_id', async () => {
    const request = signed('sendgrid', batch);
    await accepted(
      'sendgrid',
      () => post('sendgrid', request.body, request.headers),
      'ZGVsaXZlcmVkLTAtMjQ1MjQ4MTItZXhhbXBsZQ',
      'tenant_204',
    );
  });

  it('refuses a signature by another key: 401, nothing stored', async () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
    const request = signed('sendgrid', batch.replace('ZGVsaXZlcmVk', 'b3BlbmVk'), { secret: other });
    await refused(() => post('sendgrid', request.body, request.headers), 401, 'signature_mismatch');
  });
});

describe('plaid: an ES256 token whose key is fetched by kid from the (local) key endpoint', () => {
  const event =
    '{\n  "environment": "sandbox",\n  "item_id": "wz666MBjYWTp2PDzzggYhM6oWWmBb",\n  "webhook_code": "SYNC_UPDATES_AVAILABLE",\n  "webhook_type": "TRANSACTIONS"\n}';

  it('records the webhook, having fetched the key once with the source credentials', async () => {
    const request = signed('plaid', event);
    await accepted(
      'plaid',
      () => post('plaid', request.body, request.headers),
      'wz666MBjYWTp2PDzzggYhM6oWWmBb',
      'wz666MBjYWTp2PDzzggYhM6oWWmBb',
    );
    expect(keyRequests).toEqual([{ client_id: 'client_5f2a7c1e', secret: 'secret_9c1d3b8a', key_id: plaidJwk.kid }]);
  });

  it('refuses a token over another body (request_body_sha256 differs), from the cached key: 401, nothing stored', async () => {
    const request = signed('plaid', event);
    const tampered = event.replace('wz666MBjYWTp2PDzzggYhM6oWWmBb', 'Ab666MBjYWTp2PDzzggYhM6oWWmBb');
    await refused(() => post('plaid', tampered, request.headers), 401, 'signature_mismatch');
    expect(keyRequests).toHaveLength(1);
  });
});

describe('standard-webhooks v1a: ed25519', () => {
  const event = JSON.stringify({ id: 'evt_01J8K7V1A1', type: 'payment.succeeded', tenant_id: 'tenant_311', key_id: 'key_77' });

  it('records the event under webhook-id', async () => {
    const request = signed('v1a', event, { messageId: 'msg_01J8K7V1A1' });
    await accepted('v1a', () => post('v1a', request.body, request.headers), 'msg_01J8K7V1A1', 'tenant_311');
  });

  it('refuses the signature over a changed body: 401, nothing stored', async () => {
    const request = signed('v1a', event, { messageId: 'msg_01J8K7V1A2' });
    await refused(() => post('v1a', event.replace('tenant_311', 'tenant_204'), request.headers), 401, 'signature_mismatch');
  });
});

describe('shared secrets: Okta (Authorization header) and Microsoft Graph (clientState)', () => {
  const okta = JSON.stringify({
    eventType: 'com.okta.event_hook',
    eventTypeVersion: '1.0',
    eventId: 'b5a188b9-5ece-4636-b041-482ffda96311',
    data: { events: [{ uuid: '4a1b2c3d-0000-4000-8000-00000000a001', eventType: 'user.session.start' }] },
  });
  const graph = (id: string, clientState: string) =>
    JSON.stringify({
      value: [
        {
          id,
          subscriptionId: '7f105c7d-2dc5-4530-97cd-4e7ae6534c07',
          changeType: 'created',
          clientState,
          resource: 'Users/622eaaff-0683-4862-9de4-f2ec83c2bd98/Messages/AAMkADMxZmEzMDM1',
          tenantId: 'bb8775a4-4d8c-42cf-a1d4-4d58c2bb668f',
        },
      ],
    });

  it('records an Okta event hook carrying the configured Authorization value', async () => {
    await accepted(
      'okta',
      () => post('okta', okta, { 'content-type': 'application/json', authorization: VERIFY.okta }),
      'b5a188b9-5ece-4636-b041-482ffda96311',
      'tenant_311',
    );
  });

  it('refuses an Okta event hook with another Authorization value: 401, nothing stored', async () => {
    await refused(
      () => post('okta', okta.replace('b5a188b9', 'c5a188b9'), { authorization: 'okta-hook-secret-guess' }),
      401,
      'signature_mismatch',
    );
  });

  it('records a Graph notification whose clientState is the secret, and refuses one with another: 401, nothing stored', async () => {
    await accepted(
      'graph',
      () => post('graph', graph('lsgTZMr9KwAAA', VERIFY.graph), { 'content-type': 'application/json' }),
      'lsgTZMr9KwAAA',
      'bb8775a4-4d8c-42cf-a1d4-4d58c2bb668f',
    );
    await refused(
      () => post('graph', graph('lsgTZMr9KwAAB', 'graph-client-state-guess'), { 'content-type': 'application/json' }),
      401,
      'signature_mismatch',
    );
  });
});

describe('handshakes through HTTP: the exact answer, nothing stored', () => {
  it('slack url_verification (signed POST): the challenge as JSON', async () => {
    const request = signed(
      'slack',
      JSON.stringify({
        token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
        challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
        type: 'url_verification',
      }),
    );
    await handshake(() => post('slack', request.body, request.headers), {
      body: '{"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}',
      contentType: 'application/json',
    });
  });

  it('zoom endpoint.url_validation (signed POST): the plain token and its HMAC under the secret', async () => {
    const request = signed(
      'zoom',
      JSON.stringify({ event: 'endpoint.url_validation', payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' }, event_ts: 1764489600000 }),
    );
    const encryptedToken = createHmac('sha256', VERIFY.zoom).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex');
    await handshake(() => post('zoom', request.body, request.headers), {
      body: JSON.stringify({ plainToken: 'qgg8vlvZRS6UYooatFL8Aw', encryptedToken }),
      contentType: 'application/json',
    });
  });

  it('meta GET hub.challenge: echoed for the configured verify token, 403 for another', async () => {
    await handshake(() => get('meta', `?hub.mode=subscribe&hub.verify_token=${META_VERIFY_TOKEN}&hub.challenge=1158201444`), {
      body: '1158201444',
      contentType: 'text/plain',
      nosniff: true,
    });
    await refused(
      () => get('meta', '?hub.mode=subscribe&hub.verify_token=vt_guess_0000000000&hub.challenge=1158201444'),
      403,
      'verify_token_mismatch',
    );
  });

  it('dropbox GET challenge: echoed as text/plain with nosniff', async () => {
    await handshake(() => get('dropbox', '?challenge=dbx_7f3a9c1e5b2d'), {
      body: 'dbx_7f3a9c1e5b2d',
      contentType: 'text/plain',
      nosniff: true,
    });
  });

  it('okta GET one-time verification: {"verification"} with the Authorization value, 401 without', async () => {
    const challenge = 'Me_rShK8JHsTnbyYrWXCEoMGbM_zsZ6k0hLPZ_Pg';
    await handshake(() => get('okta', '', { authorization: VERIFY.okta, 'x-okta-verification-challenge': challenge }), {
      body: `{"verification":"${challenge}"}`,
      contentType: 'application/json',
    });
    await refused(() => get('okta', '', { 'x-okta-verification-challenge': challenge }), 401, 'missing_signature');
  });

  it('microsoft graph POST ?validationToken=: the token URL-decoded, as text/plain', async () => {
    const token = 'Validation: Testing client application reachability for subscription Request-Id: 9a4b2c1d-7e3f';
    await handshake(
      () => post('graph', '', { 'content-type': 'text/plain; charset=utf-8' }, `?validationToken=${encodeURIComponent(token)}`),
      {
        body: token,
        contentType: 'text/plain',
        nosniff: true,
      },
    );
  });

  it('a GET to a source whose handshake is a signed POST (slack) is 405, nothing stored', async () => {
    await refused(() => get('slack', '?challenge=x'), 405, 'method_not_allowed');
  });

  it('recorded exactly the eight accepted events of this file, one receipt each', async () => {
    const receipts = (await scanAll<{ pk: string }>(stack.handlers.ddb, { TableName: stack.resources.tables.events, ConsistentRead: true }))
      .map((item) => item.pk)
      .filter((pk) => pk.startsWith('evt#'))
      .sort();
    expect(receipts).toEqual(
      [
        'evt#graph#lsgTZMr9KwAAA',
        'evt#mailgun#e0b5477167110d68991efc6b9f89f0a11066af27834600e1a7',
        'evt#okta#b5a188b9-5ece-4636-b041-482ffda96311',
        'evt#plaid#wz666MBjYWTp2PDzzggYhM6oWWmBb',
        'evt#sendgrid#ZGVsaXZlcmVkLTAtMjQ1MjQ4MTItZXhhbXBsZQ',
        'evt#square#13b867cf-db3d-4b1c-90b6-2f32a9d78124',
        'evt#twilio#SM1f0e8ae6ade43cb3c0ce4525424e404f',
        'evt#v1a#msg_01J8K7V1A1',
      ].sort(),
    );
    expect(findProvider('microsoft-graph')?.handshake).toBe('graph-validation-token');
  });
});

describe('meta and dropbox: no event id in the payload, one derived from the signed body', () => {
  // A WhatsApp Cloud API message notification as Meta posts it, signed with the app secret (X-Hub-Signature-256).
  const META_NOTIFICATION =
    '{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"field":"messages","value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},"contacts":[{"profile":{"name":"Ada"},"wa_id":"16505551234"}],"messages":[{"from":"16505551234","id":"wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQTk3RjU2QjA4RTY4RjgyQjlGNwA=","timestamp":"1764489600","text":{"body":"Is my order shipped?"},"type":"text"}]}}]}]}';
  // bh_ + HMAC-SHA256 of those bytes under PAYLOAD_HASH_KEY.
  const META_EVENT_ID = 'bh_fa7302a7af983cf6a246d047245178779c81d4c4ee23027e79e7cfb80444e5b9';
  // A Dropbox notification: the accounts whose files changed, nothing else (X-Dropbox-Signature, hex HMAC of the body).
  const DROPBOX_NOTIFICATION =
    '{"list_folder":{"accounts":["dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc","dbid:AAC7qZ3mXb1Ls9Hj2Kd8Pw5Tr0Vn4Yf6Ue"]},"delta":{"users":[12345,67890]}}';
  const DROPBOX_EVENT_ID = 'bh_f1c0e23ecd838d9023c6b424cd794e350d0b6b335a790462df359c464877c6ed';

  /** Sent again byte for byte: 200 duplicate with the same event id, nothing written. */
  async function duplicate(send: () => Promise<Sent>, eventId: string) {
    const before = await itemCount();
    const res = await send();
    expect(res.status, res.text).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ status: 'duplicate', event_id: eventId });
    expect(await itemCount()).toBe(before);
  }

  it('meta: a WhatsApp notification is accepted once (202, one receipt); the same request again is a duplicate', async () => {
    const headers = {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', SIGN.meta).update(META_NOTIFICATION).digest('hex')}`,
    };
    const item = await accepted('meta', () => post('meta', META_NOTIFICATION, headers), META_EVENT_ID, '102290129340398');
    expect(item).toMatchObject({ eventType: 'whatsapp_business_account', keyId: 'messages', payloadHmac: META_EVENT_ID.slice(3) });
    await duplicate(() => post('meta', META_NOTIFICATION, headers), META_EVENT_ID);
    // The same notification with its text changed after signing is refused, not a new event.
    await refused(() => post('meta', META_NOTIFICATION.replace('shipped?', 'shipped!'), headers), 401, 'signature_mismatch');
  });

  it('dropbox: a notification is accepted once (202, one receipt); the same request again is a duplicate', async () => {
    const headers = {
      'content-type': 'application/json',
      'x-dropbox-signature': createHmac('sha256', SIGN.dropbox).update(DROPBOX_NOTIFICATION).digest('hex'),
    };
    const item = await accepted('dropbox', () => post('dropbox', DROPBOX_NOTIFICATION, headers), DROPBOX_EVENT_ID, 'tenant_204');
    expect(item).toMatchObject({ eventType: 'dropbox.list_folder', keyId: 'key_dropbox' });
    await duplicate(() => post('dropbox', DROPBOX_NOTIFICATION, headers), DROPBOX_EVENT_ID);
  });
});
