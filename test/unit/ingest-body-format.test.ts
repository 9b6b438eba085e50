/**
 * A source's body format is fixed by its scheme or its config, never by the request's Content-Type:
 * a JSON source reads JSON (with its depth and prototype-key checks) whatever the header says, and a
 * media type that contradicts the source's format is refused with 415 before anything is verified or
 * stored. The form fields and headers a source accepts are bounded (maxFormFields, maxHeaders) and
 * counted before verification, so no verifier sees an oversized form.
 */

import { createHmac } from 'node:crypto';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { NOW, platformEvent, signedHeaders, TEST_SECRET } from '../support/factories';
import { hooksRequest, mockedIntake, TWILIO_STATUS_FORM } from '../support/ingest';
import { twilioSignature } from '../support/twilio';

const ddbMock = mockClient(DynamoDBDocumentClient);
afterEach(() => ddbMock.reset());

const TWILIO_TOKEN = '9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a';
const SLACK_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const SECRETS: Record<string, string> = {
  platform: TEST_SECRET,
  'twilio-sms': TWILIO_TOKEN,
  'twilio-small': TWILIO_TOKEN,
  'slack-commands': SLACK_SECRET,
};

const config = defineConfig({
  sources: [
    {
      id: 'platform',
      scheme: { type: 'standard-webhooks' },
      attribution: { eventId: { body: 'id' }, eventType: { body: 'type' }, tenantId: { body: 'tenant_id' }, keyId: { body: 'key_id' } },
    },
    { id: 'twilio-sms', provider: 'twilio', attribution: { keyId: { body: 'MessagingServiceSid' } } },
    { id: 'twilio-small', provider: 'twilio', attribution: { keyId: { body: 'MessagingServiceSid' } }, maxFormFields: 50, maxHeaders: 20 },
    {
      // Slack slash commands: Slack's signature over a form body; the source says so.
      id: 'slack-commands',
      scheme: { type: 'slack' },
      bodyFormat: 'form',
      attribution: {
        eventId: { body: 'trigger_id' },
        eventType: { body: 'command' },
        tenantId: { body: 'team_id' },
        keyId: { body: 'user_id' },
      },
    },
  ],
  consumers: [{ id: 'billing', subscribes: ['*'], fields: ['id', 'MessageSid'], entry: 'lambdas/consumers/billing.ts' }],
});

const setup = () => mockedIntake({ config, secretOf: (source) => SECRETS[source]! });
const request = (source: string, body: string, headers: Record<string, string>) => hooksRequest(source, body, headers);

const answer = (res: { statusCode?: number; body?: string }) => [res.statusCode, JSON.parse(res.body ?? '{}')];
const putItems = () => ddbMock.commandCalls(PutCommand).map((c) => c.args[0].input.Item as Record<string, unknown>);
const receipts = () => putItems().filter((i) => i.kind === 'event');

const without = (headers: Record<string, string>, name: string) => Object.fromEntries(Object.entries(headers).filter(([k]) => k !== name));

describe('a JSON source: the body is read as JSON whatever the Content-Type says', () => {
  const injected = platformEvent({
    id: 'evt_01J8K7CT02',
    data: { amount: 4200, currency: 'eur', note: 'thanks&id=evt_X&tenant_id=tenant_VICTIM&type=payment.succeeded&key_id=key_42&z=' },
  });
  const body = JSON.stringify(injected);

  it.each([
    'application/x-www-form-urlencoded',
    'application/x-www-form-urlencoded; charset=utf-8',
    'Application/X-WWW-Form-URLEncoded',
    'multipart/form-data; boundary=----hookledger',
  ])('refuses a signed JSON body sent as %s: 415 unsupported_media_type, before verifying, nothing stored', async (contentType) => {
    const { handler, outcomes, reads } = setup();
    const res = await handler(request('platform', body, { ...signedHeaders(body), 'content-type': contentType }));
    expect(answer(res)).toEqual([
      415,
      {
        error: 'unsupported_media_type',
        message: `Content-Type ${contentType.split(';')[0]!.trim().toLowerCase()} contradicts the body format of source "platform": source "platform" reads its body as JSON (bodyFormat 'json'); send application/json, or fix the source's bodyFormat`,
      },
    ]);
    expect(outcomes).toEqual(['unsupported_media_type']);
    expect(reads).toEqual([]);
    expect(ddbMock.calls()).toHaveLength(0);
  });

  it.each([
    ['application/json', 'application/json'],
    ['application/json; charset=utf-8', 'application/json; charset=utf-8'],
    ['application/webhook+json (LiveKit)', 'application/webhook+json'],
    ['text/plain', 'text/plain'],
    ['application/octet-stream', 'application/octet-stream'],
  ])('records the signed body sent as %s under its JSON id and tenant', async (_label, contentType) => {
    ddbMock.on(PutCommand).resolves({});
    const { handler } = setup();
    const res = await handler(request('platform', body, { ...signedHeaders(body), 'content-type': contentType }));
    expect(answer(res)).toEqual([202, { event_id: 'evt_01J8K7CT02', deliveries: 1 }]);
    expect(receipts()).toEqual([expect.objectContaining({ pk: 'evt#platform#evt_01J8K7CT02', tenantId: 'tenant_204' })]);
  });

  it('records a signed JSON body sent without any Content-Type as JSON', async () => {
    ddbMock.on(PutCommand).resolves({});
    const { handler } = setup();
    const res = await handler(request('platform', body, without(signedHeaders(body), 'content-type')));
    expect(answer(res)).toEqual([202, { event_id: 'evt_01J8K7CT02', deliveries: 1 }]);
    expect(receipts()).toEqual([expect.objectContaining({ tenantId: 'tenant_204' })]);
  });

  it('keeps the too_deep and forbidden_key checks on a signed JSON body: 415 as a form, 400 as text/plain, nothing stored', async () => {
    const { handler } = setup();
    const proto = '{"id":"evt_1","type":"a","tenant_id":"t","key_id":"k","__proto__":{"admin":true}}';
    const deep = `{"id":"evt_2","type":"a","tenant_id":"t","key_id":"k","x":${'['.repeat(40)}${']'.repeat(40)}}`;
    const as = (text: string, contentType: string) => request('platform', text, { ...signedHeaders(text), 'content-type': contentType });
    expect((await handler(as(proto, 'application/x-www-form-urlencoded'))).statusCode).toBe(415);
    expect((await handler(as(deep, 'application/x-www-form-urlencoded'))).statusCode).toBe(415);
    expect(answer(await handler(as(proto, 'text/plain')))).toEqual([
      400,
      { error: 'forbidden_key', message: 'body contains the key "__proto__", which is not accepted' },
    ]);
    expect(answer(await handler(as(deep, 'text/plain')))).toEqual([
      400,
      { error: 'too_deep', message: 'body nests 41 levels deep; at most 32 are accepted' },
    ]);
    expect(ddbMock.calls()).toHaveLength(0);
  });
});

describe('a form source (twilio): the body is read as form fields', () => {
  const form = TWILIO_STATUS_FORM;
  const body = new URLSearchParams(form).toString();
  const url = 'https://hooks.example.com/hooks/twilio-sms';
  const signature = twilioSignature(TWILIO_TOKEN, url, form);

  it('refuses its signed form body sent as application/json: 415 naming the form format, nothing stored', async () => {
    const { handler, reads } = setup();
    const res = await handler(request('twilio-sms', body, { 'content-type': 'application/json', 'x-twilio-signature': signature }));
    expect(answer(res)).toEqual([
      415,
      {
        error: 'unsupported_media_type',
        message: `Content-Type application/json contradicts the body format of source "twilio-sms": source "twilio-sms" reads its body as form fields (bodyFormat 'form'); send application/x-www-form-urlencoded, or fix the source's bodyFormat`,
      },
    ]);
    expect(reads).toEqual([]);
    expect(ddbMock.calls()).toHaveLength(0);
  });

  it('records its signed form body sent without a Content-Type as form fields (the verifier does not read the header either)', async () => {
    ddbMock.on(PutCommand).resolves({});
    const { handler } = setup();
    const res = await handler(request('twilio-sms', body, { 'x-twilio-signature': signature }));
    expect(answer(res)).toEqual([202, { event_id: 'SM1f0e8ae6ade43cb3c0ce4525424e404f', deliveries: 1 }]);
    expect(receipts()).toEqual([expect.objectContaining({ tenantId: 'AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c', eventType: 'delivered' })]);
  });

  it('reads a signed form re-sent with its fields reordered (Twilio signs them sorted) under the same signed event id', async () => {
    ddbMock.on(PutCommand).resolves({});
    const { handler } = setup();
    const reordered = body.split('&').reverse().join('&');
    expect(reordered).not.toBe(body);
    const res = await handler(
      request('twilio-sms', reordered, { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature }),
    );
    expect(answer(res)).toEqual([202, { event_id: 'SM1f0e8ae6ade43cb3c0ce4525424e404f', deliveries: 1 }]);
    expect(receipts()).toEqual([expect.objectContaining({ pk: 'evt#twilio-sms#SM1f0e8ae6ade43cb3c0ce4525424e404f' })]);
  });

  it('refuses a repeated attribution field (its order is not signed): 400 invalid_attribution naming it, nothing stored', async () => {
    const { handler } = setup();
    const twice = `${body}&MessageSid=SM00000000000000000000000000000002`;
    const signed = twilioSignature(TWILIO_TOKEN, url, {
      ...form,
      MessageSid: [form.MessageSid, 'SM00000000000000000000000000000002'],
    });
    const res = await handler(
      request('twilio-sms', twice, { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signed }),
    );
    expect(answer(res)).toEqual([
      400,
      { error: 'invalid_attribution', message: 'event id at body.MessageSid must be a string or a whole number, got an array' },
    ]);
    expect(ddbMock.calls()).toHaveLength(0);
  });
});

describe('a source declared bodyFormat: form (Slack slash commands)', () => {
  const body =
    'token=gIkuvaNzQIHg97ATvDxqgjtO&team_id=T0001&team_domain=example&channel_id=C2147483705&user_id=U2147483697&command=%2Fweather&text=94070&trigger_id=13345224609.738474920.8088930838d88f008e0';
  const ts = String(Math.floor(NOW / 1000));
  const headers = {
    'x-slack-request-timestamp': ts,
    'x-slack-signature': `v0=${createHmac('sha256', SLACK_SECRET).update(`v0:${ts}:${body}`).digest('hex')}`,
  };

  it('records the signed command attributed from its form fields', async () => {
    ddbMock.on(PutCommand).resolves({});
    const { handler } = setup();
    const res = await handler(request('slack-commands', body, { ...headers, 'content-type': 'application/x-www-form-urlencoded' }));
    expect(answer(res)).toEqual([202, { event_id: '13345224609.738474920.8088930838d88f008e0', deliveries: 1 }]);
    expect(receipts()).toEqual([expect.objectContaining({ eventType: '/weather', tenantId: 'T0001', keyId: 'U2147483697' })]);
  });

  it('refuses the same signed bytes sent as application/json: 415, nothing stored', async () => {
    const { handler } = setup();
    const res = await handler(request('slack-commands', body, { ...headers, 'content-type': 'application/json' }));
    expect(res.statusCode).toBe(415);
    expect(ddbMock.calls()).toHaveLength(0);
  });
});

describe('bounds on form fields and headers, checked before verification', () => {
  /** `count` distinct fields `F00000=v0&...`. */
  const fields = (count: number): Record<string, string> => {
    const out: Record<string, string> = {};
    for (let i = 0; i < count; i++) out[`F${String(i).padStart(5, '0')}`] = `v${i}`;
    return out;
  };

  it('refuses 20,000 form fields (150 KB) to a Twilio source with 413 too_many_fields naming maxFormFields, at once, without reading a secret', async () => {
    const { handler, outcomes, reads } = setup();
    const body = new URLSearchParams(fields(20_000)).toString();
    expect(body.length).toBeGreaterThan(150_000);
    const started = performance.now();
    const res = await handler(
      request('twilio-sms', body, {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=',
      }),
    );
    expect(performance.now() - started).toBeLessThan(500);
    expect(answer(res)).toEqual([
      413,
      {
        error: 'too_many_fields',
        message: 'body has 20000 form fields; source "twilio-sms" accepts at most 1000 (maxFormFields)',
      },
    ]);
    expect(outcomes).toEqual(['too_many_fields']);
    expect(reads).toEqual([]);
    expect(ddbMock.calls()).toHaveLength(0);
  });

  it('accepts exactly maxFormFields signed fields (50) and refuses 51 with 413', async () => {
    ddbMock.on(PutCommand).resolves({});
    const { handler } = setup();
    const url = 'https://hooks.example.com/hooks/twilio-small';
    const base = {
      AccountSid: 'AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c',
      MessageSid: 'SM5a0e8ae6ade43cb3c0ce4525424e4050',
      MessageStatus: 'delivered',
      MessagingServiceSid: 'MG9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d',
    };
    const post = (form: Record<string, string>) =>
      handler(
        request('twilio-small', new URLSearchParams(form).toString(), {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': twilioSignature(TWILIO_TOKEN, url, form),
        }),
      );
    expect(answer(await post({ ...base, ...fields(46) }))).toEqual([202, { event_id: base.MessageSid, deliveries: 1 }]);
    expect(answer(await post({ ...base, ...fields(47) }))).toEqual([
      413,
      { error: 'too_many_fields', message: 'body has 51 form fields; source "twilio-small" accepts at most 50 (maxFormFields)' },
    ]);
    expect(receipts()).toHaveLength(1);
  });

  it('counts form fields as they are read: empty pairs (&&) are not fields, a bare name is', async () => {
    const { handler } = setup();
    const body = `${'&'.repeat(5000)}${Object.keys(fields(51)).join('&')}`;
    const res = await handler(
      request('twilio-small', body, { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'AAAA' }),
    );
    expect(answer(res)).toEqual([
      413,
      { error: 'too_many_fields', message: 'body has 51 form fields; source "twilio-small" accepts at most 50 (maxFormFields)' },
    ]);
  });

  it('refuses more headers than maxHeaders with 400 too_many_headers naming the limit, without reading a secret', async () => {
    const { handler, outcomes, reads } = setup();
    const body = JSON.stringify(platformEvent());
    const extra = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`x-padding-${i}`, 'x']));
    const headers = { ...signedHeaders(body), ...extra };
    const count = Object.keys(request('platform', body, headers).headers).length;
    expect(count).toBe(106);
    const res = await handler(request('platform', body, headers));
    expect(answer(res)).toEqual([
      400,
      { error: 'too_many_headers', message: 'request has 106 headers; source "platform" accepts at most 100 (maxHeaders)' },
    ]);
    expect(outcomes).toEqual(['too_many_headers']);
    expect(reads).toEqual([]);
    expect(ddbMock.calls()).toHaveLength(0);
  });

  it("applies a source's own maxHeaders (20): 21 headers refused, 20 accepted", async () => {
    ddbMock.on(PutCommand).resolves({});
    const { handler } = setup();
    const form = {
      AccountSid: 'AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c',
      MessageSid: 'SM5a0e8ae6ade43cb3c0ce4525424e4051',
      MessageStatus: 'sent',
      MessagingServiceSid: 'MG9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d',
    };
    const signature = twilioSignature(TWILIO_TOKEN, 'https://hooks.example.com/hooks/twilio-small', form);
    const padded = (n: number) => ({
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': signature,
      ...Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-padding-${i}`, 'x'])),
    });
    const body = new URLSearchParams(form).toString();
    expect(answer(await handler(request('twilio-small', body, padded(17))))[0]).toBe(400);
    expect(answer(await handler(request('twilio-small', body, padded(16))))).toEqual([202, { event_id: form.MessageSid, deliveries: 1 }]);
  });
});
