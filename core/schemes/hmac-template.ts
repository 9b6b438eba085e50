/**
 * The generic HMAC family: one signature header (optionally behind a prefix, optionally a list),
 * over a signed-content template (./template.ts) that names the body, the URL and the headers the
 * provider signs, with an optional timestamp header checked against the tolerance. Most providers
 * in core/providers/catalog.ts are this scheme with their own header names: Slack-style
 * `v0:{ts}:{body}`, Zoom, Twitch, Square's `{url}{body}`, and every plain HMAC over the body.
 */
import { createHmac } from 'node:crypto';
import {
  ANY_TEXT_SECRET,
  decodeSignature,
  headerValue,
  malformedHeader,
  missingHeader,
  outOfTolerance,
  readable,
  verifyHmac,
} from './crypto';
import {
  compileTemplate,
  formatTimestamp,
  readTemplatedRequest,
  renderTemplate,
  secretKey,
  templateHeaders,
  templateSignsUrl,
  templateTimestamp,
} from './template';
import type { OptionsOf, Scheme, SignedParts, Verifier } from './types';

const OPTIONS = {
  /** The header carrying the signature. */
  header: { kind: 'header' },
  /** What is signed; see ./template.ts. */
  content: { kind: 'template', default: '{body}' },
  algorithm: { kind: 'enum', values: ['sha256', 'sha512', 'sha1'], default: 'sha256' },
  encoding: { kind: 'enum', values: ['hex', 'base64', 'base64url'], default: 'hex' },
  /** Before each signature, case-sensitive (`sha256=`, `v0=`); '' for none. */
  prefix: { kind: 'text', default: '' },
  /** Splits a header carrying several signatures (PagerDuty's `v1=a,v1=b`); '' for one signature. */
  separator: { kind: 'text', default: '' },
  /**
   * A header holding the send time, checked against the source's tolerance; '' for none. It must be
   * signed: named in `content` as `{header:<name>}` (config refuses it otherwise).
   */
  timestampHeader: { kind: 'text', default: '' },
  timestampFormat: { kind: 'enum', values: ['unix-s', 'unix-ms', 'iso8601', 'http-date'], default: 'unix-s' },
  /** How the secret text becomes the HMAC key. */
  secretEncoding: { kind: 'enum', values: ['utf8', 'base64', 'hex'], default: 'utf8' },
} as const;

export type HmacTemplateOptions = OptionsOf<typeof OPTIONS>;

function partsOf(options: HmacTemplateOptions): SignedParts {
  const parts = compileTemplate(options.content);
  const headers = templateHeaders(parts);
  const url = templateSignsUrl(parts) ? ', the request URL' : '';
  return {
    body: 'bytes',
    headers,
    summary: headers.length > 0 || url ? `the body${url}${headers.map((h) => `, ${h}`).join('')}` : 'the body only',
    ...templateTimestamp('hmac-template', options.content, parts, options.timestampHeader),
  };
}

export function hmacTemplateVerifier(options: HmacTemplateOptions): Verifier {
  const header = options.header.toLowerCase();
  const parts = compileTemplate(options.content);
  const timestampHeader = options.timestampHeader.toLowerCase();
  return {
    verify(input, secrets) {
      const value = headerValue(input, header);
      if (value === undefined) return missingHeader(header);
      const pieces = options.separator ? value.split(options.separator).map((p) => p.trim()) : [value];
      const candidates: Buffer[] = [];
      for (const piece of pieces) {
        if (!piece.startsWith(options.prefix)) continue;
        const signature = decodeSignature(piece.slice(options.prefix.length), options.encoding);
        if (signature) candidates.push(signature);
      }
      if (candidates.length === 0) {
        return malformedHeader(header, `has no ${options.encoding} signature${options.prefix ? ` after "${options.prefix}"` : ''}`);
      }
      const request = readTemplatedRequest(input, parts, timestampHeader, options.timestampFormat);
      if (!('content' in request)) return request;
      const { content, seconds } = request;
      const keyOf = (secret: string) => secretKey(secret, options.secretEncoding);
      const result = verifyHmac({ algorithm: options.algorithm, content, candidates, header, keyOf }, secrets);
      if (!result.ok || seconds === undefined) return result;
      return outOfTolerance(timestampHeader, seconds, input) ?? result;
    },
  };
}

/** Signed headers other than the timestamp (delivery ids) carry the message id. */
export function hmacTemplateSign(
  options: HmacTemplateOptions,
  input: { readonly body: Buffer; readonly secret: string; readonly now: number; readonly messageId: string; readonly url?: string },
): Record<string, string> {
  const parts = compileTemplate(options.content);
  const timestampHeader = options.timestampHeader.toLowerCase();
  const headers: Record<string, string> = {};
  if (timestampHeader) headers[timestampHeader] = formatTimestamp(input.now, options.timestampFormat);
  for (const name of templateHeaders(parts)) headers[name] ??= input.messageId;
  const content = renderTemplate(parts, { body: input.body, headers, url: input.url });
  if (!Buffer.isBuffer(content)) throw new TypeError(`cannot sign without ${content.missing}`);
  const mac = createHmac(options.algorithm, secretKey(input.secret, options.secretEncoding)).update(content).digest(options.encoding);
  headers[options.header.toLowerCase()] = `${options.prefix}${mac}`;
  return headers;
}

export const hmacTemplate: Scheme<typeof OPTIONS> = {
  signedParts: partsOf,
  options: OPTIONS,
  // A key the provider issues in hex or base64 (Adyen, Onfleet) is no generated `whsec_` value.
  secret: (options) =>
    options.secretEncoding === 'utf8'
      ? ANY_TEXT_SECRET
      : {
          generated: false,
          expected: `the provider's HMAC key, in ${options.secretEncoding}`,
          usable: (value) => readable(() => secretKey(value, options.secretEncoding)),
        },
  verifier: hmacTemplateVerifier,
  sign: hmacTemplateSign,
};
