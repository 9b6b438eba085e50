/**
 * JWT-signed webhooks (HS256): the signature is a JSON Web Token in one header whose claims hold a
 * hash of the body, so the body is signed through the token. Vonage (`Authorization: Bearer`,
 * `payload_hash` = SHA-256 hex) and Upstash QStash (`upstash-signature`, `body` = SHA-256
 * base64url, `iss: Upstash`, `sub` = the URL called) and MessageBird (`messagebird-signature-jwt`,
 * `iss: MessageBird`, `url_hash` = SHA-256 hex of the URL called). The token's `iat` (or, without it, `nbf`) is
 * the signed send time; an expired token (`exp`) is out of tolerance too.
 */
import { createHash, createHmac } from 'node:crypto';
import {
  ANY_TEXT_SECRET,
  constantTimeEqual,
  decodeSignature,
  headerValue,
  malformedHeader,
  missingHeader,
  outOfTolerance,
  readable,
  rejected,
  SigningSecretError,
  verifyHmac,
} from './crypto';
import type { OptionsOf, Scheme, Verifier } from './types';

const OPTIONS = {
  header: { kind: 'header' },
  /** Before the token (`Bearer `); '' for none. */
  prefix: { kind: 'text', default: '' },
  /** The claim holding the body's SHA-256. */
  bodyHashClaim: { kind: 'text', default: 'payload_hash' },
  bodyHashEncoding: { kind: 'enum', values: ['hex', 'base64url', 'base64'], default: 'hex' },
  /** When set, the `iss` claim must equal it. */
  issuer: { kind: 'text', default: '' },
  /** `yes`: the `sub` claim must be the URL called (QStash). */
  subjectIsUrl: { kind: 'enum', values: ['no', 'yes'], default: 'no' },
  /** When set, this claim must hold the SHA-256 hex of the URL called (MessageBird's `url_hash`). */
  urlHashClaim: { kind: 'text', default: '' },
  /**
   * `key:secret`: the source's secret is `<api key>:<api secret>` (LiveKit): the token is signed with
   * the api secret and its `iss` must be the api key.
   */
  secretFormat: { kind: 'enum', values: ['secret', 'key:secret'], default: 'secret' },
} as const;

export type JwtOptions = OptionsOf<typeof OPTIONS>;

interface Claims {
  readonly [claim: string]: unknown;
}

function decodeJson(part: string): Claims | undefined {
  const bytes = decodeSignature(part, 'base64url');
  if (!bytes) return undefined;
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Claims) : undefined;
  } catch {
    return undefined;
  }
}

const urlHash = (url: string): string => createHash('sha256').update(url, 'utf8').digest('hex');

const bodyHash = (body: Buffer, encoding: 'hex' | 'base64url' | 'base64'): string => createHash('sha256').update(body).digest(encoding);

/** The HMAC key and, for `key:secret`, the issuer the token must name. */
function splitSecret(secret: string, format: JwtOptions['secretFormat']): { readonly key: string; readonly issuer?: string } {
  if (format === 'secret') return { key: secret };
  const colon = secret.indexOf(':');
  if (colon <= 0 || colon === secret.length - 1) throw new SigningSecretError('signing secret is not <api key>:<api secret>');
  return { issuer: secret.slice(0, colon), key: secret.slice(colon + 1) };
}

export function jwtVerifier(options: JwtOptions): Verifier {
  const header = options.header.toLowerCase();
  return {
    verify(input, secrets) {
      const value = headerValue(input, header);
      if (value === undefined) return missingHeader(header);
      if (!value.startsWith(options.prefix)) return malformedHeader(header, `does not start with "${options.prefix}"`);
      const parts = value.slice(options.prefix.length).trim().split('.');
      if (parts.length !== 3) return malformedHeader(header, 'is not a JSON Web Token');
      const [head = '', body = '', mac = ''] = parts;
      const joseHeader = decodeJson(head);
      const claims = decodeJson(body);
      const signature = decodeSignature(mac, 'base64url');
      if (!joseHeader || !claims || !signature) return malformedHeader(header, 'is not a JSON Web Token');
      // Only HS256: a token naming another algorithm (`none`, RS256 with the secret as a "public key") is refused.
      if (joseHeader.alg !== 'HS256') return malformedHeader(header, 'is not an HS256 token');

      const content = Buffer.from(`${head}.${body}`, 'utf8');
      const keyOf = (secret: string) => Buffer.from(splitSecret(secret, options.secretFormat).key, 'utf8');
      const result = verifyHmac({ algorithm: 'sha256', content, candidates: [signature], header, keyOf }, secrets);
      if (!result.ok) return result;
      if (options.secretFormat === 'key:secret') {
        const used = result.secretVersion === 'previous' ? secrets.previous : secrets.current;
        if (used === undefined || claims.iss !== splitSecret(used, options.secretFormat).issuer) {
          return rejected('signature_mismatch', `the token in header ${header} was issued by another api key`);
        }
      }

      const claimed = claims[options.bodyHashClaim];
      const actual = Buffer.from(bodyHash(input.rawBody, options.bodyHashEncoding).replace(/=+$/, ''), 'utf8');
      const expected = typeof claimed === 'string' ? Buffer.from(claimed.replace(/=+$/, ''), 'utf8') : undefined;
      if (!expected || !constantTimeEqual(expected, actual)) {
        return rejected(
          'signature_mismatch',
          `the body does not match the ${options.bodyHashClaim} claim of the token in header ${header}`,
        );
      }
      if (options.issuer && claims.iss !== options.issuer)
        return rejected('signature_mismatch', `the token in header ${header} has another issuer`);
      if (options.subjectIsUrl === 'yes' && claims.sub !== input.url) {
        return rejected('signature_mismatch', `the token in header ${header} was issued for another URL`);
      }
      if (options.urlHashClaim) {
        const claimedUrl = claims[options.urlHashClaim];
        const expectedUrl = input.url === undefined ? undefined : Buffer.from(urlHash(input.url), 'utf8');
        if (
          typeof claimedUrl !== 'string' ||
          !expectedUrl ||
          !constantTimeEqual(Buffer.from(claimedUrl.toLowerCase(), 'utf8'), expectedUrl)
        ) {
          return rejected('signature_mismatch', `the token in header ${header} was issued for another URL`);
        }
      }
      const now = Math.floor(input.now / 1000);
      if (typeof claims.exp === 'number' && now > claims.exp + input.toleranceSeconds) {
        return rejected('timestamp_out_of_tolerance', `the token in header ${header} expired ${now - claims.exp} s ago`);
      }
      const sent = typeof claims.iat === 'number' ? claims.iat : typeof claims.nbf === 'number' ? claims.nbf : undefined;
      if (sent === undefined) return malformedHeader(header, 'has a token without iat or nbf');
      return outOfTolerance(header, sent, input) ?? result;
    },
  };
}

export const jwt: Scheme<typeof OPTIONS> = {
  signedParts: (options) => ({
    body: 'bytes',
    headers: [],
    summary:
      `the body (its SHA-256 in the ${options.bodyHashClaim} claim of the token in ${options.header})` +
      (options.subjectIsUrl === 'yes' || options.urlHashClaim ? ', the request URL' : ''),
    timestamp: `iat of the token in ${options.header}`,
  }),
  options: OPTIONS,
  secret: (options) =>
    options.secretFormat === 'key:secret'
      ? {
          generated: false,
          expected: "<api key>:<api secret>, the provider's API key and secret",
          usable: (value) => readable(() => splitSecret(value, options.secretFormat)),
        }
      : ANY_TEXT_SECRET,
  verifier: jwtVerifier,
  sign(options, input) {
    const { key, issuer } = splitSecret(input.secret, options.secretFormat);
    const iat = Math.floor(input.now / 1000);
    const claims: Record<string, unknown> = {
      iat,
      nbf: iat,
      exp: iat + 300,
      jti: input.messageId,
      [options.bodyHashClaim]: bodyHash(input.body, options.bodyHashEncoding),
      ...(options.issuer ? { iss: options.issuer } : {}),
      ...(issuer ? { iss: issuer } : {}),
      ...(options.subjectIsUrl === 'yes' && input.url ? { sub: input.url } : {}),
      ...(options.urlHashClaim && input.url ? { [options.urlHashClaim]: urlHash(input.url) } : {}),
    };
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
    const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(claims)}`;
    const mac = createHmac('sha256', key).update(unsigned).digest('base64url');
    return { [options.header.toLowerCase()]: `${options.prefix}${unsigned}.${mac}` };
  },
};
