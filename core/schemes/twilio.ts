/**
 * Twilio: `x-twilio-signature: <base64>` HMAC-SHA1 (keyed with the auth token) over the full
 * request URL followed by every form parameter, sorted by name, as `name` + `value`. A JSON body is
 * signed through the URL instead: its `bodySHA256` query parameter must be the body's SHA-256 (hex).
 * Which of the two is decided by the signed URL, never by the unsigned Content-Type; a JSON body on a
 * URL without bodySHA256 is refused: nothing would sign it.
 */
import { createHash, createHmac } from 'node:crypto';
import { constantTimeEqual, decodeSignature, headerValue, malformedHeader, missingHeader, rejected, verifyHmac } from './crypto';
import type { Scheme, Verifier } from './types';

const SIGNATURE = 'x-twilio-signature';

/**
 * `name` + `value` for every parameter, names sorted (code-unit order, as Twilio's libraries sort),
 * a repeated name's values sorted. One pass groups the parameters by name, so the cost is the sort
 * (n log n), never a scan of the whole form per name: this runs before any authentication.
 */
export function twilioParams(form: Iterable<[string, string]>): string {
  const byName = new Map<string, string[]>();
  for (const [name, value] of form) {
    const values = byName.get(name);
    if (values) values.push(value);
    else byName.set(name, [value]);
  }
  const parts: string[] = [];
  for (const name of [...byName.keys()].sort()) {
    const values = byName.get(name) as string[];
    if (values.length > 1) values.sort();
    for (const value of values) parts.push(name, value);
  }
  return parts.join('');
}

/** The signed text: the URL followed by the parameters (`twilioParams`), or the URL alone. */
export function twilioContent(url: string, params: string): Buffer {
  return Buffer.from(url + params, 'utf8');
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

/** A body whose first non-blank byte opens a JSON object or array: Twilio signs such a body only through bodySHA256. */
function looksLikeJson(raw: Buffer): boolean {
  for (const [i, byte] of raw.entries()) {
    if (i < 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) continue; // a UTF-8 byte-order mark
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue;
    return byte === 0x7b || byte === 0x5b;
  }
  return false;
}

export const twilioVerifier: Verifier = {
  verify(input, secrets) {
    const value = headerValue(input, SIGNATURE);
    if (value === undefined) return missingHeader(SIGNATURE);
    const signature = decodeSignature(value, 'base64');
    if (!signature) return malformedHeader(SIGNATURE, 'is not base64');
    if (!input.url) return rejected('malformed_signature', 'the request URL is not available to the verifier');
    // What is signed follows from the signed URL, never from the unsigned Content-Type: with
    // bodySHA256 the body's hash, otherwise the body's form parameters.
    const bodyHash = searchParam(input.url, 'bodySHA256');
    let params = '';
    if (bodyHash !== null) {
      const actual = createHash('sha256').update(input.rawBody).digest();
      const claimed = decodeSignature(bodyHash, 'hex');
      if (!claimed || !constantTimeEqual(claimed, actual)) {
        return rejected('signature_mismatch', 'the body does not match the bodySHA256 parameter of the signed URL');
      }
    } else if (looksLikeJson(input.rawBody)) {
      return malformedHeader(SIGNATURE, 'covers no body: a JSON body needs bodySHA256 in the URL');
    } else {
      params = twilioParams(new URLSearchParams(input.rawBody.toString('utf8')));
    }
    const candidates = [signature];
    for (const url of urlVariants(input.url)) {
      const result = verifyHmac({ algorithm: 'sha1', content: twilioContent(url, params), candidates, header: SIGNATURE }, secrets);
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
  // Form parameters, each signed; a JSON body (bodySHA256) needs `bodyFormat: 'json'` on the source.
  bodyFormat: 'form',
  verifier: () => twilioVerifier,
  /** Signs `input.body` as form parameters, or through bodySHA256 when `input.url` carries one. */
  sign(_options, input) {
    if (!input.url) throw new TypeError('a twilio signature needs the request URL');
    const hashed = searchParam(input.url, 'bodySHA256') !== null;
    const params = hashed ? '' : twilioParams(new URLSearchParams(input.body.toString('utf8')));
    const mac = createHmac('sha1', input.secret).update(twilioContent(input.url, params)).digest('base64');
    return { [SIGNATURE]: mac, ...(hashed ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) };
  },
};
