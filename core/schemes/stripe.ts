/** Stripe: `stripe-signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`, HMAC-SHA256 over `${t}.${body}`. */
import { createHmac } from 'node:crypto';
import {
  decodeSignature,
  headerValue,
  malformedHeader,
  missingHeader,
  outOfTolerance,
  parseUnixSeconds,
  signedContent,
  verifyHmac,
} from './crypto';
import type { Scheme, Verifier } from './types';

const SIGNATURE = 'stripe-signature';

interface StripeSignature {
  readonly timestamp: string;
  readonly seconds: number;
  readonly signatures: Buffer[];
}

/** The whole `whsec_...` string is the key, as Stripe's own libraries use it. */
export const stripeVerifier: Verifier = {
  verify(input, secrets) {
    const header = headerValue(input, SIGNATURE);
    if (header === undefined) return missingHeader(SIGNATURE);
    const parsed = parseStripeSignature(header);
    if (typeof parsed === 'string') return malformedHeader(SIGNATURE, parsed);

    const content = signedContent(`${parsed.timestamp}.`, input.rawBody);
    const result = verifyHmac({ algorithm: 'sha256', content, candidates: parsed.signatures, header: SIGNATURE }, secrets);
    if (!result.ok) return result;
    return outOfTolerance(SIGNATURE, parsed.seconds, input) ?? result;
  },
};

export const stripe: Scheme = {
  // `t` sits inside the stripe-signature header next to the signatures: no header as a whole is signed.
  signedParts: {
    body: 'bytes',
    headers: [],
    summary: 'the body and the t= timestamp of stripe-signature',
    timestamp: 't= of stripe-signature',
  },
  options: {},
  verifier: () => stripeVerifier,
  sign(_options, input) {
    const t = String(Math.floor(input.now / 1000));
    const v1 = createHmac('sha256', input.secret)
      .update(signedContent(`${t}.`, input.body))
      .digest('hex');
    return { [SIGNATURE]: `t=${t},v1=${v1}` };
  },
};

/** Comma-separated `key=value` pairs: one `t`, one or more `v1`; v0 (test-mode legacy) and unknown keys are skipped. */
function parseStripeSignature(header: string): StripeSignature | string {
  let timestamp: string | undefined;
  const signatures: Buffer[] = [];
  for (const item of header.split(',')) {
    const equals = item.indexOf('=');
    if (equals <= 0) return 'has an item that is not key=value';
    const key = item.slice(0, equals).trim();
    const value = item.slice(equals + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined) return 'has more than one t=';
      timestamp = value;
    } else if (key === 'v1') {
      const bytes = decodeSignature(value, 'hex');
      if (!bytes) return 'has a v1= value that is not hex';
      signatures.push(bytes);
    }
  }
  if (timestamp === undefined) return 'has no t= timestamp';
  const seconds = parseUnixSeconds(timestamp);
  if (seconds === undefined) return 'has a t= that is not unix seconds';
  if (signatures.length === 0) return 'has no v1= signature';
  return { timestamp, seconds, signatures };
}
