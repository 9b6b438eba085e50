/**
 * `hookledger send --provider <name>`: what it refuses before reaching any stack (unknown,
 * unconfigured, ambiguous and public-key providers), what it refuses once it has the source's
 * secret (one the provider's scheme cannot use), and what it posts (the sample, signed over the URL
 * it posts to, with the source's own attribution added). The HTTP round trip to a running stack is
 * test/e2e/send-provider.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { payloadHmac } from '../../../adapters/payload-hash';
import { formatSend } from '../../../cli/commands/send';
import { defineConfig } from '../../../core/config/schema';
import { verifierFor } from '../../../core/schemes';
import { send } from '../../../ops/send';
import { runCli } from '../../support/cli';
import { TEST_HASH_KEY } from '../../support/factories';

const env = { USER: 'send-provider-test', HOOKLEDGER_STATE: '/nonexistent/state.json' };
const consumers = [{ id: 'billing', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/billing.ts' }];
const config = defineConfig({
  sources: [
    { id: 'stripe-live', provider: 'stripe', attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } } },
    { id: 'adyen', provider: 'adyen', attribution: { tenantId: { body: 'environment' }, keyId: { body: 'data.id' } } },
    { id: 'discord', provider: 'discord', attribution: { keyId: { body: 'application_id' } } },
    { id: 'gh-a', provider: 'github', attribution: { tenantId: { body: 'installation.id' }, keyId: { body: 'repository.id' } } },
    { id: 'gh-b', provider: 'github', attribution: { tenantId: { body: 'installation.id' }, keyId: { body: 'repository.id' } } },
    { id: 'twilio', provider: 'twilio', attribution: { keyId: { body: 'MessagingServiceSid' } } },
    { id: 'wa', provider: 'meta', verifyToken: 'vt_9c2f7a1e5b3d4c6e', attribution: { keyId: { body: 'entry.0.changes.0.field' } } },
  ],
  consumers,
});

describe('send --provider refuses before reaching a stack (exit 2)', () => {
  it('an unknown provider, naming the close ones', async () => {
    const run = await runCli(['send', '--provider', 'strpe'], config, env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unknown provider "strpe"; did you mean "stripe", "stream"?');
  });

  it('a provider no source is configured with, saying what to add to hookledger.config.ts', async () => {
    const run = await runCli(['send', '--provider', 'paddle'], config, env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "no source in hookledger.config.ts uses provider \"paddle\"; add one to sources, e.g. { id: 'paddle', provider: 'paddle', attribution: { tenantId: { value: 'paddle' }, keyId: { value: 'paddle' } } } " +
        '(`npx hookledger sources add --provider paddle --write` adds it, saying what each field reads), then restart `npm start` (or deploy) so intake has it',
    );
  });

  it("names the path in the provider's sample that a tenant is read from, where the preset has none", async () => {
    const run = await runCli(['send', '--provider', 'liveblocks'], config, env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "e.g. { id: 'liveblocks', provider: 'liveblocks', attribution: { tenantId: { body: 'data.projectId' }, keyId: { value: 'liveblocks' } } }",
    );
  });

  it('a provider on two sources without --source, and a --source of another provider', async () => {
    const both = await runCli(['send', '--provider', 'github'], config, env);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('several sources use provider "github" (gh-a, gh-b); pass --source');
    const other = await runCli(['send', '--provider', 'github', '--source', 'stripe-live'], config, env);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('source "stripe-live" does not use provider "github"; sources that do: gh-a, gh-b');
  });

  it('a provider that signs with its own private key (the stack keeps only the public key)', async () => {
    const run = await runCli(['send', '--provider', 'discord'], config, env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('discord signs with its own private key (ed25519)');
  });

  it('--provider with --file', async () => {
    const run = await runCli(['send', '--provider', 'stripe', '--file', 'package.json'], config, env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--provider sends its own sample: leave out --file');
  });

  it('gets past the checks to the stack when the provider is configured: no stack here (exit 3)', async () => {
    const run = await runCli(['send', '--provider', 'stripe'], config, env);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('/nonexistent/state.json');
  });
});

describe('send --provider with a stand-in intake', () => {
  const posted: { url: string; headers: Record<string, string>; body: string }[] = [];
  const deps = (secret: string) => ({
    config,
    webhookUrl: (id: string) => `http://127.0.0.1:3000/hooks/${id}`,
    signingSecret: async () => secret,
    clock: () => Date.parse('2026-11-30T08:00:00Z'),
    fetch: (async (url: string, init: RequestInit) => {
      posted.push({ url, headers: init.headers as Record<string, string>, body: Buffer.from(init.body as Buffer).toString('utf8') });
      return new Response('{"event_id":"x","deliveries":1}', { status: 202 });
    }) as typeof fetch,
  });

  it('refuses a secret the scheme cannot use (adyen keys are hex; the local file made a whsec_ one): exit 3, no value printed', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const error = (await send(deps(secret), { provider: 'adyen' }).then(
      () => new Error('sent'),
      (e: unknown) => e as Error,
    )) as Error & { exitCode?: number };
    expect(error).toMatchObject({ name: 'TargetError', exitCode: 3 });
    expect(error.message).toContain('the signing secret of source "adyen" is not a adyen secret');
    expect(error.message).toContain('sources.adyen.current in the secrets file');
    expect(error.message).not.toContain(secret);
    expect(posted).toHaveLength(0);
  });

  it("posts the stripe sample with a fresh event id, the source's own tenant and key added, signed as stripe signs", async () => {
    const secret = 'whsec_4eC39HqLyjWDarjtT1zdp7dc9Kq2';
    const result = await send(deps(secret), { provider: 'stripe', tenant: 'acct_204' });
    expect(result).toMatchObject({ source: 'stripe-live', provider: 'stripe', status: 202 });
    expect(result.eventId).toMatch(/^evt_[0-9A-Z]{26}$/);
    const request = posted.at(-1)!;
    expect(request.url).toBe('http://127.0.0.1:3000/hooks/stripe-live');
    const body = JSON.parse(request.body) as { id: string; type: string; account: string; data: { object: { id: string } } };
    expect(body).toMatchObject({ id: result.eventId, type: 'invoice.paid', account: 'acct_204', data: { object: { id: 'in_8Rt2Lm' } } });
    const verdict = verifierFor(config.sources[0]!.scheme).verify(
      { rawBody: Buffer.from(request.body), headers: request.headers, now: Date.parse('2026-11-30T08:00:00Z'), toleranceSeconds: 300 },
      { current: secret },
    );
    expect(verdict).toEqual({ ok: true, secretVersion: 'current' });
  });

  it('posts twilio as a form, signed over the URL it posts to, the key field appended', async () => {
    const secret = '9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a';
    const result = await send(deps(secret), { provider: 'twilio', key: 'MG204' });
    const request = posted.at(-1)!;
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const fields = new URLSearchParams(request.body);
    expect(fields.get('MessageSid')).toBe(result.eventId);
    expect(fields.get('MessagingServiceSid')).toBe('MG204');
    const verdict = verifierFor(config.sources[5]!.scheme).verify(
      { rawBody: Buffer.from(request.body), headers: request.headers, now: Date.now(), toleranceSeconds: 300, url: request.url },
      { current: secret },
    );
    expect(verdict).toEqual({ ok: true, secretVersion: 'current' });
  });

  it('meta: posts the WhatsApp sample as is and reports the id intake derived from the body (only intake holds the key)', async () => {
    const secret = 'meta-app-secret-5c1f9e2a';
    const sent: { body: string; headers: Record<string, string> }[] = [];
    const result = await send(
      {
        ...deps(secret),
        // A stand-in intake answering as intake does: bh_ + the keyed hash of the bytes it got.
        fetch: (async (_url: string, init: RequestInit) => {
          const body = Buffer.from(init.body as Buffer);
          sent.push({ body: body.toString('utf8'), headers: init.headers as Record<string, string> });
          return new Response(JSON.stringify({ event_id: `bh_${payloadHmac(TEST_HASH_KEY, body)}`, deliveries: 1 }), { status: 202 });
        }) as typeof fetch,
      },
      { provider: 'meta', eventId: 'evt_01JDQ8Z4R7M2K9T3W5X6Y7Z8A9' },
    );
    expect(result).toMatchObject({
      source: 'wa',
      provider: 'meta',
      status: 202,
      eventId: 'bh_ae54b4ba853b80dd1ba60e671f88593accb16dc362b3df7d0b7e36e17b7c7490',
      eventIdAssignedAtIntake: true,
    });
    // Nothing added to Meta's own payload: no id field, the sample's tenant and field as sent.
    expect(JSON.parse(sent[0]!.body)).not.toHaveProperty('id');
    expect(sent[0]!.body).toContain('"wamid.evt_01JDQ8Z4R7M2K9T3W5X6Y7Z8A9"');
    const verdict = verifierFor(config.sources[6]!.scheme).verify(
      { rawBody: Buffer.from(sent[0]!.body), headers: sent[0]!.headers, now: Date.now(), toleranceSeconds: 300 },
      { current: secret },
    );
    expect(verdict).toEqual({ ok: true, secretVersion: 'current' });
    expect(formatSend(result)).toContain(`(event ${result.eventId}, derived from the body at intake)`);
  });
});

describe("send writes the body in the source's body format, the one intake reads it in", () => {
  const formConfig = defineConfig({
    sources: [
      { id: 'twilio-sms', provider: 'twilio', attribution: { keyId: { body: 'MessagingServiceSid' } } },
      // Twilio's JSON webhooks (signed through bodySHA256) on a source that says so.
      { id: 'twilio-json', provider: 'twilio', bodyFormat: 'json', attribution: { keyId: { body: 'MessagingServiceSid' } } },
    ],
    consumers,
  });
  const posted: { url: string; headers: Record<string, string>; body: string }[] = [];
  const secret = '9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a';
  const deps = {
    config: formConfig,
    webhookUrl: (id: string) => `http://127.0.0.1:3000/hooks/${id}`,
    signingSecret: async () => secret,
    clock: () => Date.parse('2026-11-30T08:00:00Z'),
    fetch: (async (url: string, init: RequestInit) => {
      posted.push({ url, headers: init.headers as Record<string, string>, body: Buffer.from(init.body as Buffer).toString('utf8') });
      return new Response('{"event_id":"x","deliveries":1}', { status: 202 });
    }) as typeof fetch,
  };

  it('send --source of a form source posts form fields with each attribution field, signed over the URL: it posted JSON that Twilio never signs', async () => {
    const result = await send(deps, { source: 'twilio-sms', eventId: 'SM01J8K7SND1', tenant: 'AC204', key: 'MG204', type: 'delivered' });
    const request = posted.at(-1)!;
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      created: String(Math.floor(Date.parse('2026-11-30T08:00:00Z') / 1000)),
      amount: '4200',
      currency: 'eur',
      MessageSid: 'SM01J8K7SND1',
      MessageStatus: 'delivered',
      AccountSid: 'AC204',
      MessagingServiceSid: 'MG204',
    });
    expect(result.eventId).toBe('SM01J8K7SND1');
    const verdict = verifierFor(formConfig.sources[0]!.scheme).verify(
      { rawBody: Buffer.from(request.body), headers: request.headers, now: Date.now(), toleranceSeconds: 300, url: request.url },
      { current: secret },
    );
    expect(verdict).toEqual({ ok: true, secretVersion: 'current' });
  });

  it('refuses --provider twilio for a source reading JSON: the form sample would be refused (415), so nothing is posted (exit 2)', async () => {
    const before = posted.length;
    const error = (await send(deps, { provider: 'twilio', source: 'twilio-json' }).then(
      () => new Error('sent'),
      (e: unknown) => e as Error,
    )) as Error & { exitCode?: number };
    expect(error).toMatchObject({ name: 'UsageError', exitCode: 2 });
    expect(error.message).toBe(
      `the twilio sample is application/x-www-form-urlencoded, but source "twilio-json" reads its body as JSON (bodyFormat 'json') and would refuse it (415); send a body of your own with --source twilio-json --file <path>`,
    );
    expect(posted).toHaveLength(before);
  });
});
