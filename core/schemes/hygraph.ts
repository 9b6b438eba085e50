/**
 * Hygraph (formerly GraphCMS): `gcms-signature: sign=<base64>, env=<environment>, t=<epoch ms>`, an
 * HMAC-SHA256 (key: the secret's UTF-8 bytes) over the JSON text
 * `{"Body":"<raw body>","EnvironmentName":"<env>","TimeStamp":<t>}` exactly as `JSON.stringify`
 * writes it, so the environment name and the timestamp are signed with the body. Proved against
 * `@hygraph/utils` (generateWebhookSignature / verifyWebhookSignature) in test/providers/sdk.test.ts.
 */
import { createHmac } from 'node:crypto';
import { decodeSignature, headerValue, malformedHeader, missingHeader, outOfTolerance, rejected, verifyHmac } from './crypto';
import type { Scheme, SignedParts } from './types';

const HEADER = 'gcms-signature';

const PARTS: SignedParts = {
  body: 'bytes',
  headers: [],
  summary: 'the body and the env= and t= of gcms-signature',
  timestamp: 't= of gcms-signature',
};

/** The bytes Hygraph signs: JSON.stringify of the body text, the environment and the timestamp. */
const signedContent = (body: string, environment: string, timestamp: number): Buffer =>
  Buffer.from(JSON.stringify({ Body: body, EnvironmentName: environment, TimeStamp: timestamp }), 'utf8');

/**
 * Hygraph signs the body as text. Decoded leniently, every invalid byte would become U+FFFD and
 * bodies differing only there would share one signature; decoded strictly, one text is one byte
 * string, so the signature covers the exact bytes (`body: 'bytes'`).
 */
const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export const hygraph: Scheme = {
  signedParts: PARTS,
  options: {},
  verifier: () => ({
    verify(input, secrets) {
      const value = headerValue(input, HEADER);
      if (value === undefined) return missingHeader(HEADER);
      const items = new Map<string, string>();
      for (const item of value.split(',')) {
        const equals = item.indexOf('=');
        if (equals <= 0) return malformedHeader(HEADER, 'has an item that is not key=value');
        const key = item.slice(0, equals).trim();
        if (items.has(key)) return malformedHeader(HEADER, `has more than one ${key}=`);
        items.set(key, item.slice(equals + 1).trim());
      }
      const signature = decodeSignature(items.get('sign') ?? '', 'base64');
      if (!signature) return malformedHeader(HEADER, 'has no base64 sign=');
      const environment = items.get('env');
      if (!environment) return malformedHeader(HEADER, 'has no env=');
      const t = items.get('t') ?? '';
      if (!/^\d{1,15}$/.test(t)) return malformedHeader(HEADER, 'has no t= timestamp in ms');
      const timestamp = Number(t);
      let text: string;
      try {
        text = utf8.decode(input.rawBody);
      } catch {
        return rejected('malformed_signature', 'the body is not UTF-8, and Hygraph signs the body as UTF-8 text');
      }
      const content = signedContent(text, environment, timestamp);
      const result = verifyHmac({ algorithm: 'sha256', content, candidates: [signature], header: HEADER }, secrets);
      if (!result.ok) return result;
      return outOfTolerance(HEADER, Math.floor(timestamp / 1000), input) ?? result;
    },
  }),
  sign(_options, input) {
    const environment = 'master';
    const mac = createHmac('sha256', input.secret)
      .update(signedContent(input.body.toString('utf8'), environment, input.now))
      .digest('base64');
    return { [HEADER]: `sign=${mac}, env=${environment}, t=${input.now}` };
  },
};
