/**
 * The signature schemes, one module each, listed once. Adding a scheme: write its module (sign,
 * verifier, signed parts, options; see `Scheme` in ./types) and add one line here. The config
 * schema, intake, `hookledger send` and the signed-parts tests all read this registry.
 */
import { github } from './github';
import { hmac } from './hmac';
import { shopify } from './shopify';
import { slack } from './slack';
import { standardWebhooks } from './standard-webhooks';
import { stripe } from './stripe';
import type { OptionSpecs, OptionsInputOf, OptionsOf, Scheme, SignedParts, SignInput, Verifier } from './types';

export const SCHEMES = {
  'standard-webhooks': standardWebhooks,
  stripe,
  github,
  shopify,
  slack,
  hmac,
} as const;

export type SchemeType = keyof typeof SCHEMES;
type SpecsOf<K extends SchemeType> = (typeof SCHEMES)[K] extends Scheme<infer S> ? S : never;
/** A source's `scheme` once validated: its type and every option with defaults applied. */
export type SchemeConfig = { [K in SchemeType]: { readonly type: K } & OptionsOf<SpecsOf<K>> }[SchemeType];
/** A source's `scheme` as written in hookledger.config.ts. */
export type SchemeConfigInput = { [K in SchemeType]: { readonly type: K } & OptionsInputOf<SpecsOf<K>> }[SchemeType];

export const SCHEME_TYPES = Object.keys(SCHEMES) as SchemeType[];

function schemeOf(config: Pick<SchemeConfig, 'type'>): Scheme<OptionSpecs> {
  return SCHEMES[config.type] as unknown as Scheme<OptionSpecs>;
}

/** The verifier for a source's configured scheme. */
export function verifierFor(config: SchemeConfig): Verifier {
  return schemeOf(config).verifier(config as unknown as OptionsOf<OptionSpecs>);
}

/** The headers a provider using this scheme would send with `input.body`. */
export function signatureHeaders(config: SchemeConfig, input: SignInput): Record<string, string> {
  return schemeOf(config).sign(config as unknown as OptionsOf<OptionSpecs>, input);
}

/** What a scheme's signature covers. */
export function signedParts(config: Pick<SchemeConfig, 'type'>): SignedParts {
  return schemeOf(config).signedParts;
}

/** The options a scheme accepts beside `type` (the config schema validates them). */
export function schemeOptions(type: SchemeType): OptionSpecs {
  return SCHEMES[type].options;
}

export { SigningSecretError } from './crypto';
export type { SignedParts, SigningSecrets, SignInput, Verifier, VerifyFailureCode, VerifyInput, VerifyResult } from './types';
