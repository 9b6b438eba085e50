/**
 * Handshakes: requests a provider sends to prove the endpoint is ours before (or while) it sends
 * events. Each is answered exactly as its provider expects and nothing is stored. All of them
 * arrive signed like any event and are answered only after verification, so an unsigned caller
 * cannot make intake compute anything with the secret.
 */
import { createHmac } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Handshake } from '../../core/providers/catalog';

const MAX_TOKEN = 256;

const json = (body: unknown): APIGatewayProxyStructuredResultV2 => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** The reply when `body` is this provider's handshake, or undefined when it is an ordinary event. */
export function answerHandshake(
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
  }
}
