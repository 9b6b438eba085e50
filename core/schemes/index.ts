/**
 * The signature schemes, one module each, listed once. Adding a scheme: write its module (sign,
 * verifier, signed parts, options; see `Scheme` in ./types; keep its top level free of calls and
 * template literals, or mark them `@__PURE__`, so bundles that do not use it leave it out), add one
 * line here and one in ./bundled (the compiler asks for it). The config schema, `hookledger send`,
 * the local stack and the signed-parts tests read this registry; intake's Lambda bundle reads ./bundled.
 */

import type { BodyFormat } from '../body';
import { ConfigurationError } from '../errors';
import type { Handshake } from '../handshakes';
import { clientState } from './client-state';
import { ed25519 } from './ed25519';
import { github } from './github';
import { hmac } from './hmac';
import { hmacTemplate } from './hmac-template';
import { hygraph } from './hygraph';
import { jwks } from './jwks';
import { jwt } from './jwt';
import { mailgun } from './mailgun';
import { secretDigest } from './secret-digest';
import { sendgrid } from './sendgrid';
import { optionsWithDefaults, type SchemeSet, schemeSet } from './set';
import { sharedSecret } from './shared-secret';
import { shopify } from './shopify';
import { slack } from './slack';
import { standardWebhooks } from './standard-webhooks';
import { standardWebhooksV1a } from './standard-webhooks-v1a';
import { stripe } from './stripe';
import { timestampedHmac } from './timestamped-hmac';
import { twilio } from './twilio';
import type {
  KeyRequest,
  OptionSpecs,
  OptionsInputOf,
  OptionsOf,
  Scheme,
  SecretSpec,
  SignedParts,
  SignInput,
  Verifier,
  VerifyInput,
} from './types';

export const SCHEMES = {
  'standard-webhooks': standardWebhooks,
  'standard-webhooks-v1a': standardWebhooksV1a,
  stripe,
  github,
  shopify,
  slack,
  hmac,
  'hmac-template': hmacTemplate,
  'timestamped-hmac': timestampedHmac,
  ed25519,
  twilio,
  sendgrid,
  jwt,
  jwks,
  mailgun,
  'shared-secret': sharedSecret,
  'client-state': clientState,
  'secret-digest': secretDigest,
  hygraph,
} as const;

export type SchemeType = keyof typeof SCHEMES;
type SpecsOf<K extends SchemeType> = (typeof SCHEMES)[K] extends Scheme<infer S> ? S : never;
/** A source's `scheme` once validated: its type and every option with defaults applied. */
export type SchemeConfig = { [K in SchemeType]: { readonly type: K } & OptionsOf<SpecsOf<K>> }[SchemeType];
/** A source's `scheme` as written in hookledger.config.ts. */
export type SchemeConfigInput = { [K in SchemeType]: { readonly type: K } & OptionsInputOf<SpecsOf<K>> }[SchemeType];

export const SCHEME_TYPES = Object.keys(SCHEMES) as SchemeType[];

function schemeOf(config: Pick<SchemeConfig, 'type'>): Scheme<OptionSpecs> {
  const scheme = (SCHEMES as Record<string, Scheme<OptionSpecs> | undefined>)[config.type];
  if (!scheme) throw new ConfigurationError(`unknown scheme type "${config.type}"; set scheme.type to one of: ${SCHEME_TYPES.join(', ')}`);
  return scheme;
}

/** The options with every declared default filled in (see optionsWithDefaults). */
function optionsOf(config: SchemeConfigInput): OptionsOf<OptionSpecs> {
  return optionsWithDefaults(schemeOf(config), config);
}

/** Every scheme, for callers that may meet any (the CLI, the local stack, tests); intake's bundle holds only its own (./bundled). */
export const ALL_SCHEMES: SchemeSet = schemeSet((type) => schemeOf({ type } as Pick<SchemeConfig, 'type'>));

/** The verifier for a source's configured scheme. */
export function verifierFor(config: SchemeConfigInput): Verifier {
  return ALL_SCHEMES.verifierFor(config);
}

/** The headers a provider using this scheme would send with `input.body`. */
export function signatureHeaders(config: SchemeConfigInput, input: SignInput): Record<string, string> {
  return schemeOf(config).sign(optionsOf(config), input);
}

/**
 * The body as the provider sends it: schemes that sign inside the body (Mailgun, Microsoft Graph's
 * clientState) put their signature there; for every other scheme it is `input.body` unchanged.
 */
export function signedBody(config: SchemeConfigInput, input: SignInput): Buffer {
  const scheme = schemeOf(config);
  return scheme.signBody ? scheme.signBody(optionsOf(config), input) : input.body;
}

/** The key a request names, for schemes whose keys are fetched (jwks); undefined for every other scheme. */
export function keyRequestFor(config: SchemeConfigInput, input: VerifyInput): KeyRequest | undefined {
  return ALL_SCHEMES.keyRequestFor(config, input);
}

/** What a scheme's signature covers (for some schemes, which headers depends on the options). */
export function signedParts(config: SchemeConfigInput): SignedParts {
  const parts = schemeOf(config).signedParts;
  return typeof parts === 'function' ? parts(optionsOf(config)) : parts;
}

/** The body format of a scheme's requests when the source does not declare one (see SchemeSet.bodyFormat). */
export function schemeBodyFormat(config: SchemeConfigInput): { readonly format: BodyFormat; readonly fixed: boolean } {
  return ALL_SCHEMES.bodyFormat(config);
}

/** The handshake the scheme itself declares (Slack's url_verification), or undefined. */
export function schemeHandshake(config: SchemeConfigInput): Handshake | undefined {
  return schemeOf(config).handshake;
}

/** Any non-empty text: the secret of a scheme that says nothing more (its HMAC key is the text's bytes). */
const ANY_TEXT: SecretSpec = {
  generated: 'whsec',
  expected: 'the signing secret (non-empty text)',
  usable: (value) => value.length > 0,
};

/** What a source's secret is under its scheme: whether a generated one works, and how a given one is checked. */
export function secretSpec(config: SchemeConfigInput): SecretSpec {
  const spec = schemeOf(config).secret;
  if (spec === undefined) return ANY_TEXT;
  return typeof spec === 'function' ? spec(optionsOf(config)) : spec;
}

/** The options a scheme accepts beside `type` (the config schema validates them). */
export function schemeOptions(type: SchemeType): OptionSpecs {
  return SCHEMES[type].options;
}

export { SigningSecretError } from './crypto';
export type { SchemeSet } from './set';
export type {
  JsonWebKey,
  KeyRequest,
  SecretSpec,
  SignedParts,
  SignInput,
  SigningSecrets,
  VerificationKeysPort,
  Verifier,
  VerifyFailureCode,
  VerifyInput,
  VerifyResult,
} from './types';
