/** Shopify: `x-shopify-hmac-sha256: <base64>` over the body, keyed with the app's client secret. */
import { hmacSign, hmacVerifier } from './hmac';
import type { Scheme } from './types';

const FIXED = { algorithm: 'sha256', encoding: 'base64', header: 'x-shopify-hmac-sha256', prefix: '' } as const;

export const shopifyVerifier = /* @__PURE__ */ hmacVerifier(FIXED);

export const shopify: Scheme = {
  signedParts: { body: 'bytes', headers: [], summary: 'the body only' },
  options: {},
  verifier: () => shopifyVerifier,
  sign: (_options, input) => hmacSign(FIXED, input),
};
