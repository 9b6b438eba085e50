/** GitHub: `x-hub-signature-256: sha256=<hex>` over the body. The legacy SHA-1 `x-hub-signature` is not accepted. */
import { hmacVerifier } from './hmac';

export const githubVerifier = hmacVerifier({
  algorithm: 'sha256',
  encoding: 'hex',
  header: 'x-hub-signature-256',
  prefix: 'sha256=',
});
