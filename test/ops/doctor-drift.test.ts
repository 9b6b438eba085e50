/**
 * `hookledger doctor`'s rows about what sources receive: each source's declared events, and where
 * the deployed stack holds a source's provider API key, its endpoint at the provider (a Stripe
 * stand-in through the `stripe` SDK) against its URL and events. Secrets Manager is mocked; a key
 * with no value yet is not checked.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import defaults from '../../hookledger.config';
import { declaredEventsChecks, providerDriftChecks } from '../../ops/connect/doctor-checks';
import { type RegistrationStandIn, type StripeWebhookEndpoint, stripeRegistrationApi } from '../support/provider-registrations';

const KEY = 'sk_test_51DoctorDriftStandIn000';
const WEBHOOK_BASE = 'https://abc.execute-api.eu-west-1.amazonaws.com/hooks/';
const ARN = (id: string) => `arn:aws:secretsmanager:eu-west-1:123456789012:secret:GapApiKey${id}-AbC`;
const sm = mockClient(SecretsManagerClient);
let stripe: RegistrationStandIn<StripeWebhookEndpoint>;
let config: HookledgerConfig;

beforeAll(async () => {
  stripe = await stripeRegistrationApi(KEY);
  const source = (id: string, events: string[]) => ({
    id,
    provider: 'stripe' as const,
    attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } },
    events,
    gapCheck: { api: 'stripe' as const, baseUrl: stripe.url },
  });
  config = defineConfig({
    ...defaults,
    sources: [...defaults.sources, source('stripe', ['invoice.paid', 'customer.created']), source('stripe-unset', ['*'])],
  });
});
afterEach(() => sm.reset());
afterAll(() => stripe?.close());

const outputs = new Map([
  ['WebhookUrl', WEBHOOK_BASE],
  ['GapApiKeySecretArnStripe', ARN('Stripe')],
  ['GapApiKeySecretArnStripeUnset', ARN('StripeUnset')],
]);

function endpoint(id: string, url: string, events: string[], status: 'enabled' | 'disabled'): StripeWebhookEndpoint {
  return {
    id,
    object: 'webhook_endpoint',
    api_version: null,
    application: null,
    created: 1_764_600_000,
    description: null,
    enabled_events: events,
    livemode: false,
    metadata: {},
    secret: 'whsec_doctor',
    status,
    url,
  };
}

describe('doctor: declared events', () => {
  it('shows the event types each declaring source receives, and nothing for one that declares none', () => {
    expect(declaredEventsChecks(config)).toEqual([
      { id: 'events:stripe', status: 'info', message: 'stripe receives invoice.paid, customer.created' },
      { id: 'events:stripe-unset', status: 'info', message: 'stripe-unset receives every event type its provider sends (events: ["*"])' },
    ]);
  });
});

describe('doctor: provider drift', () => {
  it('warns about an endpoint missing an event type and disabled, with the command that fixes it; skips a key with no value', async () => {
    sm.on(GetSecretValueCommand, { SecretId: ARN('Stripe') }).resolves({ SecretString: KEY });
    sm.on(GetSecretValueCommand, { SecretId: ARN('StripeUnset') }).rejects(
      Object.assign(new Error("Secrets Manager can't find the specified secret value for staging label: AWSCURRENT"), {
        name: 'ResourceNotFoundException',
      }),
    );
    stripe.endpoints.clear();
    stripe.endpoints.set('we_1Doctor0001', endpoint('we_1Doctor0001', `${WEBHOOK_BASE}stripe`, ['invoice.paid'], 'disabled'));
    const checks = await providerDriftChecks({
      secrets: new SecretsManagerClient({ region: 'eu-west-1' }),
      outputs,
      config,
      stackName: 'Hookledger',
    });
    expect(checks).toEqual([
      {
        id: 'remote:stripe',
        status: 'warning',
        message: 'the stripe endpoint of stripe drifted: event types not subscribed: customer.created; disabled by the provider',
        fix: 'npx hookledger sources connect stripe --stack Hookledger',
      },
    ]);
  });

  it('says the endpoint matches when it does', async () => {
    sm.on(GetSecretValueCommand, { SecretId: ARN('Stripe') }).resolves({ SecretString: KEY });
    sm.on(GetSecretValueCommand, { SecretId: ARN('StripeUnset') }).resolves({});
    stripe.endpoints.clear();
    stripe.endpoints.set(
      'we_1Doctor0002',
      endpoint('we_1Doctor0002', `${WEBHOOK_BASE}stripe`, ['invoice.paid', 'customer.created'], 'enabled'),
    );
    const checks = await providerDriftChecks({
      secrets: new SecretsManagerClient({ region: 'eu-west-1' }),
      outputs,
      config,
      stackName: 'Hookledger',
    });
    expect(checks).toEqual([
      { id: 'remote:stripe', status: 'ok', message: 'the stripe endpoint we_1Doctor0002 of stripe matches its URL and events' },
    ]);
  });
});
