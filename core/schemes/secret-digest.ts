/**
 * A plain digest of the signed content with the secret appended, not an HMAC: Cloudinary's
 * notification signature is `sha1(body + X-Cld-Timestamp + api_secret)` (or SHA-256) in hex in
 * `X-Cld-Signature`. The content is a signed-content template (./template.ts); the secret's
 * UTF-8 bytes follow it. Compared in constant time against each secret in rotation order.
 */
import { createHash } from 'node:crypto';
import {
  accepted,
  constantTimeEqual,
  decodeSignature,
  headerValue,
  malformedHeader,
  missingHeader,
  outOfTolerance,
  rejected,
} from './crypto';
import { compileTemplate, formatTimestamp, readTemplatedRequest, renderTemplate, templateHeaders, templateTimestamp } from './template';
import type { OptionsOf, Scheme, SignedParts, SigningSecrets, Verifier } from './types';

const OPTIONS = {
  /** The header carrying the hex digest. */
  header: { kind: 'header' },
  /** What is hashed before the secret; see ./template.ts. */
  content: { kind: 'template', default: '{body}{header:x-cld-timestamp}' },
  algorithm: { kind: 'enum', values: ['sha1', 'sha256'], default: 'sha1' },
  /**
   * A header holding the send time, checked against the source's tolerance; '' for none. It must be
   * signed: named in `content` as `{header:<name>}` (config refuses it otherwise).
   */
  timestampHeader: { kind: 'text', default: '' },
  timestampFormat: { kind: 'enum', values: ['unix-s', 'unix-ms'], default: 'unix-s' },
} as const;

export type SecretDigestOptions = OptionsOf<typeof OPTIONS>;

function partsOf(options: SecretDigestOptions): SignedParts {
  const parts = compileTemplate(options.content);
  const headers = templateHeaders(parts);
  return {
    body: 'bytes',
    headers,
    summary: headers.length > 0 ? `the body${headers.map((h) => `, ${h}`).join('')}` : 'the body only',
    ...templateTimestamp('secret-digest', options.content, parts, options.timestampHeader),
  };
}

const digest = (algorithm: SecretDigestOptions['algorithm'], content: Buffer, secret: string): Buffer =>
  createHash(algorithm).update(content).update(secret, 'utf8').digest();

function matching(algorithm: SecretDigestOptions['algorithm'], content: Buffer, candidate: Buffer, secrets: SigningSecrets) {
  if (constantTimeEqual(candidate, digest(algorithm, content, secrets.current))) return accepted('current');
  if (secrets.previous !== undefined && constantTimeEqual(candidate, digest(algorithm, content, secrets.previous))) {
    return accepted('previous');
  }
  return undefined;
}

export function secretDigestVerifier(options: SecretDigestOptions): Verifier {
  const header = options.header.toLowerCase();
  const parts = compileTemplate(options.content);
  const timestampHeader = options.timestampHeader.toLowerCase();
  return {
    verify(input, secrets) {
      const value = headerValue(input, header);
      if (value === undefined) return missingHeader(header);
      const candidate = decodeSignature(value, 'hex');
      if (!candidate) return malformedHeader(header, 'is not a hex digest');
      const request = readTemplatedRequest(input, parts, timestampHeader, options.timestampFormat);
      if (!('content' in request)) return request;
      const result = matching(options.algorithm, request.content, candidate, secrets);
      if (!result) return rejected('signature_mismatch', `the digest in header ${header} does not match the body`);
      if (request.seconds === undefined) return result;
      return outOfTolerance(timestampHeader, request.seconds, input) ?? result;
    },
  };
}

export const secretDigest: Scheme<typeof OPTIONS> = {
  signedParts: partsOf,
  options: OPTIONS,
  verifier: secretDigestVerifier,
  sign(options, input) {
    const parts = compileTemplate(options.content);
    const timestampHeader = options.timestampHeader.toLowerCase();
    const headers: Record<string, string> = {};
    if (timestampHeader) headers[timestampHeader] = formatTimestamp(input.now, options.timestampFormat);
    for (const name of templateHeaders(parts)) headers[name] ??= input.messageId;
    const content = renderTemplate(parts, { body: input.body, headers, url: input.url });
    if (!Buffer.isBuffer(content)) throw new TypeError(`cannot sign without ${content.missing}`);
    headers[options.header.toLowerCase()] = digest(options.algorithm, content, input.secret).toString('hex');
    return headers;
  },
};
