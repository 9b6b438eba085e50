/**
 * JWT-signed webhooks whose keys are fetched by key id (Plaid): the `plaid-verification` header is
 * an ES256 JSON Web Token; its header's `kid` names a public key (JWK) served by the provider's key
 * endpoint (Plaid: POST /webhook_verification_key/get with the client id and secret); its
 * `request_body_sha256` claim is the SHA-256 (hex) of the body and its `iat` the send time, at most
 * the source's tolerance (Plaid: 5 minutes) old.
 *
 * Verifiers are synchronous: intake reads `keyRequest` first, fetches the key through its cached key
 * port (adapters/verification-keys.ts) and passes it in `VerifyInput.publicKeys`. The source's
 * secret is what the key endpoint authenticates with (Plaid: `<client_id>:<secret>`); to sign (tests,
 * `hookledger send`) it is a P-256 private key, PKCS#8 DER in base64, whose key id is its RFC 7638
 * thumbprint. https://plaid.com/docs/api/webhooks/webhook-verification/
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign as signBytes, verify as verifySignature } from 'node:crypto';
import {
  accepted,
  constantTimeEqual,
  decodeSignature,
  headerValue,
  malformedHeader,
  missingHeader,
  outOfTolerance,
  rejected,
  SigningSecretError,
} from './crypto';
import type { JsonWebKey, KeyRequest, OptionsOf, Scheme, Verifier, VerifyInput } from './types';

const OPTIONS = {
  header: { kind: 'header' },
  /** The claim holding the body's SHA-256 (hex). */
  bodyHashClaim: { kind: 'text', default: 'request_body_sha256' },
  /** Where keys are fetched by kid (the key port POSTs `{ client_id, secret, key_id }` there). */
  keysUrl: { kind: 'text', default: 'https://production.plaid.com/webhook_verification_key/get' },
} as const;

export type JwksOptions = OptionsOf<typeof OPTIONS>;

const KID = /^[A-Za-z0-9._:-]{1,128}$/;

interface Token {
  readonly head: string;
  readonly payload: string;
  readonly signature: Buffer;
  readonly header: Record<string, unknown>;
  readonly claims: Record<string, unknown>;
}

function decodeJson(part: string): Record<string, unknown> | undefined {
  const bytes = decodeSignature(part, 'base64url');
  if (!bytes) return undefined;
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function readToken(input: VerifyInput, header: string): Token | string {
  const value = headerValue(input, header);
  if (value === undefined) return 'missing';
  const parts = value.split('.');
  if (parts.length !== 3) return 'is not a JSON Web Token';
  const [head = '', payload = '', mac = ''] = parts;
  const joseHeader = decodeJson(head);
  const claims = decodeJson(payload);
  const signature = decodeSignature(mac, 'base64url');
  if (!joseHeader || !claims || !signature) return 'is not a JSON Web Token';
  return { head, payload, signature, header: joseHeader, claims };
}

/** The key id of an ES256 token, or undefined for anything else (the verifier says why). */
function kidOf(token: Token): string | undefined {
  const kid = token.header.kid;
  return token.header.alg === 'ES256' && typeof kid === 'string' && KID.test(kid) ? kid : undefined;
}

function publicKeyOf(jwk: JsonWebKey): KeyObject | undefined {
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256') return undefined;
  try {
    const { kty, crv, x, y } = jwk;
    return createPublicKey({ key: { kty, crv, x, y } as import('node:crypto').JsonWebKey, format: 'jwk' });
  } catch {
    return undefined;
  }
}

export function jwksVerifier(options: JwksOptions): Verifier {
  const header = options.header.toLowerCase();
  return {
    verify(input) {
      const token = readToken(input, header);
      if (token === 'missing') return missingHeader(header);
      if (typeof token === 'string') return malformedHeader(header, token);
      // Only ES256 with a key id: `none`, HS256 (a public key used as an HMAC secret) and others are refused.
      if (token.header.alg !== 'ES256') return malformedHeader(header, 'is not an ES256 token');
      const kid = kidOf(token);
      if (kid === undefined) return malformedHeader(header, 'has no usable kid');
      const jwk = input.publicKeys?.[kid];
      if (!jwk) return rejected('signature_mismatch', `the key endpoint knows no key ${kid}`);
      const now = Math.floor(input.now / 1000);
      if (typeof jwk.expired_at === 'number' && jwk.expired_at <= now) {
        return rejected('signature_mismatch', `key ${kid} expired ${now - jwk.expired_at} s ago`);
      }
      const key = publicKeyOf(jwk);
      if (!key) return rejected('signature_mismatch', `key ${kid} is not an EC P-256 key`);
      const content = Buffer.from(`${token.head}.${token.payload}`, 'utf8');
      const verified =
        token.signature.length === 64 && verifySignature('sha256', content, { key, dsaEncoding: 'ieee-p1363' }, token.signature);
      if (!verified) return rejected('signature_mismatch', `the token in header ${header} does not verify with key ${kid}`);

      const claimed = token.claims[options.bodyHashClaim];
      const actual = Buffer.from(createHash('sha256').update(input.rawBody).digest('hex'), 'utf8');
      if (typeof claimed !== 'string' || !constantTimeEqual(Buffer.from(claimed.toLowerCase(), 'utf8'), actual)) {
        return rejected(
          'signature_mismatch',
          `the body does not match the ${options.bodyHashClaim} claim of the token in header ${header}`,
        );
      }
      const iat = token.claims.iat;
      if (typeof iat !== 'number' || !Number.isSafeInteger(iat)) return malformedHeader(header, 'has a token without iat');
      return outOfTolerance(`iat of ${header}`, iat, input) ?? accepted('current');
    },
  };
}

/** The public JWK of a base64 PKCS#8 P-256 private key, with its RFC 7638 thumbprint as kid. */
export function publicJwkOf(privateKeyBase64: string): JsonWebKey & { readonly kid: string } {
  const jwk = createPublicKey(privateKeyOf(privateKeyBase64)).export({ format: 'jwk' }) as {
    kty: string;
    crv: string;
    x: string;
    y: string;
  };
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, alg: 'ES256', use: 'sig', kid: jwkThumbprint(jwk), expired_at: null };
}

/** RFC 7638: SHA-256 over the required members in lexicographic order, base64url. */
export const jwkThumbprint = (jwk: { crv: string; kty: string; x: string; y: string }): string =>
  createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
    .digest('base64url');

function privateKeyOf(text: string): KeyObject {
  try {
    return createPrivateKey({ key: Buffer.from(text, 'base64'), format: 'der', type: 'pkcs8' });
  } catch {
    throw new SigningSecretError('the jwks signing key is not base64 DER (PKCS#8)');
  }
}

export const jwks: Scheme<typeof OPTIONS> = {
  signedParts: (options) => ({
    body: 'bytes',
    headers: [],
    summary: `the body (its SHA-256 in the ${options.bodyHashClaim} claim of the ES256 token in ${options.header}; key fetched by kid)`,
    timestamp: `iat of the token in ${options.header}`,
  }),
  options: OPTIONS,
  // What the key endpoint authenticates with: the provider's API credentials, never a generated value.
  secret: {
    generated: false,
    expected: '<client_id>:<secret>, the credentials the key endpoint authenticates',
    usable: (value) => {
      const colon = value.indexOf(':');
      return colon > 0 && colon < value.length - 1 && !/\s/.test(value);
    },
  },
  verifier: jwksVerifier,
  keyRequest(options, input): KeyRequest | undefined {
    const token = readToken(input, options.header.toLowerCase());
    if (typeof token === 'string') return undefined;
    const kid = kidOf(token);
    return kid === undefined ? undefined : { kid, url: options.keysUrl };
  },
  sign(options, input) {
    const key = privateKeyOf(input.secret);
    const { kid } = publicJwkOf(input.secret);
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
    const claims = { iat: Math.floor(input.now / 1000), [options.bodyHashClaim]: createHash('sha256').update(input.body).digest('hex') };
    const unsigned = `${encode({ alg: 'ES256', kid, typ: 'JWT' })}.${encode(claims)}`;
    const signature = signBytes('sha256', Buffer.from(unsigned, 'utf8'), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    return { [options.header.toLowerCase()]: `${unsigned}.${signature}` };
  },
};
