/**
 * Intake with provider presets: form bodies (Twilio), schemes that sign the request URL, and the
 * handshakes answered without storing anything (Zoom, Discord, Slack through the preset).
 */
import { createHmac } from 'node:crypto';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { signatureHeaders } from '../../core/schemes';
import { ed25519Pair } from '../providers/support';
import { NOW } from '../support/factories';
import { hooksRequest, mockedIntake, TWILIO_STATUS_FORM } from '../support/ingest';
import { twilioSignature } from '../support/twilio';

const ddbMock = mockClient(DynamoDBDocumentClient);
afterEach(() => ddbMock.reset());

const TWILIO_TOKEN = '9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a';
const ZOOM_SECRET = 'zoom-secret-token-Q7x2Lm';
const discord = ed25519Pair();
const SECRETS: Record<string, string> = {
  'twilio-sms': TWILIO_TOKEN,
  'zoom-meetings': ZOOM_SECRET,
  'discord-bot': discord.raw.toString('hex'),
};

const config = defineConfig({
  sources: [
    { id: 'twilio-sms', provider: 'twilio', attribution: { keyId: { body: 'MessagingServiceSid' } } },
    { id: 'zoom-meetings', provider: 'zoom', attribution: { keyId: { body: 'payload.object.host_id' } } },
    { id: 'discord-bot', provider: 'discord', attribution: { keyId: { body: 'application_id' } } },
  ],
  consumers: [{ id: 'billing', subscribes: ['*'], fields: ['MessageSid'], entry: 'lambdas/consumers/billing.ts' }],
});

const setup = () => mockedIntake({ config, secretOf: (source) => SECRETS[source]! });
const request = hooksRequest;

const putItems = () => ddbMock.commandCalls(PutCommand).map((c) => c.args[0].input.Item as Record<string, unknown>);

describe('twilio: a form body signed with the URL', () => {
  const form = TWILIO_STATUS_FORM;
  const body = new URLSearchParams(form).toString();
  const url = 'https://hooks.example.com/hooks/twilio-sms?region=eu';

  it("records the event signed as Twilio signs (HMAC-SHA1 over the URL and the sorted form fields), attributed from the form's fields", async () => {
    ddbMock.on(PutCommand).resolves({});
    const { handler, outcomes } = setup();
    const signature = twilioSignature(TWILIO_TOKEN, url, form);
    const res = await handler(
      request('twilio-sms', body, { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature }, 'region=eu'),
    );
    expect(res.statusCode).toBe(202);
    expect(JSON.parse(res.body!)).toEqual({ event_id: 'SM1f0e8ae6ade43cb3c0ce4525424e404f', deliveries: 1 });
    expect(outcomes).toEqual(['recorded']);
    expect(putItems()[1]).toMatchObject({
      pk: 'evt#twilio-sms#SM1f0e8ae6ade43cb3c0ce4525424e404f',
      eventType: 'delivered',
      tenantId: 'AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c',
      keyId: 'MG9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d',
    });
  });

  it('refuses the same signature on another URL (the query string is signed): 401 signature_mismatch, nothing stored', async () => {
    const { handler } = setup();
    const signature = twilioSignature(TWILIO_TOKEN, url, form);
    const res = await handler(
      request('twilio-sms', body, { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature }, 'region=us'),
    );
    expect(res.statusCode).toBe(401);
    expect(JSON.parse(res.body!)).toMatchObject({ error: 'signature_mismatch' });
    expect(putItems()).toEqual([]);
  });
});

describe('zoom: endpoint.url_validation', () => {
  const body = JSON.stringify({
    event: 'endpoint.url_validation',
    event_ts: 1764489600000,
    payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' },
  });
  const signed = () =>
    signatureHeaders(config.sources[1]!.scheme, { body: Buffer.from(body), secret: ZOOM_SECRET, now: NOW, messageId: 'unused' });

  it('answers the plain token and its HMAC under the secret token, and stores nothing', async () => {
    const { handler, outcomes } = setup();
    const res = await handler(request('zoom-meetings', body, { 'content-type': 'application/json', ...signed() }));
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body!)).toEqual({
      plainToken: 'qgg8vlvZRS6UYooatFL8Aw',
      encryptedToken: createHmac('sha256', ZOOM_SECRET).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex'),
    });
    expect(outcomes).toEqual(['challenge']);
    expect(putItems()).toEqual([]);
  });

  it('refuses an unsigned validation request: 401 missing_signature, no token computed', async () => {
    const { handler } = setup();
    const res = await handler(request('zoom-meetings', body, { 'content-type': 'application/json' }));
    expect(res.statusCode).toBe(401);
    expect(JSON.parse(res.body!)).toMatchObject({ error: 'missing_signature' });
    expect(res.body).not.toContain('encryptedToken');
  });
});

describe('discord: PING', () => {
  const sign = (body: string) =>
    signatureHeaders(config.sources[2]!.scheme, {
      body: Buffer.from(body),
      secret: discord.seed.toString('hex'),
      now: NOW,
      messageId: 'unused',
    });

  it('answers a signed PING with PONG and stores nothing', async () => {
    const body = '{"id":"1114196498442174495","application_id":"1114196498442174000","type":1}';
    const { handler, outcomes } = setup();
    const res = await handler(request('discord-bot', body, { 'content-type': 'application/json', ...sign(body) }));
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body!)).toEqual({ type: 1 });
    expect(outcomes).toEqual(['challenge']);
    expect(putItems()).toEqual([]);
  });

  it('records a signed interaction (type 2) as an event', async () => {
    ddbMock.on(PutCommand).resolves({});
    const body = '{"id":"1114196498442174496","application_id":"1114196498442174000","type":2,"guild_id":"613425648685547541"}';
    const { handler } = setup();
    const res = await handler(request('discord-bot', body, { 'content-type': 'application/json', ...sign(body) }));
    expect(res.statusCode).toBe(202);
    expect(JSON.parse(res.body!)).toEqual({ event_id: '1114196498442174496', deliveries: 1 });
    expect(putItems()[1]).toMatchObject({ eventType: '2', tenantId: '613425648685547541', keyId: '1114196498442174000' });
  });

  it('refuses a PING signed with another key: 401 signature_mismatch', async () => {
    const other = ed25519Pair();
    const body = '{"id":"1114196498442174495","application_id":"1114196498442174000","type":1}';
    const headers = signatureHeaders(config.sources[2]!.scheme, {
      body: Buffer.from(body),
      secret: other.seed.toString('hex'),
      now: NOW,
      messageId: 'x',
    });
    const { handler } = setup();
    const res = await handler(request('discord-bot', body, { 'content-type': 'application/json', ...headers }));
    expect(res.statusCode).toBe(401);
    expect(JSON.parse(res.body!)).toMatchObject({ error: 'signature_mismatch' });
  });
});
