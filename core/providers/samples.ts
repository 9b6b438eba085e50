/**
 * One sample event per provider, in the provider's own format, for `hookledger send --provider`:
 * the body (JSON, or form fields for Twilio), its content type, and the unsigned headers the
 * provider sends beside its signature (delivery ids, topics). The signature headers are not here:
 * `send` adds them with the preset's scheme (core/schemes), the same signer the proofs check with
 * the provider's own code (test/providers/sdk.test.ts). Keyed by catalog name, kept apart from the
 * catalog entries so adding a sample never touches an entry.
 *
 * Placeholders, filled by `renderSample`: `{{event_id}}` (a fresh event id, so a second send is a
 * new event, not a duplicate), `{{now_ms}}` and `{{now_s}}` (the send time). Where a provider's
 * event id is a header the scheme signs (Standard Webhooks' `webhook-id`), the signer's message id
 * is the fresh id and the sample needs none.
 */

export interface ProviderSample {
  readonly contentType: string;
  readonly body: string;
  /** Unsigned headers the provider sends with every delivery. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface SampleValues {
  readonly eventId: string;
  /** Epoch ms. */
  readonly now: number;
}

export const PROVIDER_SAMPLES: Readonly<Record<string, ProviderSample>> = {
  'standard-webhooks': { contentType: 'application/json', body: '{"type":"invoice.paid","data":{"id":"inv_01J8K7M2Q4"}}' },
  svix: { contentType: 'application/json', body: '{"type":"invoice.paid","data":{"id":"inv_01J8K7M2Q4"}}' },
  clerk: {
    contentType: 'application/json',
    body: '{"type":"user.created","object":"event","data":{"id":"user_2NNEqL2nrIRdJ194ndJqAHwEfxC"}}',
  },
  resend: {
    contentType: 'application/json',
    body: '{"type":"email.delivered","created_at":"2026-11-30T08:00:00.000Z","data":{"email_id":"4ef9a417-02e9-4d39-ad75-9611e0fcc33c"}}',
  },
  replicate: {
    contentType: 'application/json',
    body: '{"id":"ufawqhfynnddngldkgtslldrkq","status":"succeeded","model":"stability-ai/sdxl"}',
  },
  liveblocks: {
    contentType: 'application/json',
    body: '{"type":"userEntered","data":{"projectId":"pr_8Rt2Lm","roomId":"room_204","connectionId":42,"userId":"user_7","enteredAt":"2026-11-30T08:00:00.000Z","numActiveUsers":2}}',
  },
  polar: {
    contentType: 'application/json',
    body: '{"type":"order.paid","timestamp":"2026-11-30T08:00:00Z","data":{"id":"ord_01J8K7M2Q4"}}',
  },
  openai: {
    contentType: 'application/json',
    body: '{"id":"evt_685343a1381c819085d44c354e1b330e","object":"event","created_at":1750287018,"type":"response.completed","data":{"id":"resp_abc123"}}',
  },
  stripe: {
    contentType: 'application/json',
    body: '{"id":"{{event_id}}","object":"event","type":"invoice.paid","data":{"object":{"id":"in_8Rt2Lm"}}}',
  },
  workos: {
    contentType: 'application/json',
    body: '{"id":"{{event_id}}","event":"dsync.user.created","data":{"id":"directory_user_01E1X7B89OH8Y"},"created_at":"2026-11-30T08:00:00.000Z"}',
  },
  mux: {
    contentType: 'application/json',
    body: '{"type":"video.asset.ready","id":"{{event_id}}","object":{"type":"asset","id":"asset_204"}}',
  },
  paddle: {
    contentType: 'application/json',
    body: '{"event_id":"{{event_id}}","event_type":"subscription.created","occurred_at":"2026-11-30T08:00:00.000Z","data":{"id":"sub_01h8441"}}',
  },
  sanity: {
    contentType: 'application/json',
    body: '{"_id":"movie_204","_type":"movie","title":"Alien"}',
    headers: { 'idempotency-key': '{{event_id}}', 'sanity-operation': 'update' },
  },
  github: {
    contentType: 'application/json',
    body: '{"action":"opened","number":204,"installation":{"id":4210}}',
    headers: { 'x-github-delivery': '{{event_id}}', 'x-github-event': 'pull_request' },
  },
  shopify: {
    contentType: 'application/json',
    body: '{"id":820982911946154508,"email":"jon@example.com","total_price":"42.00"}',
    headers: {
      'x-shopify-topic': 'orders/create',
      'x-shopify-api-version': '2025-07',
      'x-shopify-shop-domain': 'acme.myshopify.com',
      'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
      'x-shopify-event-id': '{{event_id}}',
      'x-shopify-triggered-at': '2026-11-30T08:00:00Z',
    },
  },
  square: {
    contentType: 'application/json',
    body: '{"merchant_id":"6SSW7HV8K2ST5","type":"payment.updated","event_id":"{{event_id}}","data":{"id":"KkAkhdMs"}}',
  },
  line: {
    contentType: 'application/json',
    body: '{"destination":"U8e742f61d673b39c7fff3cecb7536ef0","events":[{"type":"message","webhookEventId":"{{event_id}}","timestamp":1625665242211}]}',
  },
  razorpay: {
    contentType: 'application/json',
    body: '{"entity":"event","account_id":"acc_BFQ7uQEaa7j2z7","event":"payment.captured","payload":{"payment":{"entity":{"id":"pay_29QQoUBi66xm2f"}}}}',
    headers: { 'x-razorpay-event-id': '{{event_id}}' },
  },
  'coinbase-commerce': {
    contentType: 'application/json',
    body: '{"id":1,"scheduled_for":"2026-11-30T08:00:00Z","event":{"id":"{{event_id}}","type":"charge:confirmed","data":{"code":"66BEOV2A"}}}',
  },
  gocardless: {
    contentType: 'application/json',
    body: '{"events":[{"id":"{{event_id}}","created_at":"2026-11-30T08:00:00.000Z","resource_type":"mandates","action":"cancelled","links":{"mandate":"MD0000XH9A3T4C","organisation":"OR123"}}]}',
  },
  linear: {
    contentType: 'application/json',
    body: '{"action":"create","type":"Issue","organizationId":"org_7f3e","webhookTimestamp":{{now_ms}},"data":{"id":"issue_204"}}',
    headers: { 'linear-delivery': '{{event_id}}' },
  },
  easypost: {
    contentType: 'application/json',
    body: '{"id":"{{event_id}}","object":"Event","description":"tracker.updated","result":{"id":"trk_204"}}',
  },
  hubspot: {
    contentType: 'application/json',
    body: '[{"eventId":{{now_ms}},"subscriptionId":2105,"portalId":62515,"occurredAt":1700000000000,"subscriptionType":"contact.creation","attemptNumber":0,"objectId":123}]',
  },
  elevenlabs: {
    contentType: 'application/json',
    body: '{"type":"post_call_transcription","event_timestamp":1739537297,"data":{"agent_id":"xyz","conversation_id":"{{event_id}}"}}',
  },
  vonage: {
    contentType: 'application/json',
    body: '{"message_uuid":"{{event_id}}","to":"447700900000","from":"AcmeInc","timestamp":"2026-11-30T08:00:00Z","status":"delivered","api_key":"abcd1234"}',
  },
  qstash: {
    contentType: 'application/json',
    body: '{"type":"order.created","order":"ord_01J8K7M2Q4"}',
    headers: { 'upstash-message-id': '{{event_id}}' },
  },
  lithic: {
    contentType: 'application/json',
    body: '{"event_type":"card.created","token":"a3f9c2e1-7b8d-4e6f-9a0b-5c2d9e7f1a3b","payload":{"card_token":"c_204"}}',
  },
  finch: {
    contentType: 'application/json',
    body: '{"account_id":"acc_7f3e","company_id":"cmp_204","event_type":"employment.updated","data":{"individual_id":"ind_42"}}',
  },
  imagekit: {
    contentType: 'application/json',
    body: '{"type":"video.transformation.ready","id":"1ad1a1c4-a4ed-4b6f-9f3a-8a4a1c1b2c3d","created_at":"2026-11-30T08:00:00.000Z","data":{"asset":{"url":"https://ik.imagekit.io/demo/v.mp4"}}}',
  },
  dodopayments: {
    contentType: 'application/json',
    body: '{"business_id":"bus_204","type":"payment.succeeded","timestamp":"2026-11-30T08:00:00Z","data":{"payment_id":"pay_01J8K7M2Q4"}}',
  },
  orb: {
    contentType: 'application/json',
    body: '{"id":"{{event_id}}","created_at":"2026-11-30T08:00:00+00:00","type":"invoice.issued","properties":{"invoice_id":"inv_204"}}',
  },
  metronome: {
    contentType: 'application/json',
    body: '{"id":"{{event_id}}","type":"alerts.low_remaining_credits_reached","properties":{"customer_id":"cus_204"}}',
  },
  'modern-treasury': {
    contentType: 'application/json',
    body: '{"event":"completed","data":{"id":"0f8e3719-3dfd-4613-9bbf-c0333781b59f","object":"payment_order","amount":4200}}',
    headers: { 'x-webhook-id': '{{event_id}}' },
  },
  box: {
    contentType: 'application/json',
    body: '{"type":"webhook_event","id":"{{event_id}}","created_at":"2026-11-30T08:00:00-08:00","trigger":"FILE.UPLOADED","source":{"id":"1234567890","type":"file"}}',
    headers: { 'box-signature-version': '1', 'box-signature-algorithm': 'HmacSHA256' },
  },
  discord: {
    contentType: 'application/json',
    body: '{"id":"{{event_id}}","application_id":"1114196498442174000","type":2,"guild_id":"613425648685547541","data":{"name":"hello"}}',
  },
  telnyx: {
    contentType: 'application/json',
    body: '{"data":{"event_type":"message.received","id":"{{event_id}}","payload":{"text":"hi"}},"meta":{"attempt":1}}',
  },
  sendgrid: {
    contentType: 'application/json',
    body: '[{"email":"ada@example.com","timestamp":1700000000,"event":"delivered","sg_event_id":"{{event_id}}","sg_message_id":"14c5d75ce93.dfd.64b469"}]',
  },
  twilio: {
    contentType: 'application/x-www-form-urlencoded',
    body: 'AccountSid=AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c&Body=Hello+%E2%82%AC&From=%2B14155550100&MessageSid={{event_id}}&MessageStatus=delivered&To=%2B14155550199',
  },
  zoom: {
    contentType: 'application/json',
    body: '{"event":"meeting.started","event_ts":1764489600000,"payload":{"account_id":"AAAAAABBBB","object":{"id":"85712345678","uuid":"4444AAAiAAAAAiAiAiiAii==","topic":"Standup"}}}',
    headers: { 'x-zm-trackingid': '{{event_id}}' },
  },
  notion: {
    contentType: 'application/json',
    body: '{"id":"{{event_id}}","timestamp":"2026-11-30T08:00:00.000Z","workspace_id":"13950b26-c203-4f3b-b97d-93ec06319565","subscription_id":"29d75c0d-5546-4414-8459-7b7a92f1fc4b","type":"page.created","entity":{"id":"153104cd-477e-809d-8dc4-ff2d96ae3090","type":"page"},"api_version":"2022-06-28","attempt_number":1}',
  },
  adyen: {
    contentType: 'application/json',
    body: '{"data":{"id":"{{event_id}}","sequenceNumber":1,"status":"received","type":"bankTransfer","balancePlatform":"YOUR_BALANCE_PLATFORM","amount":{"currency":"EUR","value":4200}},"environment":"test","timestamp":"2026-11-30T08:00:00+01:00","type":"balancePlatform.transfer.created"}',
  },
  pusher: {
    contentType: 'application/json',
    body: '{"time_ms":{{now_ms}},"events":[{"name":"channel_occupied","channel":"presence-room-204"}]}',
    headers: { 'x-pusher-key': 'pusher-app-key-278d' },
  },
  stream: {
    contentType: 'application/json',
    body: '{"type":"message.new","cid":"messaging:room-204","message":{"id":"msg-8f2c1a7e","text":"hi","user":{"id":"ada"}},"user":{"id":"ada"},"created_at":"2026-11-30T08:00:00.000Z"}',
    headers: { 'x-webhook-id': '{{event_id}}', 'x-api-key': 'stream-key-278d' },
  },
  onfido: {
    contentType: 'application/json',
    body: '{"payload":{"resource_type":"check","action":"check.completed","object":{"id":"{{event_id}}","status":"complete","completed_at_iso8601":"2026-11-30T08:00:00Z","href":"https://api.eu.onfido.com/v3.6/checks/3a4f5c6d-7e8f-4a0b-9c1d-2e3f4a5b6c7d"}}}',
  },
  fingerprint: {
    contentType: 'application/json',
    body: '{"requestId":"{{event_id}}","visitorId":"Ibk1527CUFmcnjLwIs4A","visitorFound":true,"timestamp":1708102555327,"url":"https://shop.example.com/checkout","ip":"203.0.113.7","bot":{"result":"notDetected"}}',
  },
  privy: {
    contentType: 'application/json',
    body: '{"type":"user.created","user":{"id":"did:privy:cm3np4u9j001rc8b73seqmqqk","created_at":1764489600}}',
  },
  retell: {
    contentType: 'application/json',
    body: '{"event":"call_ended","call":{"call_id":"{{event_id}}","agent_id":"oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD","call_status":"ended","start_timestamp":1764489600000}}',
  },
  hookdeck: {
    contentType: 'application/json',
    body: '{"type":"order.created","id":"ord_01J8K7M2Q4","amount":4200}',
    headers: { 'x-hookdeck-eventid': '{{event_id}}' },
  },
  sinch: {
    contentType: 'application/json',
    body: '{"app_id":"01EB37HMH1M6SV18ASNS3G135H","accepted_time":"2026-11-30T08:00:00.000Z","event_time":"2026-11-30T08:00:00.000Z","project_id":"c36f3d3d-1513-4edd-ae42-11995557ff61","message":{"id":"{{event_id}}","direction":"TO_APP","contact_message":{"text_message":{"text":"hi"}},"channel_identity":{"channel":"WHATSAPP","identity":"46732001122","app_id":"01EB37HMH1M6SV18ASNS3G135H"}}}',
    headers: { 'x-sinch-webhook-signature-algorithm': 'HmacSHA256' },
  },
  unit: {
    contentType: 'application/json',
    body: '{"data":[{"id":"{{event_id}}","type":"customer.created","attributes":{"createdAt":"2026-11-30T08:00:00.000Z","tags":{}},"relationships":{"customer":{"data":{"type":"customer","id":"120201"}}}}]}',
  },
  creem: {
    contentType: 'application/json',
    body: '{"id":"{{event_id}}","eventType":"checkout.completed","created_at":1764489600000,"object":{"id":"ch_4l0N34kxo16AhRKUHFUuXr","object":"checkout","status":"completed"}}',
  },
  messagebird: {
    contentType: 'application/json',
    body: '{"type":"message.created","contact":{"id":"9354647c5c144a2b4c99f2n42497249","msisdn":31612345678},"conversation":{"id":"2e15efafec384e1c82e9842075e87beb","status":"active"},"message":{"id":"{{event_id}}","direction":"received","status":"received","type":"text","content":{"text":"hi"}}}',
  },
  cloudinary: {
    contentType: 'application/json',
    body: '{"notification_type":"upload","timestamp":"2026-11-30T08:00:00+00:00","request_id":"{{event_id}}","asset_id":"ba8c1e7d31ab7c5c4c3e6b8b6a3c4d2e","public_id":"sample","version":1764489600,"resource_type":"image","type":"upload","secure_url":"https://res.cloudinary.com/demo/image/upload/v1764489600/sample.jpg"}',
  },
  hygraph: {
    contentType: 'application/json',
    body: '{"operation":"publish","data":{"__typename":"Post","id":"{{event_id}}","stage":"PUBLISHED","title":"Hello","updatedAt":"2026-11-30T08:00:00.000000+00:00"}}',
  },
  // Mailgun signs a token and a timestamp, which its scheme puts in the body's `signature` object
  // (the event id is the token); event-data is not signed.
  mailgun: {
    contentType: 'application/json',
    body: '{"event-data":{"id":"{{event_id}}","event":"delivered","timestamp":{{now_s}}.12,"recipient":"alice@example.com"}}',
  },
  okta: {
    contentType: 'application/json',
    body: '{"eventType":"com.okta.event_hook","eventTypeVersion":"1.0","eventId":"{{event_id}}","data":{"events":[{"uuid":"4a1b2c3d-0000-4000-8000-00000000a001","eventType":"user.session.start"}]}}',
  },
  // The scheme sets each item's clientState.
  'microsoft-graph': {
    contentType: 'application/json',
    body: '{"value":[{"id":"{{event_id}}","subscriptionId":"7f105c7d-2dc5-4530-97cd-4e7ae6534c07","changeType":"created","resource":"Users/622eaaff/Messages/AAMk","tenantId":"bb8775a4-4d8c-42cf-a1d4-4d58c2bb668f"}]}',
  },
  livekit: {
    contentType: 'application/webhook+json',
    body: '{"event":"room_started","room":{"sid":"RM_hycBMAjmt6Ub","name":"standup-204","emptyTimeout":300,"creationTime":"{{now_s}}"},"id":"{{event_id}}","createdAt":"{{now_s}}"}',
  },
  // Meta and Dropbox send no event id: intake derives it from the body (bh_ + the keyed hash), so
  // send reports the id intake answers with. Meta's message id and timestamp make each send new;
  // Dropbox's notification names only accounts, so sending it again is answered as a duplicate.
  meta: {
    contentType: 'application/json',
    body: '{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"field":"messages","value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},"messages":[{"from":"16505551234","id":"wamid.{{event_id}}","timestamp":"{{now_s}}","text":{"body":"hello"},"type":"text"}]}}]}]}',
  },
  dropbox: {
    contentType: 'application/json',
    body: '{"list_folder":{"accounts":["dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc"]},"delta":{"users":[12345]}}',
  },
  slack: {
    contentType: 'application/json',
    body: '{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","team_id":"T1DC2JH3J","api_app_id":"A0KRD7HC3","type":"event_callback","event_id":"{{event_id}}","event_time":{{now_s}},"event":{"type":"app_mention","user":"U2CERLKJA","text":"<@U0LAN0Z89> hi","ts":"1515449522.000016","channel":"C0LAN2Q65"}}',
  },
};

const PLACEHOLDER = /\{\{(event_id|now_ms|now_s)\}\}/g;

function fill(text: string, values: SampleValues): string {
  return text.replace(PLACEHOLDER, (_, name: string) =>
    name === 'event_id' ? values.eventId : name === 'now_ms' ? String(values.now) : String(Math.floor(values.now / 1000)),
  );
}

/** The provider's sample with its placeholders filled; undefined when the catalog entry has none. */
export function renderSample(provider: string, values: SampleValues): ProviderSample | undefined {
  const sample = PROVIDER_SAMPLES[provider];
  if (!sample) return undefined;
  const headers = Object.fromEntries(Object.entries(sample.headers ?? {}).map(([name, value]) => [name, fill(value, values)]));
  return { contentType: sample.contentType, body: fill(sample.body, values), ...(sample.headers ? { headers } : {}) };
}
