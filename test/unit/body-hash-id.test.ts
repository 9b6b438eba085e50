/**
 * An event id derived from the signed body (`{ derived: 'body-hash' }`, the meta and dropbox presets):
 * `bh_` + the deployment's keyed hash of the raw bytes, the same HMAC the receipt keeps as payloadHmac.
 * The same bytes always give the same id (a retry is a duplicate); one changed byte gives another.
 */

import { createHmac } from 'node:crypto';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../adapters/clients';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import { payloadHmac } from '../../adapters/payload-hash';
import type { SecretsPort } from '../../adapters/secrets';
import { defineConfig } from '../../core/config/schema';
import { ALL_SCHEMES } from '../../core/schemes';
import { createIngestHandler } from '../../lambdas/ingest/app';
import { extractAttribution, parseBody } from '../../lambdas/recording/parse';
import { httpEvent, NOW, TEST_HASH_KEY } from '../support/factories';
import { capturingLogger } from '../support/logs';

const META_SECRET = 'meta-app-secret-5c1f9e2a';
const DROPBOX_SECRET = 'dropbox-app-secret-2b7e';

const config = defineConfig({
  sources: [
    { id: 'wa', provider: 'meta', verifyToken: 'vt_9c2f7a1e5b3d4c6e', attribution: { keyId: { body: 'object' } } },
    { id: 'dbx', provider: 'dropbox', attribution: { tenantId: { value: 'tenant_204' }, keyId: { value: 'key_dropbox' } } },
  ],
  consumers: [{ id: 'billing', subscribes: ['*'], fields: ['object'], entry: 'lambdas/consumers/billing.ts' }],
});
const source = (id: string) => config.sources.find((s) => s.id === id)!;

// A WhatsApp Cloud API message notification, as Meta posts it (no event id anywhere).
const META_BODY =
  '{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"field":"messages","value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},"messages":[{"from":"16505551234","id":"wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUFERjg0NDEzNDdFODU3MUMxMAA=","timestamp":"1764489600","text":{"body":"hello"},"type":"text"}]}}]}]}';
const META_ID = 'bh_8a5df5591a03074941580499427c335c5fed070ccb9c56f8872f263c013509f4';
// The same notification with one byte changed ("hello" -> "hellp").
const META_BODY_CHANGED = META_BODY.replace('"hello"', '"hellp"');
const META_CHANGED_ID = 'bh_83043060f0f397d7f26148aee39cb592ce91de766a58481ebef1ecd9f1eafd5d';
const DROPBOX_BODY = '{"list_folder":{"accounts":["dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc"]},"delta":{"users":[12345]}}';
const DROPBOX_ID = 'bh_c5a53347af8610fed1187379d304600d18eb70ce08e93ad04366f4cdd15c2cdf';

function attributionOf(sourceId: string, text: string) {
  const raw = Buffer.from(text, 'utf8');
  return extractAttribution(source(sourceId), parseBody(raw, 'json'), {}, payloadHmac(TEST_HASH_KEY, raw));
}

describe('extractAttribution with an event id derived from the body', () => {
  it('gives the same bytes the same id, every time', () => {
    expect(attributionOf('wa', META_BODY)).toEqual({
      eventId: META_ID,
      eventType: 'whatsapp_business_account',
      tenantId: '102290129340398',
      keyId: 'whatsapp_business_account',
    });
    expect(attributionOf('wa', Buffer.from(META_BODY, 'utf8').toString('utf8')).eventId).toBe(META_ID);
  });

  it('gives a body with one changed byte another id', () => {
    expect(META_BODY_CHANGED).toHaveLength(META_BODY.length);
    expect(attributionOf('wa', META_BODY_CHANGED).eventId).toBe(META_CHANGED_ID);
    // Re-serialised JSON is other bytes too: the id is of the bytes received, not of the parsed value.
    expect(attributionOf('wa', JSON.stringify(JSON.parse(META_BODY), null, 1)).eventId).not.toBe(META_ID);
  });

  it("reads Dropbox's notification: the derived id and the fixed type", () => {
    expect(attributionOf('dbx', DROPBOX_BODY)).toEqual({
      eventId: DROPBOX_ID,
      eventType: 'dropbox.list_folder',
      tenantId: 'tenant_204',
      keyId: 'key_dropbox',
    });
  });

  it('is keyed: another deployment key gives the same body another id', () => {
    const raw = Buffer.from(DROPBOX_BODY, 'utf8');
    const other = extractAttribution(source('dbx'), parseBody(raw, 'json'), {}, payloadHmac(Buffer.from('another-key'), raw));
    expect(other.eventId).toMatch(/^bh_[0-9a-f]{64}$/);
    expect(other.eventId).not.toBe(DROPBOX_ID);
  });
});

const ddbMock = mockClient(DynamoDBDocumentClient);
afterEach(() => ddbMock.reset());

describe('intake with an event id derived from the body', () => {
  function setup() {
    const { logger } = capturingLogger();
    const secrets: SecretsPort = {
      payloadHashKey: async () => TEST_HASH_KEY,
      get: async (id) => ({ current: id === 'wa' ? META_SECRET : DROPBOX_SECRET }),
      refresh: async (id) => ({ current: id === 'wa' ? META_SECRET : DROPBOX_SECRET }),
    };
    const store = intakeStore(eventStores({ client: createDocumentClient({ region: 'us-east-1' }), tableName: 'events' }));
    return createIngestHandler({ schemes: ALL_SCHEMES, config, store, secrets, logger, clock: () => NOW });
  }

  it("records Meta's notification under bh_ + the receipt's own payload HMAC", async () => {
    ddbMock.on(PutCommand).resolves({});
    const signature = `sha256=${createHmac('sha256', META_SECRET).update(META_BODY).digest('hex')}`;
    const res = await setup()(httpEvent('wa', META_BODY, { 'content-type': 'application/json', 'x-hub-signature-256': signature }));
    expect(res.statusCode).toBe(202);
    expect(JSON.parse(res.body!)).toEqual({ event_id: META_ID, deliveries: 1 });
    const items = ddbMock.commandCalls(PutCommand).map((c) => c.args[0].input.Item as Record<string, unknown>);
    const receipt = items.find((i) => i.pk === `evt#wa#${META_ID}`);
    expect(receipt).toMatchObject({ eventType: 'whatsapp_business_account', tenantId: '102290129340398', payloadHmac: META_ID.slice(3) });
  });

  it('refuses a Dropbox body changed after signing: 401, nothing stored', async () => {
    const signature = createHmac('sha256', DROPBOX_SECRET).update(DROPBOX_BODY).digest('hex');
    const tampered = DROPBOX_BODY.replace('12345', '12346');
    const res = await setup()(httpEvent('dbx', tampered, { 'content-type': 'application/json', 'x-dropbox-signature': signature }));
    expect(res.statusCode).toBe(401);
    expect(ddbMock.commandCalls(PutCommand)).toHaveLength(0);
  });
});
