/**
 * The Stripe-style family: one header of `key=value` items holding a timestamp and one or more
 * signatures (`t=1700000000,v1=<hex>`), HMAC over a template of the timestamp and the body
 * (`{t}.{body}`). WorkOS, Mux, Paddle (`ts=..;h1=..`, `{t}:{body}`), Sanity, ElevenLabs and others
 * differ only in the names, separators and encodings below.
 */
import { createHmac } from 'node:crypto';
import { decodeSignature, headerValue, malformedHeader, missingHeader, outOfTolerance, rejected, verifyHmac } from './crypto';
import { compileTemplate, formatTimestamp, parseTimestamp, renderTemplate, templateHeaders } from './template';
import type { OptionsOf, Scheme, SignedParts, Verifier } from './types';

const OPTIONS = {
  header: { kind: 'header' },
  timestampKey: { kind: 'text', default: 't' },
  signatureKey: { kind: 'text', default: 'v1' },
  /** Between items: ',' (Stripe) or ';' (Paddle). */
  separator: { kind: 'text', default: ',' },
  content: { kind: 'template', default: '{t}.{body}' },
  algorithm: { kind: 'enum', values: ['sha256', 'sha512'], default: 'sha256' },
  encoding: { kind: 'enum', values: ['hex', 'base64', 'base64url'], default: 'hex' },
  timestampFormat: { kind: 'enum', values: ['unix-s', 'unix-ms'], default: 'unix-s' },
} as const;

export type TimestampedHmacOptions = OptionsOf<typeof OPTIONS>;

function partsOf(options: TimestampedHmacOptions): SignedParts {
  const parts = compileTemplate(options.content);
  const headers = templateHeaders(parts);
  const signsT = parts.some((p) => p.kind === 't');
  const t = `the ${options.timestampKey}= timestamp of ${options.header}`;
  return {
    body: 'bytes',
    headers,
    summary: `the body${headers.map((h) => `, ${h}`).join('')}${signsT ? ` and ${t}` : ''}`,
    // The verifier checks t= against the tolerance whatever the template says; only `{t}` signs it.
    ...(signsT
      ? { timestamp: `${options.timestampKey}= of ${options.header}` }
      : {
          unsignedTimestamp: {
            option: 'content',
            message:
              `the timestamped-hmac content "${options.content}" does not sign ${t}, so a captured request re-sent later with a ` +
              `fresh ${options.timestampKey}= would pass the tolerance check; put {t} in content where the provider signs it ` +
              '(Stripe-style: "{t}.{body}")',
          },
        }),
  };
}

export function timestampedHmacVerifier(options: TimestampedHmacOptions): Verifier {
  const header = options.header.toLowerCase();
  const parts = compileTemplate(options.content);
  return {
    verify(input, secrets) {
      const value = headerValue(input, header);
      if (value === undefined) return missingHeader(header);
      let timestamp: string | undefined;
      const candidates: Buffer[] = [];
      for (const item of value.split(options.separator)) {
        const equals = item.indexOf('=');
        if (equals <= 0) return malformedHeader(header, 'has an item that is not key=value');
        const key = item.slice(0, equals).trim();
        const text = item.slice(equals + 1).trim();
        if (key === options.timestampKey) {
          if (timestamp !== undefined) return malformedHeader(header, `has more than one ${options.timestampKey}=`);
          timestamp = text;
        } else if (key === options.signatureKey) {
          const bytes = decodeSignature(text, options.encoding);
          if (!bytes) return malformedHeader(header, `has a ${options.signatureKey}= that is not ${options.encoding}`);
          candidates.push(bytes);
        }
      }
      if (timestamp === undefined) return malformedHeader(header, `has no ${options.timestampKey}= timestamp`);
      const seconds = parseTimestamp(timestamp, options.timestampFormat);
      if (seconds === undefined) return malformedHeader(header, `has a ${options.timestampKey}= that is not ${options.timestampFormat}`);
      if (candidates.length === 0) return malformedHeader(header, `has no ${options.signatureKey}= signature`);
      const content = renderTemplate(parts, { body: input.rawBody, headers: input.headers, url: input.url, t: timestamp });
      if (!Buffer.isBuffer(content)) {
        return content.missing.startsWith('header ')
          ? missingHeader(content.missing.slice('header '.length))
          : rejected('malformed_signature', `${content.missing} is not available to the verifier`);
      }
      const result = verifyHmac({ algorithm: options.algorithm, content, candidates, header }, secrets);
      if (!result.ok) return result;
      return outOfTolerance(header, seconds, input) ?? result;
    },
  };
}

export const timestampedHmac: Scheme<typeof OPTIONS> = {
  signedParts: partsOf,
  options: OPTIONS,
  verifier: timestampedHmacVerifier,
  sign(options, input) {
    const t = formatTimestamp(input.now, options.timestampFormat);
    const headers: Record<string, string> = {};
    const parts = compileTemplate(options.content);
    for (const name of templateHeaders(parts)) headers[name] = input.messageId;
    const content = renderTemplate(parts, { body: input.body, headers, url: input.url, t });
    if (!Buffer.isBuffer(content)) throw new TypeError(`cannot sign without ${content.missing}`);
    const mac = createHmac(options.algorithm, input.secret).update(content).digest(options.encoding);
    headers[options.header.toLowerCase()] = `${options.timestampKey}=${t}${options.separator}${options.signatureKey}=${mac}`;
    return headers;
  },
};
