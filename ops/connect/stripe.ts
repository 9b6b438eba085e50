/**
 * Stripe's webhook endpoints (`/v1/webhook_endpoints`) through the `stripe` SDK pointed at `baseUrl`:
 * create (the answer carries the endpoint's signing secret, the only time Stripe returns it), list,
 * update (`url`, `enabled_events`, `disabled: false`), delete. Stripe's `status` is `enabled` or
 * `disabled`; it gives no delivery status.
 */

import type Stripe from 'stripe';
import { ProviderApiError } from '../../adapters/provider-events';
import { lazyStripe } from '../../adapters/provider-sdks';
import { GAP_APIS } from '../../core/gaps';
import { providerFailure, withRateLimitRetries } from './http';
import type { ProviderRegistrar, RegistrarOptions, RemoteEndpoint } from './types';

/** Stripe's largest list page. */
const STRIPE_PAGE = 100;

type EnabledEvent = Stripe.WebhookEndpointCreateParams.EnabledEvent;

export function stripeRegistrar(options: RegistrarOptions): ProviderRegistrar {
  const sdk = lazyStripe(options.apiKey, options.baseUrl ?? GAP_APIS.stripe.baseUrl);
  const call = <T>(run: (stripe: Stripe) => Promise<T>) =>
    withRateLimitRetries('stripe', options, async () => {
      const { stripe, StripeError } = await sdk();
      try {
        return await run(stripe);
      } catch (error) {
        if (error instanceof StripeError && error.statusCode !== undefined) {
          throw providerFailure('stripe', options.credential, {
            status: error.statusCode,
            retryAfter: error.headers?.['retry-after'],
            reason: error.message,
          });
        }
        throw new ProviderApiError('stripe', error instanceof Error ? error.message : String(error));
      }
    });
  return {
    provider: 'stripe',
    secretFrom: 'provider',
    async list() {
      const out: RemoteEndpoint[] = [];
      let startingAfter: string | undefined;
      do {
        const after = startingAfter;
        const page = await call((stripe) =>
          stripe.webhookEndpoints.list({ limit: STRIPE_PAGE, ...(after ? { starting_after: after } : {}) }),
        );
        out.push(...page.data.map(remoteOf));
        startingAfter = page.has_more ? page.data.at(-1)?.id : undefined;
      } while (startingAfter);
      return out;
    },
    async create(input) {
      const created = await call((stripe) =>
        stripe.webhookEndpoints.create({ url: input.url, enabled_events: [...input.events] as EnabledEvent[] }),
      );
      return { endpoint: remoteOf(created), ...(created.secret ? { secret: created.secret } : {}) };
    },
    async update(id, input) {
      const updated = await call((stripe) =>
        stripe.webhookEndpoints.update(id, { url: input.url, enabled_events: [...input.events] as EnabledEvent[], disabled: false }),
      );
      return { endpoint: remoteOf(updated) };
    },
    async remove(id) {
      await call((stripe) => stripe.webhookEndpoints.del(id));
    },
  };
}

function remoteOf(endpoint: Stripe.WebhookEndpoint): RemoteEndpoint {
  return { id: endpoint.id, url: endpoint.url, enabled: endpoint.status === 'enabled', events: endpoint.enabled_events };
}
