/**
 * `hookledger sources connect | remote | disconnect` on one local stack against stand-ins of Stripe's
 * `/v1/webhook_endpoints` (through the `stripe` SDK) and GitHub's repository hooks (through
 * `@octokit/rest`), shaped from their published API descriptions: connect creates one endpoint
 * subscribed to the source's events and stores the provider's secret through `secrets rotate`'s path
 * (a webhook signed with it is accepted, and with the old one during its overlap); a second connect
 * changes nothing; remote reports injected drift; disconnect deletes it; GitHub gets a secret we
 * generated and stored first. Each bad input answers as the issue says: no credential (exit 3, where
 * it goes), a URL the provider refuses (its reason quoted), a provider without a registration API
 * (exit 2 with those that have one), a 429 waited out for its Retry-After, a secret that cannot be
 * stored (the new endpoint deleted again).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import { signatureHeaders } from '../../core/schemes';
import defaults from '../../hookledger.config';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { type ConnectDeps, connectSource, remoteSource } from '../../ops/connect/connect';
import { OperationFailedError } from '../../ops/errors';
import { sourcesReport } from '../../ops/sources';
import { resolveTarget, type Target } from '../../ops/target';
import { runCli } from '../support/cli';
import {
  type GithubHook,
  githubRegistrationApi,
  type RegistrationStandIn,
  STRIPE_PRIVATE_URL_MESSAGE,
  type StripeWebhookEndpoint,
  stripeRegistrationApi,
} from '../support/provider-registrations';
import { startTestStack } from '../support/stack';

const STRIPE_KEY = 'sk_test_51ConnectStandInKey00000';
const GITHUB_TOKEN = 'ghp_ConnectStandInToken0000000000000000';
const TUNNEL = 'https://tunnel-204.example.com';
const STRIPE_EVENTS = ['invoice.paid', 'invoice.payment_failed', 'customer.created'];

let stack: LocalStack;
let stripe: RegistrationStandIn<StripeWebhookEndpoint>;
let github: RegistrationStandIn<GithubHook>;
let config: HookledgerConfig;
let statePath: string;

const cli = (argv: string[]) => runCli(argv, config, { USER: 'e2e-connect', HOOKLEDGER_STATE: statePath });
const json = <T>(out: { stdout: string }) => JSON.parse(out.stdout) as T;

function setApiKey(source: string, value: string): void {
  const file = JSON.parse(readFileSync(stack.secretsFile, 'utf8'));
  file.sources[source].apiKey = value;
  writeFileSync(stack.secretsFile, JSON.stringify(file), { mode: 0o600 });
}

/** A webhook as the provider signs it with `secret` (its scheme's headers). */
async function post(source: string, event: Record<string, unknown>, secret: string): Promise<number> {
  const raw = Buffer.from(JSON.stringify(event));
  const scheme = config.sources.find((s) => s.id === source)!.scheme;
  const messageId = String(event.id ?? event.delivery);
  const headers = signatureHeaders(scheme, { body: raw, secret, now: Date.now(), messageId, url: stack.webhookUrl(source) });
  const extra: Record<string, string> = source.startsWith('github') ? { 'x-github-delivery': messageId, 'x-github-event': 'push' } : {};
  const res = await fetch(stack.webhookUrl(source), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers, ...extra },
    body: raw,
  });
  await res.body?.cancel();
  return res.status;
}

const invoice = (id: string) => ({
  id,
  object: 'event',
  account: 'acct_tenant_204',
  type: 'invoice.paid',
  created: Math.floor(Date.now() / 1000),
  data: { object: { id: `in_${id.slice(4)}`, object: 'invoice' } },
});

async function connectDeps(
  overrides: Partial<ConnectDeps['target']> = {},
  sleep?: (ms: number) => Promise<void>,
): Promise<ConnectDeps & { target: Target }> {
  const target = await resolveTarget({ config, root: process.cwd(), env: { HOOKLEDGER_STATE: statePath } });
  return {
    ops: { ddb: target.ddb, tables: target.tables, operator: 'e2e-connect', config },
    target: { ...target, ...overrides },
    ...(sleep ? { sleep } : {}),
  };
}

beforeAll(async () => {
  stripe = await stripeRegistrationApi(STRIPE_KEY);
  github = await githubRegistrationApi(GITHUB_TOKEN, 'repos/octo-org/ledger');
  const stripeSource = (id: string) => ({
    id,
    provider: 'stripe' as const,
    attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } },
    events: STRIPE_EVENTS,
    gapCheck: { api: 'stripe' as const, baseUrl: stripe.url },
  });
  config = defineConfig({
    sources: [
      ...defaults.sources,
      stripeSource('stripe'),
      stripeSource('stripe-nokey'),
      stripeSource('stripe-unstored'),
      {
        id: 'github',
        provider: 'github',
        attribution: { tenantId: { value: 'octo-org' }, keyId: { value: 'hook_12' } },
        events: ['push', 'issues'],
        gapCheck: { api: 'github', baseUrl: github.url, hook: 'repos/octo-org/ledger/hooks/1' },
      },
    ],
    consumers: defaults.consumers.filter((c) => c.id === 'audit-writer').map((c) => ({ ...c, subscribes: ['*'] })),
  });
  stack = await startTestStack({ config });
  statePath = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-connect-')), 'state.json');
  await writeState(statePath, stackState(stack, null));
  await stack.secrets.get('stripe');
  setApiKey('stripe', STRIPE_KEY);
  setApiKey('stripe-unstored', STRIPE_KEY);
  setApiKey('github', GITHUB_TOKEN);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await stripe?.close();
  await github?.close();
});

describe('sources connect on stripe', () => {
  let endpointId: string;
  let oldSecret: string;

  it('--dry-run says it would create the endpoint and changes nothing', async () => {
    const out = await cli(['sources', 'connect', 'stripe', '--url', TUNNEL, '--dry-run']);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(
      `would create a stripe endpoint at ${TUNNEL}/hooks/stripe for source stripe\n  events   ${STRIPE_EVENTS.join(', ')}\n`,
    );
    expect(stripe.endpoints.size).toBe(0);
  });

  it('creates one endpoint subscribed to the events and stores its secret; the old secret verifies in its overlap', async () => {
    oldSecret = (await stack.secrets.get('stripe')).current;
    const out = await cli(['sources', 'connect', 'stripe', '--url', TUNNEL, '--json']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const result = json<{ action: string; secret: string; endpoint: { id: string; url: string; events: string[] } }>(out);
    expect(result).toMatchObject({ action: 'created', secret: 'stored' });
    expect([...stripe.endpoints.values()].map((e) => [e.url, e.enabled_events, e.status])).toEqual([
      [`${TUNNEL}/hooks/stripe`, STRIPE_EVENTS, 'enabled'],
    ]);
    endpointId = result.endpoint.id;
    const issued = stripe.endpoints.get(endpointId)!.secret;
    expect((await stack.secrets.get('stripe')).current).toBe(issued);
    expect(await post('stripe', invoice('evt_1ConnNew01'), issued)).toBe(202);
    expect(await post('stripe', invoice('evt_1ConnOld01'), oldSecret)).toBe(202);
    expect(await post('stripe', invoice('evt_1ConnBad01'), 'whsec_not_the_endpoint_secret')).toBe(401);
    expect(out.stdout).not.toContain(issued);
  });

  it('a second connect finds the endpoint by its URL and creates nothing', async () => {
    const creates = () => stripe.requests.filter((r) => r.method === 'POST' && r.path === '/v1/webhook_endpoints').length;
    const before = creates();
    const out = await cli(['sources', 'connect', 'stripe', '--url', TUNNEL]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`stripe endpoint ${endpointId} of source stripe matches the configuration: nothing changed`);
    expect(creates()).toBe(before);
    expect(stripe.endpoints.size).toBe(1);
  });

  it('remote reports a URL changed, an event type removed and the endpoint disabled at the provider (exit 1)', async () => {
    const endpoint = stripe.endpoints.get(endpointId)!;
    endpoint.url = 'https://old-tunnel.example.com/hooks/stripe';
    endpoint.enabled_events = ['invoice.paid', 'customer.created', 'charge.refunded'];
    endpoint.status = 'disabled';
    const out = await cli(['sources', 'remote', 'stripe', '--url', TUNNEL, '--json']);
    expect(out.code).toBe(1);
    expect(json<{ drift: unknown[] }>(out).drift).toEqual([
      { kind: 'url', expected: `${TUNNEL}/hooks/stripe`, actual: 'https://old-tunnel.example.com/hooks/stripe' },
      { kind: 'missing_events', events: ['invoice.payment_failed'] },
      { kind: 'extra_events', events: ['charge.refunded'] },
      { kind: 'disabled' },
    ]);
    const human = await cli(['sources', 'remote', 'stripe', '--url', TUNNEL]);
    expect(human.stdout).toContain('event types not subscribed: invoice.payment_failed');
  });

  it('connect then updates the same endpoint back to the configuration, keeping its secret', async () => {
    const current = (await stack.secrets.get('stripe')).current;
    const out = await cli(['sources', 'connect', 'stripe', '--url', TUNNEL, '--json']);
    expect(out.code).toBe(0);
    expect(json<{ action: string; secret: string }>(out)).toMatchObject({ action: 'updated', secret: 'kept' });
    expect(stripe.endpoints.size).toBe(1);
    expect(stripe.endpoints.get(endpointId)).toMatchObject({
      url: `${TUNNEL}/hooks/stripe`,
      enabled_events: STRIPE_EVENTS,
      status: 'enabled',
    });
    expect((await stack.secrets.get('stripe')).current).toBe(current);
    expect((await cli(['sources', 'remote', 'stripe', '--url', TUNNEL])).code).toBe(0);
  });

  it('disconnect deletes the endpoint; remote then reports it missing', async () => {
    const out = await cli(['sources', 'disconnect', 'stripe', '--url', TUNNEL, '--yes']);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(`deleted stripe endpoint ${endpointId} (${TUNNEL}/hooks/stripe) of source stripe.\n`);
    expect(stripe.endpoints.size).toBe(0);
    const remote = await cli(['sources', 'remote', 'stripe', '--url', TUNNEL, '--json']);
    expect(remote.code).toBe(1);
    expect(json<{ drift: unknown[] }>(remote).drift).toEqual([{ kind: 'not_connected' }]);
  });
});

describe("the Sources report (the console's Sources view)", () => {
  it('shows the event types each source declares', async () => {
    const deps = await connectDeps();
    const report = await sourcesReport(
      { ...deps.ops, secretRotation: deps.target.secretRotation },
      { window: { from: Date.now() - 60_000, to: Date.now() } },
    );
    deps.target.destroy();
    const declared = Object.fromEntries(report.sources.map((s) => [s.source, s.declaredEvents]));
    expect(declared).toEqual({
      platform: undefined,
      stripe: STRIPE_EVENTS,
      'stripe-nokey': STRIPE_EVENTS,
      'stripe-unstored': STRIPE_EVENTS,
      github: ['push', 'issues'],
    });
  });
});

describe('sources connect: bad input', () => {
  it('without a credential exits 3 naming where it goes', async () => {
    const out = await cli(['sources', 'connect', 'stripe-nokey', '--url', TUNNEL]);
    expect(out.code).toBe(3);
    expect(out.stderr).toContain(
      `no stripe API key for source "stripe-nokey": put one able to manage webhook endpoints at sources.stripe-nokey.apiKey in ${stack.secretsFile}`,
    );
    expect(stripe.endpoints.size).toBe(0);
  });

  it('a URL the provider refuses exits 3 quoting its reason, and creates nothing', async () => {
    const out = await cli(['sources', 'connect', 'stripe']);
    expect(out.code).toBe(3);
    expect(out.stderr).toBe(
      `error: the stripe API refused the endpoint ${stack.webhookUrl('stripe')} for source "stripe" (400): "${STRIPE_PRIVATE_URL_MESSAGE}"\n`,
    );
    expect(out.stderr).not.toContain(STRIPE_KEY);
    expect(stripe.endpoints.size).toBe(0);
  });

  it('a source whose provider has no registration API exits 2 listing those that have one', async () => {
    const out = await cli(['sources', 'connect', 'platform']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('sources connect works for: stripe, github, square, paddle');
  });

  it("honours a 429's Retry-After before calling again", async () => {
    const waits: number[] = [];
    const deps = await connectDeps({}, async (ms) => void waits.push(ms));
    stripe.fail(429, { 'retry-after': '2' });
    const report = await remoteSource(deps, { source: 'stripe', url: TUNNEL });
    deps.target.destroy();
    expect(waits).toEqual([2000]);
    expect(report.drift).toEqual([{ kind: 'not_connected' }]);
  });

  it('deletes the new endpoint again when its secret cannot be stored', async () => {
    const deps = await connectDeps({
      rotator: {
        kind: 'local',
        rotate: async () => Promise.reject(new Error('EACCES: secrets file read-only')),
        retire: async () => ({ retired: false }),
      },
    });
    const failed = connectSource(deps, { source: 'stripe-unstored', url: TUNNEL });
    await expect(failed).rejects.toBeInstanceOf(OperationFailedError);
    await expect(failed).rejects.toThrow(
      /could not store the signing secret of source "stripe-unstored" \(EACCES: secrets file read-only\): deleted the new stripe endpoint we_1Reg\d{4}StandIn again; nothing changed/,
    );
    deps.target.destroy();
    expect(stripe.endpoints.size).toBe(0);
  });
});

describe('sources connect on github', () => {
  it('generates a secret, stores it, then registers the hook with it; a push signed with it is accepted', async () => {
    const before = (await stack.secrets.get('github')).current;
    const out = await cli(['sources', 'connect', 'github', '--url', TUNNEL, '--json']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(json<{ action: string; secret: string }>(out)).toMatchObject({ action: 'created', secret: 'stored' });
    const [hook] = [...github.endpoints.values()];
    expect(hook).toMatchObject({
      active: true,
      events: ['push', 'issues'],
      config: { url: `${TUNNEL}/hooks/github`, content_type: 'json' },
    });
    const sent = hook!.config.secret!;
    expect(sent).not.toBe(before);
    expect((await stack.secrets.get('github')).current).toBe(sent);
    expect(await post('github', { delivery: '7a1c9e00-cf3a-11ef-8e2b-0c1a2b3c4d5e', ref: 'refs/heads/main' }, sent)).toBe(202);
  });

  it('updates a drifted hook with a new secret, stored before it is sent; pushes signed with it are accepted', async () => {
    const [hook] = [...github.endpoints.values()];
    hook!.events = ['push'];
    const first = hook!.config.secret!;
    const out = await cli(['sources', 'connect', 'github', '--url', TUNNEL, '--json']);
    expect(out.code).toBe(0);
    expect(json<{ action: string; drift: unknown[] }>(out)).toMatchObject({
      action: 'updated',
      drift: [{ kind: 'missing_events', events: ['issues'] }],
    });
    expect(github.endpoints.size).toBe(1);
    const sent = hook!.config.secret!;
    expect(sent).not.toBe(first);
    expect(hook!.events).toEqual(['push', 'issues']);
    expect((await stack.secrets.get('github')).current).toBe(sent);
    expect(await post('github', { delivery: '7a1c9e01-cf3a-11ef-8e2b-0c1a2b3c4d5e', ref: 'refs/heads/main' }, sent)).toBe(202);
  });
});
