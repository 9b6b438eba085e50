/**
 * What each verification scheme's signature covers. Intake may read attribution only from signed
 * parts: a value from an unsigned header can be changed on a captured request without breaking its
 * signature (see README "Threat model at the door"). Pure data, shared by the config validation and
 * the verifiers' tests, which prove each entry (changing a listed header breaks the signature;
 * changing any other header does not).
 */
import type { VerificationScheme } from './schema';

export interface SignedParts {
  /** Every scheme signs the exact body bytes. */
  readonly body: true;
  /** Request headers (lower-case) whose values are inside the signed content. */
  readonly headers: readonly string[];
  /** Said in errors and docs. */
  readonly summary: string;
}

export const SIGNED_PARTS: Readonly<Record<VerificationScheme['type'], SignedParts>> = {
  'standard-webhooks': {
    body: true,
    headers: ['webhook-id', 'webhook-timestamp'],
    summary: 'the body, webhook-id and webhook-timestamp',
  },
  // `t` sits inside the stripe-signature header next to the signatures: no header as a whole is signed.
  stripe: { body: true, headers: [], summary: 'the body and the t= timestamp of stripe-signature' },
  github: { body: true, headers: [], summary: 'the body only' },
  shopify: { body: true, headers: [], summary: 'the body only' },
  slack: { body: true, headers: ['x-slack-request-timestamp'], summary: 'the body and x-slack-request-timestamp' },
  hmac: { body: true, headers: [], summary: 'the body only' },
};

export function signedParts(scheme: Pick<VerificationScheme, 'type'>): SignedParts {
  return SIGNED_PARTS[scheme.type];
}
