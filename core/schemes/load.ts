/**
 * Intake's schemes, loaded one module each with `import()`: a bundle (code splitting,
 * lib/constructs/hookledger-function.ts) then carries each scheme in a chunk of its own, and a cold
 * start reads only the schemes its configuration names (one, for most deployments) instead of all
 * nineteen. The static registry (./index) stays what the CLI, the config schema and the tests read;
 * test/unit/scheme-loading.test.ts holds the two lists to the same schemes.
 */
import type { SchemeType } from './index';
import { type SchemeSet, schemeSet } from './set';
import type { OptionSpecs, Scheme } from './types';

type Loaded = Scheme<OptionSpecs>;
const as = (scheme: unknown): Loaded => scheme as Loaded;

/** One loader per scheme type; the type makes a scheme missing here a compile error. */
export const SCHEME_LOADERS: { readonly [K in SchemeType]: () => Promise<Loaded> } = {
  'standard-webhooks': async () => as((await import('./standard-webhooks')).standardWebhooks),
  'standard-webhooks-v1a': async () => as((await import('./standard-webhooks-v1a')).standardWebhooksV1a),
  stripe: async () => as((await import('./stripe')).stripe),
  github: async () => as((await import('./github')).github),
  shopify: async () => as((await import('./shopify')).shopify),
  slack: async () => as((await import('./slack')).slack),
  hmac: async () => as((await import('./hmac')).hmac),
  'hmac-template': async () => as((await import('./hmac-template')).hmacTemplate),
  'timestamped-hmac': async () => as((await import('./timestamped-hmac')).timestampedHmac),
  ed25519: async () => as((await import('./ed25519')).ed25519),
  twilio: async () => as((await import('./twilio')).twilio),
  sendgrid: async () => as((await import('./sendgrid')).sendgrid),
  jwt: async () => as((await import('./jwt')).jwt),
  jwks: async () => as((await import('./jwks')).jwks),
  mailgun: async () => as((await import('./mailgun')).mailgun),
  'shared-secret': async () => as((await import('./shared-secret')).sharedSecret),
  'client-state': async () => as((await import('./client-state')).clientState),
  'secret-digest': async () => as((await import('./secret-digest')).secretDigest),
  hygraph: async () => as((await import('./hygraph')).hygraph),
};

/**
 * The schemes of `types`, loaded (each module once, side by side). Asking the set for a scheme not
 * loaded is a programming error (intake loads every configured source's scheme at cold start) and
 * throws naming it.
 */
export async function loadSchemes(types: Iterable<string>): Promise<SchemeSet> {
  const wanted = [...new Set(types)];
  const loaded = new Map<string, Loaded>(
    await Promise.all(
      wanted.map(async (type) => {
        const load = (SCHEME_LOADERS as Record<string, (() => Promise<Loaded>) | undefined>)[type];
        if (!load) throw new Error(`unknown scheme type "${type}"; one of: ${Object.keys(SCHEME_LOADERS).join(', ')}`);
        return [type, await load()] as const;
      }),
    ),
  );
  return schemeSet((type) => {
    const scheme = loaded.get(type);
    if (!scheme) throw new Error(`scheme "${type}" was not loaded; loaded: ${[...loaded.keys()].join(', ') || 'none'}`);
    return scheme;
  });
}
