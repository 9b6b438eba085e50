/**
 * Requests answered without storing anything (see lambdas/ingest/handshake.ts): signed POSTs
 * (Slack, Zoom, Discord), unsigned GETs (Meta's hub.challenge, Dropbox's challenge, Okta's one-time
 * verification) and Microsoft Graph's `validationToken` POST.
 */
export const HANDSHAKES = [
  'slack-url-verification',
  'zoom-url-validation',
  'discord-ping',
  'meta-hub-challenge',
  'dropbox-challenge',
  'okta-verification',
  'graph-validation-token',
] as const;
export type Handshake = (typeof HANDSHAKES)[number];

/**
 * When intake answers each handshake (lambdas/ingest/handshake.ts): the method it arrives by, and
 * whether the request is verified first. Unsigned ones (Meta's and Dropbox's GETs, Graph's
 * validationToken POST) only echo what the caller sent, so they come before verification; the
 * others compute or echo only for a caller who holds the secret (Okta's Authorization, the signed POSTs).
 */
export type HandshakePhase = 'before-verification' | 'after-verification';
export const HANDSHAKE_STEPS: Readonly<Record<Handshake, { readonly method: 'GET' | 'POST'; readonly phase: HandshakePhase }>> = {
  'slack-url-verification': { method: 'POST', phase: 'after-verification' },
  'zoom-url-validation': { method: 'POST', phase: 'after-verification' },
  'discord-ping': { method: 'POST', phase: 'after-verification' },
  'meta-hub-challenge': { method: 'GET', phase: 'before-verification' },
  'dropbox-challenge': { method: 'GET', phase: 'before-verification' },
  'okta-verification': { method: 'GET', phase: 'after-verification' },
  'graph-validation-token': { method: 'POST', phase: 'before-verification' },
};
