/**
 * The gap check's configuration at load (core/config/schema.ts): recovery records only the event
 * types a source declares it receives (`events`), so `gapCheck.recover` is refused without an
 * explicit list; the paging bounds of one run (`gapCheck.maxPages`, `maxEvents`) default to the named
 * constants of core/gaps.ts and are validated.
 */
import { describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import { ConfigurationError } from '../../core/errors';
import { DEFAULT_GAP_MAX_EVENTS, DEFAULT_GAP_MAX_PAGES, GAP_MAX_EVENTS_CEILING, GAP_MAX_PAGES_CEILING } from '../../core/gaps';

const withSource = (source: Record<string, unknown>): HookledgerConfigInput => ({
  sources: [
    {
      id: 'stripe-live',
      provider: 'stripe',
      attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } },
      ...source,
    } as never,
  ],
  consumers: [{ id: 'billing-meter', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/billing-meter.ts' }],
});

function refusal(input: HookledgerConfigInput): string {
  try {
    defineConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return (error as Error).message;
  }
  throw new Error('expected the configuration to be refused');
}

describe('gapCheck.recover and the event types a source declares', () => {
  it('refuses recover on a source that declares no events, naming the field, its value and the fix', () => {
    const message = refusal(withSource({ gapCheck: { api: 'stripe', recover: true } }));
    expect(message).toContain(
      'sources[id=stripe-live].gapCheck.recover (value true): recovery records what the stripe API lists as if this endpoint had received it, ' +
        "and the provider's list holds every event type: declare the types the endpoint receives with events: ['invoice.paid', ...] on source \"stripe-live\", or remove recover",
    );
  });

  it('refuses recover with events ["*"]: every type again', () => {
    const message = refusal(withSource({ events: ['*'], gapCheck: { api: 'stripe', recover: true } }));
    expect(message).toContain(
      'sources[id=stripe-live].events (value ["*"]): "*" is every type the provider lists, which gapCheck.recover would record; list the types the endpoint receives by name, or remove gapCheck.recover',
    );
  });

  it('accepts recover with an explicit list, and events ["*"] or none without recover', () => {
    const source = defineConfig(withSource({ events: ['payment_intent.succeeded'], gapCheck: { api: 'stripe', recover: true } }))
      .sources[0]!;
    expect(source.events).toEqual(['payment_intent.succeeded']);
    expect(source.gapCheck?.recover).toBe(true);
    expect(defineConfig(withSource({ events: ['*'], gapCheck: { api: 'stripe' } })).sources[0]!.events).toEqual(['*']);
    expect(defineConfig(withSource({ gapCheck: { api: 'stripe' } })).sources[0]!.events).toBeUndefined();
  });

  it('refuses a prefix pattern in events: a provider subscribes an endpoint to named types', () => {
    const message = refusal(withSource({ events: ['payment_intent.*'] }));
    expect(message).toContain(
      'sources[id=stripe-live].events[0] (value "payment_intent.*"): events are event type names as the provider sends them ("invoice.paid", "push"), or "*" alone',
    );
  });

  it('refuses "*" beside named types', () => {
    expect(refusal(withSource({ events: ['*', 'invoice.paid'] }))).toContain(
      'sources[id=stripe-live].events (value ["*","invoice.paid"]): "*" already means every type: give it alone, or only names',
    );
  });

  it("refuses gapCheck.types, saying the list is now the source's events", () => {
    expect(refusal(withSource({ gapCheck: { api: 'stripe', types: ['invoice.*'] } }))).toContain(
      'sources[id=stripe-live].gapCheck.types (value ["invoice.*"]): gapCheck.types is now the source\'s events: list the event types the endpoint receives there by name',
    );
  });
});

describe('gapCheck paging bounds', () => {
  it('defaults maxPages and maxEvents to the named constants', () => {
    expect(defineConfig(withSource({ gapCheck: { api: 'stripe' } })).sources[0]!.gapCheck).toMatchObject({
      maxPages: DEFAULT_GAP_MAX_PAGES,
      maxEvents: DEFAULT_GAP_MAX_EVENTS,
    });
    expect([DEFAULT_GAP_MAX_PAGES, DEFAULT_GAP_MAX_EVENTS]).toEqual([500, 50_000]);
  });

  it('refuses bounds below 1 or above the ceilings, naming the field and the range', () => {
    expect(refusal(withSource({ gapCheck: { api: 'stripe', maxPages: 0 } }))).toContain(
      `sources[id=stripe-live].gapCheck.maxPages (value 0): maxPages must be an integer from 1 to ${GAP_MAX_PAGES_CEILING}`,
    );
    expect(refusal(withSource({ gapCheck: { api: 'stripe', maxEvents: GAP_MAX_EVENTS_CEILING + 1 } }))).toContain(
      `sources[id=stripe-live].gapCheck.maxEvents (value ${GAP_MAX_EVENTS_CEILING + 1}): maxEvents must be an integer from 1 to ${GAP_MAX_EVENTS_CEILING}`,
    );
  });
});
