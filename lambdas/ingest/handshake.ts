/**
 * Handshakes: requests a provider sends to prove the endpoint is ours before (or while) it sends
 * events. Each is answered exactly as its provider expects and nothing is stored.
 *
 * Signed POSTs (Slack, Zoom, Discord) are answered only after verification, so an unsigned caller
 * cannot make intake compute anything with the secret. The GET handshakes (Meta, Dropbox, Okta) and
 * Microsoft Graph's validationToken POST are not signed by their providers: they only echo a value
 * the caller sent, as text/plain with nosniff (never HTML), capped in length; Meta's is answered only
 * for the configured verify token and Okta's only with the hook's shared secret.
 *
 * Which handshake a source answers, by which method and in which phase, is data: `source.handshake`
 * (from its preset, or its scheme: Slack's) and `HANDSHAKE_STEPS` (core/providers/catalog.ts).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { WiringError } from '../../core/errors';
import { HANDSHAKE_STEPS, type Handshake, type HandshakePhase } from '../../core/handshakes';
import { InputError } from '../recording/parse';
import type { IngestRequest } from '../recording/request';

const MAX_TOKEN = 256;
/** Graph's validation tokens are sentences with a request id; a little longer. */
const MAX_GRAPH_TOKEN = 1024;
// Printable ASCII plus space: what the echoed values are made of; anything else is refused.
const ECHOABLE = /^[\x20-\x7e]+$/;

const json = (body: unknown): APIGatewayProxyStructuredResultV2 => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** The value itself, as text/plain that no browser will sniff into HTML. */
const plain = (body: string): APIGatewayProxyStructuredResultV2 => ({
  statusCode: 200,
  headers: { 'content-type': 'text/plain', 'x-content-type-options': 'nosniff' },
  body,
});

/** What a handshake answered after verification may use: the body read and the secret that verified it. */
export interface VerifiedRequest {
  readonly body: Record<string, unknown>;
  readonly secret: string;
}

/**
 * The step: the reply to the source's handshake when this request is one and `phase` is when it is
 * answered; undefined otherwise (an ordinary event, or the wrong phase). Refusals are InputErrors.
 */
export function answerHandshake(request: IngestRequest, phase: 'before-verification'): APIGatewayProxyStructuredResultV2 | undefined;
export function answerHandshake(
  request: IngestRequest,
  phase: 'after-verification',
  verified: VerifiedRequest,
): APIGatewayProxyStructuredResultV2 | undefined;
export function answerHandshake(
  request: IngestRequest,
  phase: HandshakePhase,
  verified?: VerifiedRequest,
): APIGatewayProxyStructuredResultV2 | undefined {
  const kind = request.source.handshake;
  if (kind === undefined) return undefined;
  const step = HANDSHAKE_STEPS[kind];
  if (step.phase !== phase || step.method !== request.method) return undefined;
  if (step.method === 'GET') {
    return answerGetHandshake(kind, { query: request.query, headers: request.headers, verifyToken: request.source.verifyToken });
  }
  if (phase === 'before-verification') return kind === 'graph-validation-token' ? answerGraphValidation(request.query) : undefined;
  if (!verified)
    throw new WiringError(`answerHandshake: the ${kind} handshake is answered after verification, with the verified body and secret`);
  return answerSignedHandshake(kind, verified.body, verified.secret);
}

/** The reply when `body` is this provider's signed-POST handshake, or undefined when it is an ordinary event. */
export function answerSignedHandshake(
  kind: Handshake,
  body: Record<string, unknown>,
  secret: string,
): APIGatewayProxyStructuredResultV2 | undefined {
  switch (kind) {
    case 'slack-url-verification':
      // https://api.slack.com/events/url_verification
      return body.type === 'url_verification' && typeof body.challenge === 'string' ? json({ challenge: body.challenge }) : undefined;
    case 'zoom-url-validation': {
      // https://developers.zoom.us/docs/api/webhooks/#validate-your-webhook-endpoint: the plain token and
      // its HMAC-SHA256 (hex) under the webhook secret token.
      if (body.event !== 'endpoint.url_validation') return undefined;
      const payload = body.payload as Record<string, unknown> | undefined;
      const plainToken = payload?.plainToken;
      if (typeof plainToken !== 'string' || plainToken.length === 0 || plainToken.length > MAX_TOKEN) return undefined;
      const encryptedToken = createHmac('sha256', secret).update(plainToken).digest('hex');
      return json({ plainToken, encryptedToken });
    }
    case 'discord-ping':
      // https://discord.com/developers/docs/interactions/receiving-and-responding: PING (type 1) gets PONG (type 1).
      return body.type === 1 ? json({ type: 1 }) : undefined;
    default:
      return undefined;
  }
}

function echoable(value: string | null | undefined, what: string, max = MAX_TOKEN): string {
  if (value === null || value === undefined || value === '') throw new InputError('missing_challenge', `${what} is missing`);
  if (value.length > max || !ECHOABLE.test(value)) {
    throw new InputError('invalid_challenge', `${what} must be at most ${max} printable characters`);
  }
  return value;
}

const sameText = (a: string, b: string): boolean =>
  timingSafeEqual(createHash('sha256').update(a, 'utf8').digest(), createHash('sha256').update(b, 'utf8').digest());

export interface GetHandshakeRequest {
  readonly query: URLSearchParams;
  readonly headers: Readonly<Record<string, string>>;
  /** Meta: the source's configured verify token. */
  readonly verifyToken?: string;
}

/**
 * The answer to a GET handshake (Okta's shared secret is verified first: its phase is after verification). Refusals are
 * InputErrors: 403 for a wrong Meta verify token, 400 for a missing or unechoable challenge.
 */
export function answerGetHandshake(kind: Handshake, request: GetHandshakeRequest): APIGatewayProxyStructuredResultV2 {
  switch (kind) {
    case 'meta-hub-challenge': {
      // https://developers.facebook.com/docs/graph-api/webhooks/getting-started#verification-requests
      const { query } = request;
      if (query.get('hub.mode') !== 'subscribe') throw new InputError('invalid_challenge', 'hub.mode must be subscribe');
      const token = query.get('hub.verify_token') ?? '';
      if (request.verifyToken === undefined || !sameText(token, request.verifyToken)) {
        throw new InputError('verify_token_mismatch', 'hub.verify_token is not the verify token configured for this source', 403);
      }
      return plain(echoable(query.get('hub.challenge'), 'hub.challenge'));
    }
    case 'dropbox-challenge':
      // https://www.dropbox.com/developers/reference/webhooks#documentation: echo, text/plain, nosniff.
      return plain(echoable(request.query.get('challenge'), 'the challenge parameter'));
    case 'okta-verification':
      // https://developer.okta.com/docs/concepts/event-hooks/#one-time-verification-request
      return json({ verification: echoable(request.headers['x-okta-verification-challenge'], 'header x-okta-verification-challenge') });
    default:
      throw new InputError('method_not_allowed', 'this source accepts POST only', 405, { allow: 'POST' });
  }
}

/**
 * Microsoft Graph's subscription validation: `POST ?validationToken=<t>` answered 200 text/plain
 * with the token URL-decoded, within 10 s, before any notification is verified (it carries no
 * clientState). Undefined when the request has no validationToken.
 * https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks#notificationurl-validation
 */
export function answerGraphValidation(query: URLSearchParams): APIGatewayProxyStructuredResultV2 | undefined {
  if (!query.has('validationToken')) return undefined;
  return plain(echoable(query.get('validationToken'), 'validationToken', MAX_GRAPH_TOKEN));
}
