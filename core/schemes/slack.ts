/** Slack: `x-slack-signature: v0=<hex>` over `v0:${x-slack-request-timestamp}:${body}`. */
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

const SIGNATURE = 'x-slack-signature';
const TIMESTAMP = 'x-slack-request-timestamp';
const VERSION = 'v0';

export const slackVerifier: Verifier = {
  verify(input, secrets) {
    const signature = headerValue(input, SIGNATURE);
    const timestamp = headerValue(input, TIMESTAMP);
    if (signature === undefined) return missingHeader(SIGNATURE);
    if (timestamp === undefined) return missingHeader(TIMESTAMP);

    const seconds = parseUnixSeconds(timestamp);
    if (seconds === undefined) return malformedHeader(TIMESTAMP, 'is not unix seconds');
    if (!signature.startsWith(`${VERSION}=`)) return malformedHeader(SIGNATURE, `does not start with "${VERSION}="`);
    const candidate = decodeSignature(signature.slice(VERSION.length + 1), 'hex');
    if (!candidate) return malformedHeader(SIGNATURE, `is not hex after "${VERSION}="`);

    const content = signedContent(`${VERSION}:${timestamp}:`, input.rawBody);
    const result = verifyHmac({ algorithm: 'sha256', content, candidates: [candidate], header: SIGNATURE }, secrets);
    if (!result.ok) return result;
    return outOfTolerance(TIMESTAMP, seconds, input) ?? result;
  },
};

export const slack: Scheme = {
  signedParts: { body: 'bytes', headers: [TIMESTAMP], summary: 'the body and x-slack-request-timestamp', timestamp: TIMESTAMP },
  options: {},
  // https://api.slack.com/events/url_verification: every Events API app is asked it.
  handshake: 'slack-url-verification',
  verifier: () => slackVerifier,
  sign(_options, input) {
    const ts = String(Math.floor(input.now / 1000));
    const mac = createHmac('sha256', input.secret)
      .update(signedContent(`${VERSION}:${ts}:`, input.body))
      .digest('hex');
    return { [TIMESTAMP]: ts, [SIGNATURE]: `${VERSION}=${mac}` };
  },
};
