/**
 * SendGrid's signed event webhook: ECDSA P-256 / SHA-256 over `${timestamp}${body}`, the DER
 * signature base64 in `x-twilio-email-event-webhook-signature`, the timestamp (unix seconds) in
 * `x-twilio-email-event-webhook-timestamp`. The source's secret is the verification key SendGrid
 * shows (base64 DER SubjectPublicKeyInfo); to sign (tests, `send`) it is a PKCS#8 private key.
 */
import { createPrivateKey, sign as signBytes, verify as verifySignature } from 'node:crypto';
import {
  decodeSignature,
  headerValue,
  malformedHeader,
  missingHeader,
  outOfTolerance,
  parseUnixSeconds,
  SigningSecretError,
  signedContent,
} from './crypto';
import { spkiPublicKey, verifyWithKeys } from './keys';
import type { Scheme, Verifier } from './types';

const SIGNATURE = 'x-twilio-email-event-webhook-signature';
const TIMESTAMP = 'x-twilio-email-event-webhook-timestamp';

export const sendgridVerifier: Verifier = {
  verify(input, secrets) {
    const value = headerValue(input, SIGNATURE);
    const timestamp = headerValue(input, TIMESTAMP);
    if (value === undefined) return missingHeader(SIGNATURE);
    if (timestamp === undefined) return missingHeader(TIMESTAMP);
    const signature = decodeSignature(value, 'base64');
    if (!signature) return malformedHeader(SIGNATURE, 'is not base64');
    const seconds = parseUnixSeconds(timestamp);
    if (seconds === undefined) return malformedHeader(TIMESTAMP, 'is not unix seconds');
    const content = signedContent(timestamp, input.rawBody);
    const result = verifyWithKeys(
      secrets,
      spkiPublicKey,
      (key) => {
        try {
          return verifySignature('sha256', content, { key, dsaEncoding: 'der' }, signature);
        } catch {
          return false; // not DER: a mismatch, like any other bad signature
        }
      },
      SIGNATURE,
    );
    if (!result.ok) return result;
    return outOfTolerance(TIMESTAMP, seconds, input) ?? result;
  },
};

export const sendgrid: Scheme = {
  signedParts: {
    body: 'bytes',
    headers: [TIMESTAMP],
    summary: 'the body and x-twilio-email-event-webhook-timestamp',
    timestamp: TIMESTAMP,
  },
  options: {},
  secret: {
    generated: false,
    expected: "SendGrid's verification key (base64 DER SubjectPublicKeyInfo, ECDSA P-256)",
    usable: (value) => {
      try {
        const key = spkiPublicKey(value);
        return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
      } catch {
        return false;
      }
    },
  },
  verifier: () => sendgridVerifier,
  sign(_options, input) {
    const ts = String(Math.floor(input.now / 1000));
    let key: ReturnType<typeof createPrivateKey>;
    try {
      key = createPrivateKey({ key: Buffer.from(input.secret, 'base64'), format: 'der', type: 'pkcs8' });
    } catch {
      throw new SigningSecretError('sendgrid signing key is not base64 DER (PKCS#8)');
    }
    const signature = signBytes('sha256', signedContent(ts, input.body), { key, dsaEncoding: 'der' }).toString('base64');
    return { [TIMESTAMP]: ts, [SIGNATURE]: signature };
  },
};
