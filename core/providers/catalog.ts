/**
 * Provider presets: a source may name a provider (`provider: 'stripe'`) instead of spelling out a
 * scheme and its attribution. Each entry says how that provider signs (a scheme of the registry in
 * core/schemes, with its options), where its event id and type are (signed parts only, or
 * `replayProtection: 'body'` when the provider's id is an unsigned header), any handshake, and how
 * the entry is proved: `sdk` (test/providers/sdk.test.ts signs or verifies with the provider's own
 * npm code), `vector` (a signature published in the provider's docs, test/providers/vectors.test.ts)
 * or `unproved` (listed, not counted). Adding a provider: one entry here plus its proof test.
 */
import type { Handshake } from '../handshakes';
import type { SchemeConfigInput } from '../schemes';

/**
 * Where an attribution field is read: a dotted path in the (JSON or form) body, a request header, or
 * a fixed value (what no signed part carries, such as Mailgun's event type).
 */
export type FieldLocation = { readonly body: string } | { readonly header: string } | { readonly value: string };
/**
 * Where the event id is: a FieldLocation, or `{ derived: 'body-hash' }` for providers that send none
 * (Meta, Dropbox): `bh_` + the deployment's keyed hash of the signed body, assigned at intake. Only for
 * schemes that sign the body (config refuses it otherwise).
 */
export type EventIdLocation = FieldLocation | { readonly derived: 'body-hash' };

export type Proof = 'sdk' | 'vector' | 'unproved';

export interface ProviderPreset {
  /** The name a source uses: `provider: '<name>'`. */
  readonly name: string;
  readonly title: string;
  readonly scheme: SchemeConfigInput;
  readonly eventId: EventIdLocation;
  readonly eventType: FieldLocation;
  /** Defaults a source may override; a source must give them when the provider has none. */
  readonly tenantId?: FieldLocation;
  readonly keyId?: FieldLocation;
  /** @default 'event-id' */
  readonly replayProtection?: 'event-id' | 'body';
  readonly handshake?: Handshake;
  /** The source's secret is the provider's public key (ed25519, ECDSA), not a shared secret. */
  readonly publicKey?: true;
  readonly proof: Proof;
  /** What proves it: the npm package and function, or the docs page of the vector. */
  readonly provedBy?: string;
  readonly docs: string;
}

const body = (path: string): FieldLocation => ({ body: path });
const header = (name: string): FieldLocation => ({ header: name });
/** The event id derived from the signed body: a retry of the same bytes is a duplicate, another body another event. */
const bodyHash: EventIdLocation = { derived: 'body-hash' };

/** Plain HMAC over the body in one header. */
const bodyHmac = (
  name: string,
  options: {
    encoding?: 'hex' | 'base64';
    prefix?: string;
    separator?: string;
    algorithm?: 'sha1' | 'sha256' | 'sha512';
    secretEncoding?: 'utf8' | 'hex';
  },
): SchemeConfigInput => ({ type: 'hmac-template', header: name, ...options });

export const PROVIDERS: readonly ProviderPreset[] = [
  // --- Standard Webhooks and Svix-hosted senders -------------------------------------------------
  {
    name: 'standard-webhooks',
    title: 'Standard Webhooks',
    scheme: { type: 'standard-webhooks' },
    eventId: header('webhook-id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: 'standardwebhooks Webhook.sign / verify',
    docs: 'https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md',
  },
  {
    name: 'standard-webhooks-v1a',
    title: 'Standard Webhooks (v1a, ed25519)',
    scheme: { type: 'standard-webhooks-v1a' },
    eventId: header('webhook-id'),
    eventType: body('type'),
    publicKey: true,
    // No npm library signs or verifies v1a yet, and the spec publishes no v1a vector.
    proof: 'unproved',
    docs: 'https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md',
  },
  {
    name: 'svix',
    title: 'Svix',
    scheme: { type: 'standard-webhooks', headerPrefix: 'svix' },
    eventId: header('svix-id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: 'svix Webhook.sign / verify',
    docs: 'https://docs.svix.com/receiving/verifying-payloads/how-manual',
  },
  {
    name: 'clerk',
    title: 'Clerk',
    scheme: { type: 'standard-webhooks', headerPrefix: 'svix' },
    eventId: header('svix-id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: '@clerk/backend verifyWebhook',
    docs: 'https://clerk.com/docs/webhooks/sync-data',
  },
  {
    name: 'resend',
    title: 'Resend',
    scheme: { type: 'standard-webhooks', headerPrefix: 'svix' },
    eventId: header('svix-id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: 'resend Resend#webhooks.verify',
    docs: 'https://resend.com/docs/dashboard/webhooks/verify-webhooks-requests',
  },
  {
    name: 'replicate',
    title: 'Replicate',
    scheme: { type: 'standard-webhooks' },
    eventId: header('webhook-id'),
    eventType: body('status'),
    proof: 'sdk',
    provedBy: 'replicate validateWebhook',
    docs: 'https://replicate.com/docs/topics/webhooks/verify-webhook',
  },
  {
    name: 'liveblocks',
    title: 'Liveblocks',
    scheme: { type: 'standard-webhooks' },
    eventId: header('webhook-id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: '@liveblocks/node WebhookHandler#verifyRequest',
    docs: 'https://liveblocks.io/docs/platform/webhooks',
  },
  {
    name: 'polar',
    title: 'Polar',
    scheme: { type: 'standard-webhooks', secretFormat: 'utf8' },
    eventId: header('webhook-id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: '@polar-sh/sdk/webhooks validateEvent',
    docs: 'https://docs.polar.sh/integrate/webhooks/delivery',
  },
  {
    name: 'openai',
    title: 'OpenAI',
    scheme: { type: 'standard-webhooks' },
    eventId: header('webhook-id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: 'openai OpenAI#webhooks.unwrap',
    docs: 'https://platform.openai.com/docs/guides/webhooks',
  },
  {
    name: 'lithic',
    title: 'Lithic',
    scheme: { type: 'standard-webhooks' },
    eventId: header('webhook-id'),
    eventType: body('event_type'),
    proof: 'sdk',
    provedBy: 'lithic Lithic#webhooks.verifySignature',
    docs: 'https://docs.lithic.com/docs/events-api#verifying-webhooks',
  },
  {
    name: 'finch',
    title: 'Finch',
    scheme: { type: 'standard-webhooks', headerPrefix: 'finch' },
    eventId: header('finch-event-id'),
    eventType: body('event_type'),
    tenantId: body('company_id'),
    proof: 'sdk',
    provedBy: '@tryfinch/finch-api Finch#webhooks.verifySignature',
    docs: 'https://developer.tryfinch.com/developer-resources/Webhooks',
  },
  {
    name: 'imagekit',
    title: 'ImageKit',
    scheme: { type: 'standard-webhooks', secretFormat: 'utf8' },
    eventId: header('webhook-id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: '@imagekit/nodejs ImageKit#webhooks.unwrap',
    docs: 'https://imagekit.io/docs/webhooks',
  },
  {
    name: 'dodopayments',
    title: 'Dodo Payments',
    scheme: { type: 'standard-webhooks' },
    eventId: header('webhook-id'),
    eventType: body('type'),
    tenantId: body('business_id'),
    proof: 'sdk',
    provedBy: 'dodopayments DodoPayments#webhooks.unwrap',
    docs: 'https://docs.dodopayments.com/developer-resources/webhooks',
  },
  // --- Stripe-style `t=...,v1=...` -----------------------------------------------------------------
  {
    name: 'stripe',
    title: 'Stripe',
    scheme: { type: 'stripe' },
    eventId: body('id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: 'stripe webhooks.generateTestHeaderString / constructEvent',
    docs: 'https://docs.stripe.com/webhooks#verify-manually',
  },
  {
    name: 'workos',
    title: 'WorkOS',
    scheme: { type: 'timestamped-hmac', header: 'workos-signature', timestampFormat: 'unix-ms' },
    eventId: body('id'),
    eventType: body('event'),
    proof: 'sdk',
    provedBy: '@workos-inc/node WorkOS#webhooks.constructEvent',
    docs: 'https://workos.com/docs/events/data-syncing/webhooks',
  },
  {
    name: 'mux',
    title: 'Mux',
    scheme: { type: 'timestamped-hmac', header: 'mux-signature' },
    eventId: body('id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: '@mux/mux-node Mux#webhooks.verifySignature',
    docs: 'https://www.mux.com/docs/core/verify-webhook-signatures',
  },
  {
    name: 'paddle',
    title: 'Paddle Billing',
    scheme: {
      type: 'timestamped-hmac',
      header: 'paddle-signature',
      timestampKey: 'ts',
      signatureKey: 'h1',
      separator: ';',
      content: '{t}:{body}',
    },
    eventId: body('event_id'),
    eventType: body('event_type'),
    proof: 'sdk',
    provedBy: '@paddle/paddle-node-sdk Paddle#webhooks.isSignatureValid',
    docs: 'https://developer.paddle.com/webhooks/signature-verification',
  },
  {
    name: 'sanity',
    title: 'Sanity',
    scheme: { type: 'timestamped-hmac', header: 'sanity-webhook-signature', encoding: 'base64url', timestampFormat: 'unix-ms' },
    eventId: header('idempotency-key'),
    eventType: header('sanity-operation'),
    replayProtection: 'body',
    proof: 'sdk',
    provedBy: '@sanity/webhook encodeSignatureHeader / isValidSignature',
    docs: 'https://www.sanity.io/docs/webhooks',
  },
  // --- HMAC over the body (and sometimes more) in one header ----------------------------------------
  {
    name: 'github',
    title: 'GitHub',
    scheme: { type: 'github' },
    eventId: header('x-github-delivery'),
    eventType: header('x-github-event'),
    replayProtection: 'body',
    proof: 'sdk',
    provedBy: '@octokit/webhooks-methods sign / verify',
    docs: 'https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries',
  },
  {
    name: 'shopify',
    title: 'Shopify',
    scheme: { type: 'shopify' },
    eventId: header('x-shopify-event-id'),
    eventType: header('x-shopify-topic'),
    tenantId: header('x-shopify-shop-domain'),
    replayProtection: 'body',
    proof: 'sdk',
    provedBy: '@shopify/shopify-api shopify.webhooks.validate',
    docs: 'https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-5-verify-the-webhook',
  },
  {
    name: 'square',
    title: 'Square',
    scheme: { type: 'hmac-template', header: 'x-square-hmacsha256-signature', encoding: 'base64', content: '{url}{body}' },
    eventId: body('event_id'),
    eventType: body('type'),
    tenantId: body('merchant_id'),
    proof: 'sdk',
    provedBy: 'square WebhooksHelper.verifySignature',
    docs: 'https://developer.squareup.com/docs/webhooks/step3validate',
  },
  {
    name: 'line',
    title: 'LINE Messaging API',
    scheme: bodyHmac('x-line-signature', { encoding: 'base64' }),
    eventId: body('events.0.webhookEventId'),
    eventType: body('events.0.type'),
    tenantId: body('destination'),
    proof: 'sdk',
    provedBy: '@line/bot-sdk validateSignature',
    docs: 'https://developers.line.biz/en/docs/messaging-api/receiving-messages/#verify-signature',
  },
  {
    name: 'razorpay',
    title: 'Razorpay',
    scheme: bodyHmac('x-razorpay-signature', {}),
    eventId: header('x-razorpay-event-id'),
    eventType: body('event'),
    tenantId: body('account_id'),
    replayProtection: 'body',
    proof: 'sdk',
    provedBy: 'razorpay validateWebhookSignature',
    docs: 'https://razorpay.com/docs/webhooks/validate-test/',
  },
  {
    name: 'coinbase-commerce',
    title: 'Coinbase Commerce',
    scheme: bodyHmac('x-cc-webhook-signature', {}),
    eventId: body('event.id'),
    eventType: body('event.type'),
    proof: 'sdk',
    provedBy: 'coinbase-commerce-node Webhook.verifySigHeader',
    docs: 'https://docs.cdp.coinbase.com/commerce-onchain/docs/webhooks-security',
  },
  {
    name: 'gocardless',
    title: 'GoCardless',
    scheme: bodyHmac('webhook-signature', {}),
    eventId: body('events.0.id'),
    eventType: body('events.0.resource_type'),
    tenantId: body('events.0.links.organisation'),
    proof: 'sdk',
    provedBy: 'gocardless-nodejs webhooks.parse',
    docs: 'https://developer.gocardless.com/getting-started/staying-up-to-date-with-webhooks',
  },
  {
    name: 'linear',
    title: 'Linear',
    scheme: bodyHmac('linear-signature', {}),
    eventId: header('linear-delivery'),
    eventType: body('type'),
    tenantId: body('organizationId'),
    replayProtection: 'body',
    proof: 'sdk',
    provedBy: '@linear/sdk LinearWebhookClient#verify',
    docs: 'https://linear.app/developers/webhooks#securing-webhooks',
  },
  {
    name: 'easypost',
    title: 'EasyPost',
    scheme: bodyHmac('x-hmac-signature', { prefix: 'hmac-sha256-hex=' }),
    eventId: body('id'),
    eventType: body('description'),
    proof: 'sdk',
    provedBy: '@easypost/api Utils#validateWebhook',
    docs: 'https://docs.easypost.com/guides/webhooks-guide#hmac-validation',
  },
  {
    name: 'slack',
    title: 'Slack',
    scheme: { type: 'slack' },
    eventId: body('event_id'),
    eventType: body('event.type'),
    tenantId: body('team_id'),
    handshake: 'slack-url-verification',
    proof: 'sdk',
    provedBy: '@slack/bolt isValidSlackRequest',
    docs: 'https://api.slack.com/authentication/verifying-requests-from-slack',
  },
  {
    name: 'zoom',
    title: 'Zoom',
    scheme: {
      type: 'hmac-template',
      header: 'x-zm-signature',
      prefix: 'v0=',
      content: 'v0:{header:x-zm-request-timestamp}:{body}',
      timestampHeader: 'x-zm-request-timestamp',
    },
    eventId: header('x-zm-trackingid'),
    eventType: body('event'),
    tenantId: body('payload.account_id'),
    replayProtection: 'body',
    handshake: 'zoom-url-validation',
    proof: 'sdk',
    provedBy: '@zoom/rivet AwsLambdaReceiver (its request check)',
    docs: 'https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events',
  },
  {
    name: 'twitch',
    title: 'Twitch EventSub',
    scheme: {
      type: 'hmac-template',
      header: 'twitch-eventsub-message-signature',
      prefix: 'sha256=',
      content: '{header:twitch-eventsub-message-id}{header:twitch-eventsub-message-timestamp}{body}',
      timestampHeader: 'twitch-eventsub-message-timestamp',
      timestampFormat: 'iso8601',
    },
    eventId: header('twitch-eventsub-message-id'),
    eventType: body('subscription.type'),
    tenantId: body('event.broadcaster_user_id'),
    proof: 'unproved',
    docs: 'https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#verifying-the-event-message',
  },
  {
    name: 'hubspot',
    title: 'HubSpot (signature v3)',
    scheme: {
      type: 'hmac-template',
      header: 'x-hubspot-signature-v3',
      encoding: 'base64',
      content: 'POST{url}{body}{header:x-hubspot-request-timestamp}',
      timestampHeader: 'x-hubspot-request-timestamp',
      timestampFormat: 'unix-ms',
    },
    eventId: body('0.eventId'),
    eventType: body('0.subscriptionType'),
    tenantId: body('0.portalId'),
    proof: 'sdk',
    provedBy: '@hubspot/api-client Signature.getSignature / isValid',
    docs: 'https://developers.hubspot.com/docs/api/webhooks/validating-requests',
  },
  {
    name: 'elevenlabs',
    title: 'ElevenLabs',
    scheme: { type: 'timestamped-hmac', header: 'elevenlabs-signature', signatureKey: 'v0' },
    // No event id in the payload, and one conversation's post-call events (transcription, audio)
    // share data.conversation_id, so reading it folded the second into the first: the id is derived
    // from the signed body instead (each event's body differs; a retry of the same bytes is a duplicate).
    eventId: bodyHash,
    eventType: body('type'),
    proof: 'sdk',
    provedBy: '@elevenlabs/elevenlabs-js ElevenLabsClient#webhooks.constructEvent',
    docs: 'https://elevenlabs.io/docs/agents-platform/workflows/post-call-webhooks',
  },
  // --- JWT-signed ----------------------------------------------------------------------------------
  {
    name: 'vonage',
    title: 'Vonage (signed webhooks)',
    scheme: { type: 'jwt', header: 'authorization', prefix: 'Bearer ', bodyHashClaim: 'payload_hash' },
    eventId: body('message_uuid'),
    eventType: body('status'),
    tenantId: body('api_key'),
    proof: 'sdk',
    provedBy: '@vonage/jwt verifySignature',
    docs: 'https://developer.vonage.com/en/getting-started/concepts/webhooks#validating-signed-webhooks',
  },
  {
    name: 'qstash',
    title: 'Upstash QStash',
    scheme: {
      type: 'jwt',
      header: 'upstash-signature',
      bodyHashClaim: 'body',
      bodyHashEncoding: 'base64url',
      issuer: 'Upstash',
      subjectIsUrl: 'yes',
    },
    eventId: header('upstash-message-id'),
    eventType: body('type'),
    replayProtection: 'body',
    proof: 'sdk',
    provedBy: '@upstash/qstash Receiver#verify',
    docs: 'https://upstash.com/docs/qstash/howto/signature',
  },
  {
    name: 'orb',
    title: 'Orb',
    scheme: {
      type: 'hmac-template',
      header: 'x-orb-signature',
      prefix: 'v1=',
      separator: ' ',
      content: 'v1:{header:x-orb-timestamp}:{body}',
      timestampHeader: 'x-orb-timestamp',
      timestampFormat: 'iso8601',
    },
    eventId: body('id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: 'orb-billing Orb#webhooks.verifySignature',
    docs: 'https://docs.withorb.com/integrations-and-exports/webhooks',
  },
  {
    name: 'metronome',
    title: 'Metronome',
    scheme: {
      type: 'hmac-template',
      header: 'metronome-webhook-signature',
      content: '{header:x-metronome-date}\n{body}',
      timestampHeader: 'x-metronome-date',
      timestampFormat: 'http-date',
    },
    eventId: body('id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: '@metronome/sdk Metronome#webhooks.verifySignature',
    docs: 'https://docs.metronome.com/connect-metronome/webhooks/',
  },
  {
    name: 'modern-treasury',
    title: 'Modern Treasury',
    scheme: bodyHmac('x-signature', {}),
    eventId: header('x-webhook-id'),
    eventType: body('event'),
    replayProtection: 'body',
    proof: 'sdk',
    provedBy: 'modern-treasury ModernTreasury#webhooks.validateSignature',
    docs: 'https://docs.moderntreasury.com/platform/reference/verifying-webhooks',
  },
  {
    name: 'box',
    title: 'Box',
    scheme: {
      type: 'hmac-template',
      header: 'box-signature-primary',
      encoding: 'base64',
      content: '{body}{header:box-delivery-timestamp}',
      timestampHeader: 'box-delivery-timestamp',
      timestampFormat: 'iso8601',
    },
    eventId: body('id'),
    eventType: body('trigger'),
    proof: 'sdk',
    provedBy: 'box-node-sdk WebhooksManager.validateMessage',
    docs: 'https://developer.box.com/guides/webhooks/v2/signatures-v2/',
  },
  // --- Public-key signatures ---------------------------------------------------------------------
  {
    name: 'discord',
    title: 'Discord interactions',
    scheme: { type: 'ed25519', header: 'x-signature-ed25519' },
    eventId: body('id'),
    eventType: body('type'),
    tenantId: body('guild_id'),
    handshake: 'discord-ping',
    publicKey: true,
    proof: 'sdk',
    provedBy: 'discord-interactions verifyKey',
    docs: 'https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers',
  },
  {
    name: 'telnyx',
    title: 'Telnyx',
    scheme: {
      type: 'ed25519',
      header: 'telnyx-signature-ed25519',
      encoding: 'base64',
      content: '{header:telnyx-timestamp}|{body}',
      timestampHeader: 'telnyx-timestamp',
      keyEncoding: 'base64',
    },
    eventId: body('data.id'),
    eventType: body('data.event_type'),
    publicKey: true,
    proof: 'sdk',
    provedBy: 'telnyx Telnyx#webhooks.unwrap',
    docs: 'https://developers.telnyx.com/docs/messaging/messages/receiving-webhooks',
  },
  {
    name: 'sendgrid',
    title: 'Twilio SendGrid event webhook',
    scheme: { type: 'sendgrid' },
    eventId: body('0.sg_event_id'),
    eventType: body('0.event'),
    publicKey: true,
    proof: 'sdk',
    provedBy: '@sendgrid/eventwebhook EventWebhook#verifySignature',
    docs: 'https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features',
  },
  // --- URL-signing schemes -----------------------------------------------------------------------
  {
    name: 'twilio',
    title: 'Twilio',
    scheme: { type: 'twilio' },
    eventId: body('MessageSid'),
    eventType: body('MessageStatus'),
    tenantId: body('AccountSid'),
    proof: 'sdk',
    provedBy: 'twilio getExpectedTwilioSignature / validateRequest / validateRequestWithBody',
    docs: 'https://www.twilio.com/docs/usage/webhooks/webhooks-security',
  },
  // --- Proved by the providers' SDKs (test/providers/sdk.test.ts) ------------------------------------
  {
    name: 'notion',
    title: 'Notion',
    scheme: bodyHmac('x-notion-signature', { prefix: 'sha256=' }),
    eventId: body('id'),
    eventType: body('type'),
    tenantId: body('workspace_id'),
    proof: 'sdk',
    provedBy: '@notionhq/client signWebhookPayload / verifyWebhookSignature',
    docs: 'https://developers.notion.com/reference/webhooks',
  },
  {
    name: 'adyen',
    title: 'Adyen (Balance Platform and Management webhooks)',
    scheme: bodyHmac('hmacsignature', { encoding: 'base64', secretEncoding: 'hex' }),
    // No event id in these webhooks, and a transfer's updates share data.id (only sequenceNumber tells
    // them apart), so reading it folded every update after the first: the id is derived from the signed
    // body instead (each update's body differs; a retry of the same bytes is a duplicate).
    eventId: bodyHash,
    eventType: body('type'),
    proof: 'sdk',
    provedBy: '@adyen/api-library hmacValidator.calculateHmac / validateHMACSignature',
    docs: 'https://docs.adyen.com/development-resources/webhooks/verify-hmac-signatures/',
  },
  {
    name: 'pusher',
    title: 'Pusher Channels',
    scheme: bodyHmac('x-pusher-signature', {}),
    // Pusher sends no event id. time_ms (when the batch was sent) was used, but two batches sent in the
    // same millisecond collided: the id is derived from the signed body (time_ms and events) instead.
    eventId: bodyHash,
    eventType: body('events.0.name'),
    tenantId: header('x-pusher-key'),
    replayProtection: 'body',
    proof: 'sdk',
    provedBy: 'pusher Pusher#webhook(...).isValid',
    docs: 'https://pusher.com/docs/channels/server_api/webhooks/#authentication',
  },
  {
    name: 'stream',
    title: 'Stream (Chat)',
    scheme: bodyHmac('x-signature', {}),
    eventId: header('x-webhook-id'),
    eventType: body('type'),
    tenantId: header('x-api-key'),
    replayProtection: 'body',
    proof: 'sdk',
    provedBy: 'stream-chat StreamChat#verifyWebhook',
    docs: 'https://getstream.io/chat/docs/node/webhooks_overview/',
  },
  {
    name: 'onfido',
    title: 'Onfido',
    scheme: bodyHmac('x-sha2-signature', {}),
    // No event id: payload.object.id is the resource's, shared by one check's events (started,
    // completed), which folded the second into the first: the id is derived from the signed body instead.
    eventId: bodyHash,
    eventType: body('payload.action'),
    proof: 'sdk',
    provedBy: '@onfido/api WebhookEventVerifier#readPayload',
    docs: 'https://documentation.onfido.com/api/latest/#webhooks',
  },
  {
    name: 'fingerprint',
    title: 'Fingerprint',
    scheme: bodyHmac('fpjs-event-signature', { prefix: 'v1=', separator: ',' }),
    eventId: body('requestId'),
    // One kind of event (an identification): the bot verdict is what consumers route on.
    eventType: body('bot.result'),
    proof: 'sdk',
    provedBy: '@fingerprintjs/fingerprintjs-pro-server-api isValidWebhookSignature',
    docs: 'https://dev.fingerprint.com/docs/webhooks-security',
  },
  {
    name: 'privy',
    title: 'Privy',
    scheme: { type: 'standard-webhooks', headerPrefix: 'svix' },
    eventId: header('svix-id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: '@privy-io/server-auth PrivyClient#verifyWebhook',
    docs: 'https://docs.privy.io/guide/server/webhooks',
  },
  {
    name: 'retell',
    title: 'Retell AI',
    scheme: {
      type: 'timestamped-hmac',
      header: 'x-retell-signature',
      timestampKey: 'v',
      signatureKey: 'd',
      content: '{body}{t}',
      timestampFormat: 'unix-ms',
    },
    // No event id: call.call_id is shared by one call's events (call_started, call_ended, call_analyzed),
    // which folded all but the first: the id is derived from the signed body instead.
    eventId: bodyHash,
    eventType: body('event'),
    proof: 'sdk',
    provedBy: 'retell-sdk Retell.sign / Retell.verify',
    docs: 'https://docs.retellai.com/features/secure-webhook',
  },
  {
    name: 'hookdeck',
    title: 'Hookdeck (forwarded events)',
    scheme: bodyHmac('x-hookdeck-signature', { encoding: 'base64' }),
    eventId: header('x-hookdeck-eventid'),
    eventType: body('type'),
    replayProtection: 'body',
    proof: 'sdk',
    provedBy: '@hookdeck/sdk verifyWebhookSignature',
    docs: 'https://hookdeck.com/docs/authentication#hookdeck-webhook-signature-verification',
  },
  {
    name: 'sinch',
    title: 'Sinch Conversation API',
    scheme: {
      type: 'hmac-template',
      header: 'x-sinch-webhook-signature',
      encoding: 'base64',
      content: '{body}.{header:x-sinch-webhook-signature-nonce}.{header:x-sinch-webhook-signature-timestamp}',
      timestampHeader: 'x-sinch-webhook-signature-timestamp',
    },
    // Sinch names the trigger by the body's top-level key (message, message_delivery_report, ...), not a field:
    // the preset reads inbound messages (their id, and their channel as the type); other triggers override both.
    eventId: body('message.id'),
    eventType: body('message.channel_identity.channel'),
    tenantId: body('app_id'),
    proof: 'sdk',
    provedBy: '@sinch/sdk-core ConversationCallbackWebhooks#validateAuthenticationHeader',
    docs: 'https://developers.sinch.com/docs/conversation/callbacks/#validating-callback-requests',
  },
  {
    name: 'unit',
    title: 'Unit',
    scheme: bodyHmac('x-unit-signature', { algorithm: 'sha1', encoding: 'base64' }),
    eventId: body('data.0.id'),
    eventType: body('data.0.type'),
    proof: 'sdk',
    provedBy: '@unit-finance/unit-node-sdk Unit#webhooks.verify',
    docs: 'https://www.unit.co/docs/api/webhooks/#securing-your-webhooks',
  },
  {
    name: 'creem',
    title: 'Creem',
    scheme: bodyHmac('creem-signature', {}),
    eventId: body('id'),
    eventType: body('eventType'),
    proof: 'sdk',
    provedBy: 'creem verifyWebhookSignature',
    docs: 'https://docs.creem.io/learn/webhooks/verify-webhook-requests',
  },
  {
    name: 'messagebird',
    title: 'MessageBird (Bird) signed webhooks',
    scheme: {
      type: 'jwt',
      header: 'messagebird-signature-jwt',
      bodyHashClaim: 'payload_hash',
      issuer: 'MessageBird',
      urlHashClaim: 'url_hash',
    },
    eventId: body('message.id'),
    eventType: body('type'),
    proof: 'sdk',
    provedBy: 'messagebird webhook-signature-jwt verify (and the reference tokens the package ships)',
    docs: 'https://developers.messagebird.com/api/#verifying-http-requests',
  },
  {
    name: 'cloudinary',
    title: 'Cloudinary notifications',
    scheme: { type: 'secret-digest', header: 'x-cld-signature', timestampHeader: 'x-cld-timestamp' },
    // No event id: request_id is the operation's, shared by one request's notifications (an upload and
    // its eager transformations), which folded all but the first: the id is derived from the signed body.
    eventId: bodyHash,
    eventType: body('notification_type'),
    proof: 'sdk',
    provedBy: 'cloudinary utils.webhook_signature / utils.verifyNotificationSignature',
    docs: 'https://cloudinary.com/documentation/notifications#verifying_notification_signatures',
  },
  {
    name: 'hygraph',
    title: 'Hygraph',
    scheme: { type: 'hygraph' },
    // No event id: data.id is the entry's, shared by its operations (create, update, publish), which
    // folded all but the first: the id is derived from the signed body instead.
    eventId: bodyHash,
    eventType: body('operation'),
    proof: 'sdk',
    provedBy: '@hygraph/utils generateWebhookSignature / verifyWebhookSignature',
    docs: 'https://hygraph.com/docs/api-reference/basics/webhooks',
  },
  {
    name: 'livekit',
    title: 'LiveKit',
    // The source's secret is `<api key>:<api secret>`: the token is signed with the secret and issued by the key.
    scheme: { type: 'jwt', header: 'authorization', bodyHashClaim: 'sha256', bodyHashEncoding: 'base64', secretFormat: 'key:secret' },
    eventId: body('id'),
    eventType: body('event'),
    proof: 'sdk',
    provedBy: 'livekit-server-sdk AccessToken#toJwt / WebhookReceiver#receive',
    docs: 'https://docs.livekit.io/home/server/webhooks/',
  },
  // --- Handshakes by GET or query, token-only signatures, shared secrets, fetched keys ------------
  {
    name: 'meta',
    title: 'Meta (Facebook, Instagram, WhatsApp)',
    scheme: bodyHmac('x-hub-signature-256', { prefix: 'sha256=' }),
    // Meta sends no event id (one POST batches entry[] items, each without one): the id is derived
    // from the signed body. The type is `object` (whatsapp_business_account, page, instagram, ...),
    // present in every Meta product; entry.0.changes.0.field is absent from Messenger's entry[].messaging
    // deliveries, so a source that wants it (WhatsApp: messages) overrides eventType with that path.
    // The tenant is the first entry's id: the WhatsApp Business Account, Page or Instagram account.
    eventId: bodyHash,
    eventType: body('object'),
    tenantId: body('entry.0.id'),
    // GET ?hub.mode=subscribe&hub.verify_token=..&hub.challenge=..: the source sets verifyToken.
    handshake: 'meta-hub-challenge',
    proof: 'unproved',
    docs: 'https://developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads',
  },
  {
    name: 'dropbox',
    title: 'Dropbox',
    scheme: bodyHmac('x-dropbox-signature', {}),
    // A notification names only the accounts whose files changed ({"list_folder":{"accounts":[..]},
    // "delta":{"users":[..]}}): no id, no type. The id is derived from the signed body; one type.
    // Caveat: a later change to the same accounts sends the same bytes, so it is answered as a duplicate
    // of the first notification; consumers should treat one as "list_folder/continue for these accounts"
    // and not assume one notification per change (nothing signed tells a retry from a new notification).
    eventId: bodyHash,
    eventType: { value: 'dropbox.list_folder' },
    // GET ?challenge=..: echoed as text/plain with nosniff.
    handshake: 'dropbox-challenge',
    proof: 'unproved',
    docs: 'https://www.dropbox.com/developers/reference/webhooks',
  },
  {
    name: 'mailgun',
    title: 'Mailgun',
    // ONLY signature.timestamp and signature.token are signed, NOT the event data: the event id is the
    // signed token (fresh per delivery); type, tenant and key are fixed values (the source sets
    // tenantId and keyId as { value }). mailgun.js ships no verifier and the docs' example signature
    // is a placeholder, so: unproved.
    scheme: { type: 'mailgun' },
    eventId: body('signature.token'),
    eventType: { value: 'mailgun.event' },
    proof: 'unproved',
    docs: 'https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks',
  },
  {
    name: 'plaid',
    title: 'Plaid',
    // ES256 JWT; its kid's key fetched from /webhook_verification_key/get with the source's secret
    // `<client_id>:<secret>`. Plaid webhooks carry no event id, and item_id (used before) is shared by
    // every webhook of an item: the id is derived from the body, which the token's
    // request_body_sha256 claim signs.
    scheme: { type: 'jwks', header: 'plaid-verification' },
    eventId: bodyHash,
    eventType: body('webhook_code'),
    tenantId: body('item_id'),
    // The plaid package cannot sign and the docs publish no full vector (JWT + key + body).
    proof: 'unproved',
    docs: 'https://plaid.com/docs/api/webhooks/webhook-verification/',
  },
  {
    name: 'okta',
    title: 'Okta event hooks',
    // A shared secret in the Authorization header (nothing signed); GET one-time verification.
    scheme: { type: 'shared-secret', header: 'authorization' },
    eventId: body('eventId'),
    eventType: body('data.events.0.eventType'),
    handshake: 'okta-verification',
    proof: 'unproved',
    docs: 'https://developer.okta.com/docs/concepts/event-hooks/',
  },
  {
    name: 'microsoft-graph',
    title: 'Microsoft Graph change notifications',
    // clientState (a shared secret) in every value[] item; POST ?validationToken= answered first.
    scheme: { type: 'client-state' },
    eventId: body('value.0.id'),
    eventType: body('value.0.changeType'),
    tenantId: body('value.0.tenantId'),
    handshake: 'graph-validation-token',
    proof: 'unproved',
    docs: 'https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks',
  },
  // --- Listed, not yet proved: documented signature, no official npm verifier or published vector found yet
  ...(
    [
      [
        'paystack',
        'Paystack',
        bodyHmac('x-paystack-signature', { algorithm: 'sha512' }),
        'https://paystack.com/docs/payments/webhooks/#verify-event-origin',
      ],
      ['lemon-squeezy', 'Lemon Squeezy', bodyHmac('x-signature', {}), 'https://docs.lemonsqueezy.com/help/webhooks/signing-requests'],
      [
        'sentry',
        'Sentry integration platform',
        bodyHmac('sentry-hook-signature', {}),
        'https://docs.sentry.io/organization/integrations/integration-platform/webhooks/',
      ],
      [
        'typeform',
        'Typeform',
        bodyHmac('typeform-signature', { encoding: 'base64', prefix: 'sha256=' }),
        'https://www.typeform.com/developers/webhooks/secure-your-webhooks/',
      ],
      [
        'intercom',
        'Intercom',
        bodyHmac('x-hub-signature', { algorithm: 'sha1', prefix: 'sha1=' }),
        'https://developers.intercom.com/docs/webhooks/webhook-notifications',
      ],
      [
        'vercel',
        'Vercel',
        bodyHmac('x-vercel-signature', { algorithm: 'sha1' }),
        'https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks',
      ],
      ['asana', 'Asana', bodyHmac('x-hook-signature', {}), 'https://developers.asana.com/docs/webhooks-guide'],
      [
        'bitbucket',
        'Bitbucket Cloud',
        bodyHmac('x-hub-signature', { prefix: 'sha256=' }),
        'https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/',
      ],
      [
        'xero',
        'Xero',
        bodyHmac('x-xero-signature', { encoding: 'base64' }),
        'https://developer.xero.com/documentation/guides/webhooks/configuring-your-server',
      ],
      [
        'docusign',
        'DocuSign Connect',
        bodyHmac('x-docusign-signature-1', { encoding: 'base64' }),
        'https://developers.docusign.com/platform/webhooks/connect/hmac/',
      ],
      [
        'woocommerce',
        'WooCommerce',
        bodyHmac('x-wc-webhook-signature', { encoding: 'base64' }),
        'https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks',
      ],
      [
        'checkout',
        'Checkout.com',
        bodyHmac('cko-signature', {}),
        'https://www.checkout.com/docs/developer-resources/webhooks/manage-webhooks/verify-webhooks',
      ],
      ['calcom', 'Cal.com', bodyHmac('x-cal-signature-256', {}), 'https://cal.com/docs/developing/guides/automation/webhooks'],
      [
        'onfleet',
        'Onfleet',
        bodyHmac('x-onfleet-signature', { algorithm: 'sha512', secretEncoding: 'hex' }),
        'https://docs.onfleet.com/reference/secrets',
      ],
      [
        'calendly',
        'Calendly',
        { type: 'timestamped-hmac', header: 'calendly-webhook-signature' },
        'https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures',
      ],
      [
        'persona',
        'Persona',
        { type: 'timestamped-hmac', header: 'persona-signature' },
        'https://docs.withpersona.com/webhooks#checking-signatures',
      ],
    ] as const
  ).map(
    ([name, title, scheme, docs]): ProviderPreset => ({
      name,
      title,
      scheme,
      eventId: body('id'),
      eventType: body('type'),
      proof: 'unproved',
      docs,
    }),
  ),
];

const BY_NAME = new Map(PROVIDERS.map((p) => [p.name, p]));

export const PROVIDER_NAMES: readonly string[] = PROVIDERS.map((p) => p.name);

export function findProvider(name: string): ProviderPreset | undefined {
  return BY_NAME.get(name);
}

/** Up to three catalog names closest to a misspelt one: those it begins, then those within edit distance 3. */
export function closeProviderNames(name: string): string[] {
  const wanted = name.toLowerCase();
  return PROVIDER_NAMES.map((candidate) => ({
    candidate,
    rank: wanted.length >= 3 && candidate.startsWith(wanted) ? 0 : editDistance(wanted, candidate),
  }))
    .filter(({ rank }) => rank <= 3)
    .sort((a, b) => a.rank - b.rank || a.candidate.localeCompare(b.candidate))
    .slice(0, 3)
    .map(({ candidate }) => candidate);
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}

/** The catalog row `hookledger providers --json` prints (cli/commands/providers.ts). */
export interface ProviderSummary {
  readonly name: string;
  readonly scheme: string;
  readonly signedParts: string;
  readonly eventId: string;
  readonly handshake: string | null;
  readonly proof: Proof;
}
