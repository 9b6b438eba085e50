/**
 * Signed-content templates: how the generic schemes (hmac-template, timestamped-hmac, ed25519) say
 * which bytes a provider signs, as data a catalog entry can hold. `{body}` is the body exactly as
 * received, `{url}` the full request URL, `{t}` the timestamp of a `t=...,v1=...` header,
 * `{header:name}` a request header's value; everything else is literal text.
 */
import { headerValue, malformedHeader, missingHeader, rejected, SigningSecretError } from './crypto';
import type { SignedParts, VerifyInput, VerifyResult } from './types';

export type TemplatePart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'body' }
  | { readonly kind: 'url' }
  | { readonly kind: 't' }
  | { readonly kind: 'header'; readonly name: string };

const TOKEN = /\{([^{}]*)\}/g;

/** Undefined for a template with an unknown `{...}` or without `{body}` (every scheme signs the body). */
export function parseTemplate(template: string): TemplatePart[] | undefined {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const match of template.matchAll(TOKEN)) {
    if (match.index > last) parts.push({ kind: 'text', text: template.slice(last, match.index) });
    const token = match[1] ?? '';
    if (token === 'body' || token === 'url' || token === 't') parts.push({ kind: token });
    else if (/^header:[a-z0-9-]+$/.test(token)) parts.push({ kind: 'header', name: token.slice('header:'.length) });
    else return undefined;
    last = match.index + match[0].length;
  }
  if (last < template.length) parts.push({ kind: 'text', text: template.slice(last) });
  if (/[{}]/.test(parts.map((p) => (p.kind === 'text' ? p.text : '')).join(''))) return undefined;
  return parts.some((p) => p.kind === 'body') ? parts : undefined;
}

/** Parses a template known to be valid (the config schema checked it). */
export function compileTemplate(template: string): TemplatePart[] {
  const parts = parseTemplate(template);
  if (!parts) throw new SigningSecretError(`signed-content template "${template}" is not valid`);
  return parts;
}

export const templateHeaders = (parts: readonly TemplatePart[]): string[] => parts.flatMap((p) => (p.kind === 'header' ? [p.name] : []));

export const templateSignsUrl = (parts: readonly TemplatePart[]): boolean => parts.some((p) => p.kind === 'url');

/**
 * The send time of a template scheme with a `timestampHeader` option (hmac-template, ed25519,
 * secret-digest): signed only when the content names the header (`{header:<name>}`). Otherwise the
 * verifier would check a value whoever holds one request can rewrite, so it is declared unsigned and
 * the config refuses it.
 */
export function templateTimestamp(
  type: string,
  content: string,
  parts: readonly TemplatePart[],
  timestampHeader: string,
): Pick<SignedParts, 'timestamp' | 'unsignedTimestamp'> {
  const name = timestampHeader.toLowerCase();
  if (!name) return {};
  if (templateHeaders(parts).includes(name)) return { timestamp: name };
  return {
    unsignedTimestamp: {
      option: 'timestampHeader',
      message:
        `the ${type} content "${content}" does not sign header ${name}, so a captured request re-sent later with a fresh ` +
        `${name} would pass the tolerance check; add {header:${name}} to content where the provider signs it, or set ` +
        "timestampHeader: '' (no signed time: replay protection is then the event id alone)",
    },
  };
}

export interface TemplateValues {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  readonly url?: string;
  readonly t?: string;
}

/** The signed bytes, or the name of the part the request lacks. */
export function renderTemplate(parts: readonly TemplatePart[], values: TemplateValues): Buffer | { readonly missing: string } {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if (part.kind === 'body') chunks.push(values.body);
    else if (part.kind === 'text') chunks.push(Buffer.from(part.text, 'utf8'));
    else {
      const value = part.kind === 'url' ? values.url : part.kind === 't' ? values.t : values.headers[part.name]?.trim();
      if (!value)
        return { missing: part.kind === 'header' ? `header ${part.name}` : part.kind === 'url' ? 'the request URL' : 'timestamp' };
      chunks.push(Buffer.from(value, 'utf8'));
    }
  }
  return Buffer.concat(chunks);
}

/** `iso8601` without a zone is UTC (Orb); `http-date` is RFC 9110's IMF-fixdate (`Sun, 30 Nov 2026 08:00:00 GMT`). */
export type TimestampFormat = 'unix-s' | 'unix-ms' | 'iso8601' | 'http-date';

/** Whole seconds since the epoch, or undefined when the value is not in the format. */
export function parseTimestamp(value: string, format: TimestampFormat): number | undefined {
  if (format === 'iso8601') {
    const match = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)?$/.exec(value);
    if (!match) return undefined;
    const ms = Date.parse(`${value.replace(/(\.\d{3})\d+/, '$1')}${match[2] ? '' : 'Z'}`);
    return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
  }
  if (format === 'http-date') {
    if (!/^[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$/.test(value)) return undefined;
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
  }
  if (!/^\d{1,15}$/.test(value)) return undefined;
  return format === 'unix-ms' ? Math.floor(Number(value) / 1000) : Number(value);
}

export function formatTimestamp(now: number, format: TimestampFormat): string {
  if (format === 'unix-ms') return String(now);
  if (format === 'iso8601') return new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  if (format === 'http-date') return new Date(now).toUTCString();
  return String(Math.floor(now / 1000));
}

export type SecretEncoding = 'utf8' | 'base64' | 'hex';

/** The HMAC key of a secret as the provider reads it (most use the text's UTF-8 bytes). */
export function secretKey(secret: string, encoding: SecretEncoding): Buffer {
  if (encoding === 'utf8') return Buffer.from(secret, 'utf8');
  const key = Buffer.from(secret, encoding);
  if (
    key.length === 0 ||
    (encoding === 'hex'
      ? key.toString('hex') !== secret.toLowerCase()
      : key.toString('base64').replace(/=+$/, '') !== secret.replace(/=+$/, ''))
  ) {
    throw new SigningSecretError(`signing secret is not ${encoding}`);
  }
  return key;
}

/**
 * The bytes a template-signing scheme signs for this request, and its signed timestamp when it has
 * one (`timestampHeader` non-empty); or the refusal when a header is missing or malformed or a part
 * is not available. Shared by `hmac-template` and `ed25519`.
 */
export function readTemplatedRequest(
  input: VerifyInput,
  parts: readonly TemplatePart[],
  timestampHeader: string,
  timestampFormat: TimestampFormat,
): { readonly content: Buffer; readonly seconds?: number } | VerifyResult {
  let seconds: number | undefined;
  if (timestampHeader) {
    const timestamp = headerValue(input, timestampHeader);
    if (timestamp === undefined) return missingHeader(timestampHeader);
    seconds = parseTimestamp(timestamp, timestampFormat);
    if (seconds === undefined) return malformedHeader(timestampHeader, `is not a ${timestampFormat} timestamp`);
  }
  const content = renderTemplate(parts, { body: input.rawBody, headers: input.headers, url: input.url });
  if (!Buffer.isBuffer(content)) {
    return content.missing.startsWith('header ')
      ? missingHeader(content.missing.slice('header '.length))
      : rejected('malformed_signature', `${content.missing} is not available to the verifier`);
  }
  return seconds === undefined ? { content } : { content, seconds };
}
