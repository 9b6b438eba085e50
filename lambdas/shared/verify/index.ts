/** The verifier for a source's configured scheme. */
import type { VerificationScheme } from '../../../core/config/schema';
import { githubVerifier } from './github';
import { hmacVerifier } from './hmac';
import { shopifyVerifier } from './shopify';
import { slackVerifier } from './slack';
import { standardWebhooksVerifier } from './standard-webhooks';
import { stripeVerifier } from './stripe';
import type { Verifier } from './types';

export function verifierFor(scheme: VerificationScheme): Verifier {
  switch (scheme.type) {
    case 'standard-webhooks':
      return standardWebhooksVerifier;
    case 'stripe':
      return stripeVerifier;
    case 'github':
      return githubVerifier;
    case 'shopify':
      return shopifyVerifier;
    case 'slack':
      return slackVerifier;
    case 'hmac':
      return hmacVerifier(scheme);
  }
}

export { SigningSecretError } from './crypto';
export { githubVerifier } from './github';
export { type HmacOptions, hmacVerifier } from './hmac';
export { shopifyVerifier } from './shopify';
export { slackVerifier } from './slack';
export { standardWebhooksVerifier } from './standard-webhooks';
export { stripeVerifier } from './stripe';
export type { SigningSecrets, Verifier, VerifyFailureCode, VerifyInput, VerifyResult } from './types';
