/**
 * The providers' SDK clients, each loaded on first use (the CLI's other commands and intake's cold
 * start never load them) and pointed at `baseUrl` (the provider's, or a stand-in's in tests). Shared
 * by the gap check (provider-events.ts) and endpoint registration (ops/connect).
 *
 * Neither SDK retries on its own: a 429 is retried by the caller after its Retry-After, which the
 * SDKs' own retries would not honour.
 */
import type { Octokit } from '@octokit/rest';
import type Stripe from 'stripe';

export interface StripeSdk {
  readonly stripe: Stripe;
  readonly StripeError: typeof Stripe.errors.StripeError;
}

/** A loader of one Stripe client for `apiKey` at `baseUrl`, built on its first call. */
export function lazyStripe(apiKey: string, baseUrl: string): () => Promise<StripeSdk> {
  const url = new URL(baseUrl);
  let client: Promise<StripeSdk> | undefined;
  return () =>
    (client ??= import('stripe').then(({ default: StripeClient }) => ({
      stripe: new StripeClient(apiKey, {
        host: url.hostname,
        port: url.port || (url.protocol === 'https:' ? 443 : 80),
        protocol: url.protocol === 'https:' ? 'https' : 'http',
        maxNetworkRetries: 0,
        telemetry: false,
      }),
      StripeError: StripeClient.errors.StripeError,
    })));
}

/** A loader of one Octokit client for `apiKey` at `baseUrl`, built on its first call; it logs nothing. */
export function lazyOctokit(apiKey: string, baseUrl: string, userAgent: string): () => Promise<Octokit> {
  let client: Promise<Octokit> | undefined;
  return () =>
    (client ??= import('@octokit/rest').then(
      ({ Octokit: OctokitClient }) =>
        new OctokitClient({
          auth: apiKey,
          baseUrl,
          userAgent,
          log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
        }),
    ));
}
