/**
 * Intake's schemes as bundled. In the sources (the local stack, tests) every scheme; in a Lambda bundle
 * only those the configuration's sources name: the stack's bundling defines
 * `process.env.HOOKLEDGER_BUNDLED_SCHEME_<TYPE>` as "true" or "false" per scheme type (bundledDefines in
 * lib/constructs/hookledger-function.ts, from the very configuration it inlines), esbuild folds each
 * line below to the scheme or to `undefined`, and the schemes no line keeps are left out of the bundle:
 * a cold start compiles one or two scheme modules, not nineteen, with no `import()` to wait for.
 */

import { ConfigurationError } from '../errors';
import { clientState } from './client-state';
import { ed25519 } from './ed25519';
import { github } from './github';
import { hmac } from './hmac';
import { hmacTemplate } from './hmac-template';
import { hygraph } from './hygraph';
import type { SchemeType } from './index';
import { jwks } from './jwks';
import { jwt } from './jwt';
import { mailgun } from './mailgun';
import { secretDigest } from './secret-digest';
import { sendgrid } from './sendgrid';
import { type SchemeSet, schemeSet } from './set';
import { sharedSecret } from './shared-secret';
import { shopify } from './shopify';
import { slack } from './slack';
import { standardWebhooks } from './standard-webhooks';
import { standardWebhooksV1a } from './standard-webhooks-v1a';
import { stripe } from './stripe';
import { timestampedHmac } from './timestamped-hmac';
import { twilio } from './twilio';
import type { OptionSpecs, Scheme } from './types';

/** Each scheme type's module, or undefined where the bundle left it out (the type makes a missing line a compile error). */
export const BUNDLED_SCHEMES: { readonly [K in SchemeType]: object | undefined } = {
  'standard-webhooks': process.env.HOOKLEDGER_BUNDLED_SCHEME_STANDARD_WEBHOOKS !== 'false' ? standardWebhooks : undefined,
  'standard-webhooks-v1a': process.env.HOOKLEDGER_BUNDLED_SCHEME_STANDARD_WEBHOOKS_V1A !== 'false' ? standardWebhooksV1a : undefined,
  stripe: process.env.HOOKLEDGER_BUNDLED_SCHEME_STRIPE !== 'false' ? stripe : undefined,
  github: process.env.HOOKLEDGER_BUNDLED_SCHEME_GITHUB !== 'false' ? github : undefined,
  shopify: process.env.HOOKLEDGER_BUNDLED_SCHEME_SHOPIFY !== 'false' ? shopify : undefined,
  slack: process.env.HOOKLEDGER_BUNDLED_SCHEME_SLACK !== 'false' ? slack : undefined,
  hmac: process.env.HOOKLEDGER_BUNDLED_SCHEME_HMAC !== 'false' ? hmac : undefined,
  'hmac-template': process.env.HOOKLEDGER_BUNDLED_SCHEME_HMAC_TEMPLATE !== 'false' ? hmacTemplate : undefined,
  'timestamped-hmac': process.env.HOOKLEDGER_BUNDLED_SCHEME_TIMESTAMPED_HMAC !== 'false' ? timestampedHmac : undefined,
  ed25519: process.env.HOOKLEDGER_BUNDLED_SCHEME_ED25519 !== 'false' ? ed25519 : undefined,
  twilio: process.env.HOOKLEDGER_BUNDLED_SCHEME_TWILIO !== 'false' ? twilio : undefined,
  sendgrid: process.env.HOOKLEDGER_BUNDLED_SCHEME_SENDGRID !== 'false' ? sendgrid : undefined,
  jwt: process.env.HOOKLEDGER_BUNDLED_SCHEME_JWT !== 'false' ? jwt : undefined,
  jwks: process.env.HOOKLEDGER_BUNDLED_SCHEME_JWKS !== 'false' ? jwks : undefined,
  mailgun: process.env.HOOKLEDGER_BUNDLED_SCHEME_MAILGUN !== 'false' ? mailgun : undefined,
  'shared-secret': process.env.HOOKLEDGER_BUNDLED_SCHEME_SHARED_SECRET !== 'false' ? sharedSecret : undefined,
  'client-state': process.env.HOOKLEDGER_BUNDLED_SCHEME_CLIENT_STATE !== 'false' ? clientState : undefined,
  'secret-digest': process.env.HOOKLEDGER_BUNDLED_SCHEME_SECRET_DIGEST !== 'false' ? secretDigest : undefined,
  hygraph: process.env.HOOKLEDGER_BUNDLED_SCHEME_HYGRAPH !== 'false' ? hygraph : undefined,
};

/** The define name that keeps (`"true"`) or leaves out (`"false"`) a scheme type's module in a bundle. */
export function bundledSchemeFlag(type: string): string {
  return `process.env.HOOKLEDGER_BUNDLED_SCHEME_${type.toUpperCase().replaceAll('-', '_')}`;
}

/** The schemes this bundle holds; asking for another names it and those held (a bundle built for another configuration). */
export function bundledSchemes(): SchemeSet {
  const held = Object.entries(BUNDLED_SCHEMES).filter(([, scheme]) => scheme !== undefined);
  const byType = new Map(held as [string, Scheme<OptionSpecs>][]);
  return schemeSet((type) => {
    const scheme = byType.get(type);
    if (!scheme) {
      throw new ConfigurationError(
        `scheme "${type}" is not in this bundle; bundled: ${[...byType.keys()].join(', ') || 'none'} ` +
          '(a bundle built for another configuration: synthesize and deploy again with the configuration it runs)',
      );
    }
    return scheme;
  });
}
