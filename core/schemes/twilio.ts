/**
 * Twilio: `x-twilio-signature: <base64>` HMAC-SHA1 (keyed with the auth token) over the full
 * request URL followed by every form parameter, sorted by name, as `name` + `value`. A JSON body is
 * signed through the URL instead: its `bodySHA256` query parameter must be the body's SHA-256 (hex).
 * A body that is neither form nor covered by bodySHA256 is refused: nothing would sign it.
 */
import { createHash, createHmac } from 'node:crypto';
import { constantTimeEqual, decodeSignature, headerValue, malformedHeader, missingHeader, rejected, verifyHmac } from './crypto';
import type { Scheme, VerifyInput, Verifier } from './types';

const SIGNATURE = 'x-twilio-signature';

/** `name` + `value` for every parameter, names sorted (code-unit order, as Twilio's libraries sort). */
export function twilioContent(url: string, form: URLSearchParams | undefined): Buffer {
  let text = url;
  if (form) {
    const names = [...new Set(form.keys())].sort();
    for (const name of names) for (const value of form.getAll(name).sort()) text += name + value;
  }
  return Buffer.from(text, 'utf8');
}

/** Twilio's libraries accept the URL with and without the scheme's default port; so does this. */
function urlVariants(url: string): string[] {
  const match = /^(https?:\/\/)([^/?#]+)(.*)$/i.exec(url);
  if (!match) return [url];
  const [, scheme = '', host = '', rest = ''] = match;
  const defaultPort = scheme.toLowerCase() === 'https://' ? '443' : '80';
  if (host.endsWith(`:${defaultPort}`)) return [url, `${scheme}${host.slice(0, -defaultPort.length - 1)}${rest}`];
  if (!/:\d+$/.test(host)) return [url, `${scheme}${host}:${defaultPort}${rest}`];
  return [url];
}

function searchParam(url: string, name: string): string | null {
  try {
    return new URL(url).searchParams.get(name);
  } catch {
    return null;
  }
}

const isForm = (input: VerifyInput): boolean =>
  (input.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded');

export const twilioVerifier: Verifier = {
  verify(input, secrets) {
    const value = headerValue(input, SIGNATURE);
    if (value === undefined) return missingHeader(SIGNATURE);
    const signature = decodeSignature(value, 'base64');
    if (!signature) return malformedHeader(SIGNATURE, 'is not base64');
    if (!input.url) return rejected('malformed_signature', 'the request URL is not available to the verifier');
    const bodyHash = searchParam(input.url, 'bodySHA256');
    let form: URLSearchParams | undefined;
    if (bodyHash !== null) {
      const actual = createHash('sha256').update(input.rawBody).digest();
      const claimed = decodeSignature(bodyHash, 'hex');
      if (!claimed || !constantTimeEqual(claimed, actual)) {
        return rejected('signature_mismatch', 'the body does not match the bodySHA256 parameter of the signed URL');
      }
    } else if (isForm(input)) {
      form = new URLSearchParams(input.rawBody.toString('utf8'));
    } else if (input.rawBody.length > 0) {
      return malformedHeader(SIGNATURE, 'covers no body: a non-form body needs bodySHA256 in the URL');
    }
    const candidates = [signature];
    for (const url of urlVariants(input.url)) {
      const result = verifyHmac({ algorithm: 'sha1', content: twilioContent(url, form), candidates, header: SIGNATURE }, secrets);
      if (result.ok) return result;
    }
    return rejected('signature_mismatch', `no signature in header ${SIGNATURE} matches the URL and body`);
  },
};

export const twilio: Scheme = {
  // The URL and every form parameter, sorted by name: every name and value is signed, but not their
  // order or encoding (`b=2&a=1` verifies for `a=1&b=2`, `%20` for `+`), so not the bytes. A JSON body
  // through bodySHA256 is exact, but the scheme accepts both, so it claims the weaker.
  signedParts: {
    body: 'canonical-params',
    headers: [],
    summary: 'the request URL and the form parameters as a sorted set (not their order or encoding), or a JSON body through bodySHA256',
  },
  options: {},
  verifier: () => twilioVerifier,
  /** Signs `input.body` as form parameters, or through bodySHA256 when `input.url` carries one. */
  sign(_options, input) {
    if (!input.url) throw new TypeError('a twilio signature needs the request URL');
    const hashed = searchParam(input.url, 'bodySHA256') !== null;
    const form = hashed ? undefined : new URLSearchParams(input.body.toString('utf8'));
    const mac = createHmac('sha1', input.secret).update(twilioContent(input.url, form)).digest('base64');
    return { [SIGNATURE]: mac, ...(hashed ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) };
  },
};
