/**
 * The drift check's read-only listing of webhook endpoints (adapters/provider-endpoints.ts) against
 * the registration stand-ins of all four providers: it lists what each registrar (ops/connect) lists,
 * disabled endpoints and GitHub's delivery status included; a refused key is named by where it lives,
 * never by value; a 429 is waited out for its Retry-After.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { listProviderEndpoints } from '../../adapters/provider-endpoints';
import { ProviderApiError, ProviderAuthError } from '../../adapters/provider-events';
import { REGISTRARS } from '../../ops/connect/registrars';
import { githubRegistrationApi, stripeRegistrationApi } from '../support/provider-registrations';
import { paddleRegistrations, squareRegistrations } from '../support/provider-registrations-sq-paddle';

const KEY = 'prov_key_204';
const CREDENTIAL = 'the secret arn:aws:secretsmanager:eu-west-1:123456789012:secret:gap-204';
const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

/** The provider disables an endpoint (after failed deliveries, or by hand in its dashboard). */
function disable(standIn: Awaited<ReturnType<typeof standInFor>>, id: string): void {
  const { endpoints } = standIn as unknown as { endpoints: Map<string, Record<string, unknown>> | Record<string, unknown>[] };
  const found = endpoints instanceof Map ? endpoints.get(id) : endpoints.find((e) => e.id === id);
  if (!found) throw new Error(`no endpoint ${id}`);
  if ('status' in found) found.status = 'disabled';
  else if ('enabled' in found) found.enabled = false;
  else found.active = false;
}

async function standInFor(api: 'stripe' | 'github' | 'square' | 'paddle') {
  const standIn =
    api === 'stripe'
      ? await stripeRegistrationApi(KEY)
      : api === 'github'
        ? await githubRegistrationApi(KEY, 'repos/octo-org/ledger')
        : api === 'square'
          ? await squareRegistrations(KEY, [], 1)
          : await paddleRegistrations(KEY, []);
  running.push(standIn);
  return standIn;
}

describe('listing webhook endpoints for the drift check', () => {
  it.each([
    ['stripe', ['invoice.paid'], ['customer.created']],
    ['github', ['push'], ['pull_request']],
    ['square', ['payment.created'], ['refund.created']],
    ['paddle', ['transaction.completed'], ['transaction.paid']],
  ] as const)('%s: lists what its registrar lists, the disabled endpoint included', async (api, first, second) => {
    const standIn = await standInFor(api);
    const registrar = REGISTRARS[api]!({
      apiKey: KEY,
      credential: CREDENTIAL,
      baseUrl: standIn.url,
      ...(api === 'github' ? { hook: 'repos/octo-org/ledger' } : {}),
    });
    await registrar.create({
      url: 'https://hooks.example.com/hooks/a_204',
      events: first,
      ...(api === 'github' ? { secret: 's3cr3t_204' } : {}),
    });
    const { endpoint } = await registrar.create({
      url: 'https://hooks.example.com/hooks/b_204',
      events: second,
      ...(api === 'github' ? { secret: 's3cr3t_204' } : {}),
    });
    disable(standIn, endpoint.id);
    const listed = await listProviderEndpoints({
      api,
      apiKey: KEY,
      credential: CREDENTIAL,
      baseUrl: standIn.url,
      ...(api === 'github' ? { scope: 'repos/octo-org/ledger' } : {}),
    });
    expect(listed).toEqual(await registrar.list());
    expect(listed.map((e) => [e.url, e.events, e.enabled]).sort()).toEqual([
      ['https://hooks.example.com/hooks/a_204', first, true],
      ['https://hooks.example.com/hooks/b_204', second, false],
    ]);
  });

  it('names where a refused key lives, never its value (square 401, paddle 403 invalid_token)', async () => {
    for (const api of ['square', 'paddle'] as const) {
      const standIn = await standInFor(api);
      const error = await listProviderEndpoints({ api, apiKey: 'wrong_key_204', credential: CREDENTIAL, baseUrl: standIn.url }).catch(
        (e: unknown) => e,
      );
      expect(error, api).toBeInstanceOf(ProviderAuthError);
      expect((error as Error).message).toContain(CREDENTIAL);
      expect((error as Error).message).not.toContain('wrong_key_204');
      // The status the provider sent: Square's 401, Paddle's 403 invalid_token.
      expect((error as Error).message, api).toContain(
        api === 'square' ? 'refused the credential (401)' : 'refused the credential (403 invalid_token)',
      );
    }
  });

  it('says a key without read access to webhook endpoints lacks the permission (403)', async () => {
    const standIn = await standInFor('square');
    standIn.fail(403);
    const error = await listProviderEndpoints({ api: 'square', apiKey: KEY, credential: CREDENTIAL, baseUrl: standIn.url }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderApiError);
    expect((error as Error).message).toContain('lacks the permission to read webhook endpoints (see docs/providers/square.md)');
  });

  it('waits out a 429 for its Retry-After, then lists', async () => {
    const standIn = await standInFor('paddle');
    standIn.fail(429, { 'retry-after': '3' });
    const waits: number[] = [];
    const listed = await listProviderEndpoints({
      api: 'paddle',
      apiKey: KEY,
      credential: CREDENTIAL,
      baseUrl: standIn.url,
      sleep: async (ms) => void waits.push(ms),
    });
    expect(listed).toEqual([]);
    expect(waits).toEqual([3000]);
  });
});
