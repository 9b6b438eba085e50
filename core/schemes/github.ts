/** GitHub: `x-hub-signature-256: sha256=<hex>` over the body. The legacy SHA-1 `x-hub-signature` is not accepted. */
import { hmacSign, hmacVerifier } from './hmac';
import type { Scheme } from './types';

const FIXED = { algorithm: 'sha256', encoding: 'hex', header: 'x-hub-signature-256', prefix: 'sha256=' } as const;

export const githubVerifier = /* @__PURE__ */ hmacVerifier(FIXED);

export const github: Scheme = {
  signedParts: { body: 'bytes', headers: [], summary: 'the body only' },
  options: {},
  verifier: () => githubVerifier,
  sign: (_options, input) => hmacSign(FIXED, input),
};
