/**
 * ed25519 signatures over a template of a timestamp header and the body: Discord interactions
 * (`x-signature-ed25519`, hex, over `{timestamp}{body}`), Telnyx (`telnyx-signature-ed25519`,
 * base64, over `{timestamp}|{body}`). The source's secret is the provider's public key.
 */
import { sign as signBytes } from 'node:crypto';
import { decodeSignature, headerValue, malformedHeader, missingHeader, outOfTolerance } from './crypto';
import { ed25519PrivateKey, ed25519PublicKey, ed25519Secret, ed25519Verifies, verifyWithKeys } from './keys';
import { compileTemplate, formatTimestamp, readTemplatedRequest, renderTemplate, templateHeaders, templateTimestamp } from './template';
import type { OptionsOf, Scheme, Verifier } from './types';

const OPTIONS = {
  header: { kind: 'header' },
  encoding: { kind: 'enum', values: ['hex', 'base64'], default: 'hex' },
  content: { kind: 'template', default: '{header:x-signature-timestamp}{body}' },
  /** The header holding the send time; it must be named in `content` (config refuses it otherwise); '' for none. */
  timestampHeader: { kind: 'text', default: 'x-signature-timestamp' },
  timestampFormat: { kind: 'enum', values: ['unix-s', 'unix-ms', 'iso8601'], default: 'unix-s' },
  /** How the public key (and, to sign, the private key) is written. */
  keyEncoding: { kind: 'enum', values: ['hex', 'base64'], default: 'hex' },
} as const;

export type Ed25519Options = OptionsOf<typeof OPTIONS>;

export function ed25519Verifier(options: Ed25519Options): Verifier {
  const parts = compileTemplate(options.content);
  const header = options.header.toLowerCase();
  const timestampHeader = options.timestampHeader.toLowerCase();
  return {
    verify(input, secrets) {
      const value = headerValue(input, header);
      if (value === undefined) return missingHeader(header);
      const signature = decodeSignature(value, options.encoding);
      if (!signature) return malformedHeader(header, `is not ${options.encoding}`);
      const request = readTemplatedRequest(input, parts, timestampHeader, options.timestampFormat);
      if (!('content' in request)) return request;
      const { content, seconds } = request;
      const keyOf = (secret: string) => ed25519PublicKey(secret, options.keyEncoding);
      const result = verifyWithKeys(secrets, keyOf, (key) => ed25519Verifies(key, content, signature), header);
      if (!result.ok || seconds === undefined) return result;
      return outOfTolerance(timestampHeader, seconds, input) ?? result;
    },
  };
}

export const ed25519: Scheme<typeof OPTIONS> = {
  signedParts: (options) => {
    const parts = compileTemplate(options.content);
    const headers = templateHeaders(parts);
    return {
      body: 'bytes',
      headers,
      summary: `the body${headers.map((h) => `, ${h}`).join('')}`,
      ...templateTimestamp('ed25519', options.content, parts, options.timestampHeader),
    };
  },
  options: OPTIONS,
  secret: (options) => ed25519Secret(options.keyEncoding, `the provider's ed25519 public key (32 bytes, ${options.keyEncoding})`),
  verifier: ed25519Verifier,
  /** `input.secret` is the private key (32-byte seed) in `keyEncoding`. */
  sign(options, input) {
    const parts = compileTemplate(options.content);
    const headers: Record<string, string> = {};
    const timestampHeader = options.timestampHeader.toLowerCase();
    if (timestampHeader) headers[timestampHeader] = formatTimestamp(input.now, options.timestampFormat);
    for (const name of templateHeaders(parts)) headers[name] ??= input.messageId;
    const content = renderTemplate(parts, { body: input.body, headers, url: input.url });
    if (!Buffer.isBuffer(content)) throw new TypeError(`cannot sign without ${content.missing}`);
    const signature = signBytes(null, content, ed25519PrivateKey(input.secret, options.keyEncoding));
    headers[options.header.toLowerCase()] = signature.toString(options.encoding);
    return headers;
  },
};
