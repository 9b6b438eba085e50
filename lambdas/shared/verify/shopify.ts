/** Shopify: `x-shopify-hmac-sha256: <base64>` over the body, keyed with the app's client secret. */
import { hmacVerifier } from './hmac';

export const shopifyVerifier = hmacVerifier({
  algorithm: 'sha256',
  encoding: 'base64',
  header: 'x-shopify-hmac-sha256',
  prefix: '',
});
