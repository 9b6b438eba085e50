/**
 * Catalog entries proved by the provider's own npm code (`proof: 'sdk'` in core/providers/catalog.ts).
 * A signature made by our own signer proves nothing about a provider, so for every entry:
 *   - where the provider's code can sign, our verifier accepts what it signed;
 *   - where it can verify, it accepts what our signer (`hookledger send --provider`) produced, and
 *     refuses the same request signed under another secret (so its "yes" means something);
 *   - our verifier refuses another secret, a tampered body and (where a timestamp is signed) a
 *     stale one, each with its code;
 *   - the preset's attribution reads the provider's event id and type from the sample.
 */
import '@shopify/shopify-api/adapters/node';
import { createHash, createSecretKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hmacValidator as AdyenHmacValidator } from '@adyen/api-library';
import { verifyWebhook as clerkVerifyWebhook } from '@clerk/backend/webhooks';
import EasyPostClient from '@easypost/api';
import { ElevenLabsClient } from '@elevenlabs/elevenlabs-js';
import { isValidWebhookSignature as isValidFingerprintSignature } from '@fingerprintjs/fingerprintjs-pro-server-api';
import { verifyWebhookSignature as hookdeckVerify } from '@hookdeck/sdk/webhooks/helpers';
import { Signature as HubSpotSignature } from '@hubspot/api-client';
import { generateWebhookSignature as hygraphSign, verifyWebhookSignature as hygraphVerify } from '@hygraph/utils';
import ImageKit from '@imagekit/nodejs';
import { validateSignature as lineValidateSignature } from '@line/bot-sdk';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { WebhookHandler as LiveblocksWebhookHandler } from '@liveblocks/node';
import Metronome from '@metronome/sdk';
import { Mux } from '@mux/mux-node';
import { signWebhookPayload as notionSign, verifyWebhookSignature as notionVerify } from '@notionhq/client';
import { sign as octokitSign, verify as octokitVerify } from '@octokit/webhooks-methods';
import { WebhookEventVerifier as OnfidoWebhookEventVerifier } from '@onfido/api';
import { Environment, Paddle } from '@paddle/paddle-node-sdk';
import { webhooks as polarWebhooks } from '@polar-sh/sdk/2027-01';
import { PrivyClient } from '@privy-io/server-auth';
import { encodeSignatureHeader, isValidSignature } from '@sanity/webhook';
import { EventWebhook } from '@sendgrid/eventwebhook';
import { ApiVersion, shopifyApi } from '@shopify/shopify-api';
import { ConversationCallbackWebhooks as SinchConversationWebhooks } from '@sinch/sdk-core';
import { isValidSlackRequest } from '@slack/bolt';
import Finch from '@tryfinch/finch-api';
import { Unit } from '@unit-finance/unit-node-sdk';
import { Receiver as QStashReceiver } from '@upstash/qstash';
import { verifySignature as vonageVerifySignature } from '@vonage/jwt';
import { WorkOS } from '@workos-inc/node';
import { AwsLambdaReceiver as ZoomLambdaReceiver } from '@zoom/rivet/accounts';
import { WebhooksManager as BoxWebhooks } from 'box-node-sdk/lib/managers/webhooks';
import { v2 as cloudinary } from 'cloudinary';
import coinbase from 'coinbase-commerce-node';
import { verifyWebhookSignature as creemVerifyWebhookSignature } from 'creem/webhooks';
import { verifyKey as discordVerifyKey } from 'discord-interactions';
import DodoPayments from 'dodopayments';
import * as gocardlessWebhooks from 'gocardless-nodejs/webhooks';
import Lithic from 'lithic';
import { AccessToken as LiveKitAccessToken, WebhookReceiver as LiveKitWebhookReceiver } from 'livekit-server-sdk';
import { verify as messagebirdVerify } from 'messagebird/lib/webhook-signature-jwt';
import ModernTreasury from 'modern-treasury';
import OpenAI from 'openai';
import Orb from 'orb-billing';
import Pusher from 'pusher';
import Razorpay from 'razorpay';
import { validateWebhook as replicateValidateWebhook } from 'replicate';
import { Resend } from 'resend';
import { sign as retellSign, verify as retellVerify } from 'retell-sdk';
import { WebhooksHelper } from 'square';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { StreamChat } from 'stream-chat';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import { TelnyxWebhook } from 'telnyx/lib/webhooks';
import twilio from 'twilio';
import { describe, expect, it, vi } from 'vitest';
import { PROVIDERS } from '../../core/providers/catalog';
import { providerRequest } from '../../ops/send';
import {
  accepts,
  attributionOf,
  ed25519Pair,
  hasTimestamp,
  NOW,
  p256Pair,
  type Request,
  signWith,
  sourceFor,
  TOLERANCE,
  verifyWith,
} from './support';

const NOW_S = NOW / 1000;

interface SdkProof {
  readonly provider: string;
  /** A sample event in the provider's shape. */
  readonly body: string;
  /** What the preset's attribution reads from the sample (and `headers`). */
  readonly expected: { readonly eventId: string; readonly eventType: string };
  /** What the source stores and verifies with (a public key for ed25519 and ECDSA). */
  readonly secret: string;
  /** Another valid secret of the same shape. */
  readonly otherSecret: string;
  /** What our signer signs with, when it is not `secret` (a private key). */
  readonly signingSecret?: string;
  readonly otherSigningSecret?: string;
  readonly url?: string;
  /** Unsigned headers the provider sends beside the signature (delivery ids, topics). */
  readonly headers?: Record<string, string>;
  /** The provider's code signs `body` with `secret`: the headers it would send. */
  readonly sdkSign?: (body: string, secret: string) => Record<string, string> | Promise<Record<string, string>>;
  /** The provider's code verifies: resolves true only when it accepts. */
  readonly sdkVerify?: (request: Request, secret: string) => Promise<boolean>;
}

const svixHeaders = (prefix: 'webhook' | 'svix', headers: Record<string, string>) => ({
  id: headers[`${prefix}-id`]!,
  timestamp: headers[`${prefix}-timestamp`]!,
  signature: headers[`${prefix}-signature`]!,
});

const twilioAccount = 'AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c';
const twilioUrl = 'https://hooks.example.com/hooks/acme?tenant=tenant_204';
const twilioJsonUrl = (body: string) =>
  `https://hooks.example.com/hooks/acme?bodySHA256=${createHash('sha256').update(body).digest('hex')}`;

const discordKeys = ed25519Pair();
const discordOther = ed25519Pair();
const telnyxKeys = ed25519Pair();
const telnyxOther = ed25519Pair();
const sendgridKeys = p256Pair();
const sendgridOther = p256Pair();

const PROOFS: readonly SdkProof[] = [
  {
    provider: 'standard-webhooks',
    body: '{"type":"invoice.paid","data":{"id":"inv_01J8K7M2Q4"}}',
    expected: { eventId: 'msg_2Kp7QeWd9Lm', eventType: 'invoice.paid' },
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    sdkSign: (body, secret) => ({
      'webhook-id': 'msg_2Kp7QeWd9Lm',
      'webhook-timestamp': String(NOW_S),
      'webhook-signature': new StandardWebhook(secret).sign('msg_2Kp7QeWd9Lm', new Date(NOW), body),
    }),
    sdkVerify: async ({ body, headers }, secret) => accepts(() => new StandardWebhook(secret).verify(body, headers)),
  },
  {
    provider: 'svix',
    body: '{"type":"invoice.paid","data":{"id":"inv_01J8K7M2Q4"}}',
    expected: { eventId: 'msg_2Kp7QeWd9Lm', eventType: 'invoice.paid' },
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    sdkSign: (body, secret) => ({
      'svix-id': 'msg_2Kp7QeWd9Lm',
      'svix-timestamp': String(NOW_S),
      'svix-signature': new SvixWebhook(secret).sign('msg_2Kp7QeWd9Lm', new Date(NOW), body),
    }),
    sdkVerify: async ({ body, headers }, secret) => accepts(() => new SvixWebhook(secret).verify(body, headers)),
  },
  {
    provider: 'clerk',
    body: '{"type":"user.created","object":"event","data":{"id":"user_2NNEqL2nrIRdJ194ndJqAHwEfxC"}}',
    expected: { eventId: 'msg_2Kp7QeWd9Lm', eventType: 'user.created' },
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() =>
        clerkVerifyWebhook(new Request('https://hooks.example.com/hooks/acme', { method: 'POST', headers, body }), {
          signingSecret: secret,
        }),
      ),
  },
  {
    provider: 'resend',
    body: '{"type":"email.delivered","created_at":"2026-11-30T08:00:00.000Z","data":{"email_id":"4ef9a417-02e9-4d39-ad75-9611e0fcc33c"}}',
    expected: { eventId: 'msg_2Kp7QeWd9Lm', eventType: 'email.delivered' },
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() =>
        new Resend('re_test_5tQw9Lr2').webhooks.verify({ payload: body, headers: svixHeaders('svix', headers), webhookSecret: secret }),
      ),
  },
  {
    provider: 'replicate',
    body: '{"id":"ufawqhfynnddngldkgtslldrkq","status":"succeeded","model":"stability-ai/sdxl"}',
    expected: { eventId: 'msg_2Kp7QeWd9Lm', eventType: 'succeeded' },
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => replicateValidateWebhook({ ...svixHeaders('webhook', headers), body, secret })),
  },
  {
    provider: 'liveblocks',
    body: '{"type":"userEntered","data":{"projectId":"pr_8Rt2Lm","roomId":"room_204","connectionId":42,"userId":"user_7","enteredAt":"2026-11-30T08:00:00.000Z","numActiveUsers":2}}',
    expected: { eventId: 'msg_2Kp7QeWd9Lm', eventType: 'userEntered' },
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => new LiveblocksWebhookHandler(secret).verifyRequest({ headers, rawBody: body })),
  },
  {
    provider: 'polar',
    body: '{"type":"order.paid","timestamp":"2026-11-30T08:00:00Z","data":{"id":"ord_01J8K7M2Q4"}}',
    expected: { eventId: 'msg_2Kp7QeWd9Lm', eventType: 'order.paid' },
    secret: 'polar_whs_8f2c1a7e5b3d9c4e6f0a',
    otherSecret: 'polar_whs_0f9e8d7c6b5a4f3e2d1c',
    sdkVerify: async ({ body, headers }, secret) => accepts(() => polarWebhooks.validateEvent(body, headers, secret)),
  },
  {
    provider: 'openai',
    body: '{"id":"evt_685343a1381c819085d44c354e1b330e","object":"event","created_at":1750287018,"type":"response.completed","data":{"id":"resp_abc123"}}',
    expected: { eventId: 'msg_2Kp7QeWd9Lm', eventType: 'response.completed' },
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => new OpenAI({ apiKey: 'sk-test-unused' }).webhooks.verifySignature(body, headers, secret, TOLERANCE)),
  },
  {
    provider: 'stripe',
    body: '{"id":"evt_1Qb7XcLkdIwHu7ix","object":"event","type":"invoice.paid","data":{"object":{"id":"in_8Rt2Lm"}}}',
    expected: { eventId: 'evt_1Qb7XcLkdIwHu7ix', eventType: 'invoice.paid' },
    secret: 'whsec_4eC39HqLyjWDarjtT1zdp7dc9Kq2',
    otherSecret: 'whsec_7Yb2NcX1pQ8rTs3VuW5zLm4Kd6Hj',
    sdkSign: (body, secret) => ({
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: NOW_S }),
    }),
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => Stripe.webhooks.constructEvent(body, headers['stripe-signature']!, secret, TOLERANCE)),
  },
  {
    provider: 'workos',
    body: '{"id":"event_01J8K7M2Q4XYZ","event":"dsync.user.created","data":{"id":"directory_user_01E1X7B89OH8Y"},"created_at":"2026-11-30T08:00:00.000Z"}',
    expected: { eventId: 'event_01J8K7M2Q4XYZ', eventType: 'dsync.user.created' },
    secret: 'wos_whsec_5f1c9a2e7b3d',
    otherSecret: 'wos_whsec_0f9e8d7c6b5a',
    sdkSign: async (body, secret) => {
      const signature = await new WorkOS('sk_test_unused').webhooks.computeSignature(NOW, body as never, secret);
      return { 'workos-signature': `t=${NOW}, v1=${signature}` };
    },
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() =>
        new WorkOS('sk_test_unused').webhooks.constructEvent({ payload: body as never, sigHeader: headers['workos-signature']!, secret }),
      ),
  },
  {
    provider: 'mux',
    body: '{"type":"video.asset.ready","id":"3f9a2b7c-1d8e-4f6a-0b5c-2d9e7f1a3b4c","object":{"type":"asset","id":"asset_204"}}',
    expected: { eventId: '3f9a2b7c-1d8e-4f6a-0b5c-2d9e7f1a3b4c', eventType: 'video.asset.ready' },
    secret: 'mux-webhook-secret-8f2c1a7e',
    otherSecret: 'mux-webhook-secret-0f9e8d7c',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => new Mux({ tokenId: 'unused', tokenSecret: 'unused' }).webhooks.verifySignature(body, headers, secret)),
  },
  {
    provider: 'paddle',
    body: '{"event_id":"evt_01h8441jn5pcwrfhwh78jqt8hk","event_type":"subscription.created","occurred_at":"2026-11-30T08:00:00.000Z","data":{"id":"sub_01h8441"}}',
    expected: { eventId: 'evt_01h8441jn5pcwrfhwh78jqt8hk', eventType: 'subscription.created' },
    secret: 'pdl_ntfset_01h8441_5f1c9a2e7b3d',
    otherSecret: 'pdl_ntfset_01h8441_0f9e8d7c6b5a',
    sdkVerify: async ({ body, headers }, secret) =>
      (await new Paddle('pdl_sdbx_apikey_unused', { environment: Environment.sandbox }).webhooks
        .isSignatureValid(body, secret, headers['paddle-signature']!)
        .catch(() => false)) === true,
  },
  {
    provider: 'sanity',
    body: '{"_id":"movie_204","_type":"movie","title":"Alien"}',
    expected: { eventId: 'c2f9a1d7-3b8e-4f6a-9d0c-5e7b1a2f3c4d', eventType: 'update' },
    secret: 'sanity-webhook-secret-8f2c',
    otherSecret: 'sanity-webhook-secret-0f9e',
    headers: { 'idempotency-key': 'c2f9a1d7-3b8e-4f6a-9d0c-5e7b1a2f3c4d', 'sanity-operation': 'update' },
    sdkSign: async (body, secret) => ({ 'sanity-webhook-signature': await encodeSignatureHeader(body, NOW, secret) }),
    sdkVerify: async ({ body, headers }, secret) =>
      (await isValidSignature(body, headers['sanity-webhook-signature']!, secret).catch(() => false)) === true,
  },
  {
    provider: 'github',
    body: '{"action":"opened","number":204,"installation":{"id":4210}}',
    expected: { eventId: 'd3b07384-d9a0-4c9f-8d6e-2f1b7c0e5a11', eventType: 'pull_request' },
    secret: 'gh_webhook_secret_7Hq2xV9pLm4',
    otherSecret: 'gh_webhook_secret_0f9e8d7c6b5a',
    headers: { 'x-github-delivery': 'd3b07384-d9a0-4c9f-8d6e-2f1b7c0e5a11', 'x-github-event': 'pull_request' },
    sdkSign: async (body, secret) => ({ 'x-hub-signature-256': await octokitSign(secret, body) }),
    sdkVerify: async ({ body, headers }, secret) => octokitVerify(secret, body, headers['x-hub-signature-256']!).catch(() => false),
  },
  {
    provider: 'shopify',
    body: '{"id":820982911946154508,"email":"jon@example.com","total_price":"42.00"}',
    expected: { eventId: '98880550-7158-44d4-b7cd-2c97c8a091b5', eventType: 'orders/create' },
    secret: 'shpss_9f2c1a7e5b3d',
    otherSecret: 'shpss_0f9e8d7c6b5a',
    headers: {
      'x-shopify-topic': 'orders/create',
      'x-shopify-api-version': '2025-07',
      'x-shopify-shop-domain': 'acme.myshopify.com',
      'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
      'x-shopify-event-id': '98880550-7158-44d4-b7cd-2c97c8a091b5',
      'x-shopify-triggered-at': '2026-11-30T08:00:00Z',
    },
    sdkVerify: async ({ body, headers }, secret) => {
      const shopify = shopifyApi({
        apiKey: 'unused',
        apiSecretKey: secret,
        scopes: [],
        hostName: 'hooks.example.com',
        apiVersion: ApiVersion.July25,
        isEmbeddedApp: false,
        logger: { level: 0 } as never,
      });
      const result = await shopify.webhooks.validate({
        rawBody: body,
        rawRequest: { method: 'POST', url: '/hooks/acme', headers } as never,
        rawResponse: {} as never,
      });
      return result.valid;
    },
  },
  {
    provider: 'square',
    body: '{"merchant_id":"6SSW7HV8K2ST5","type":"payment.updated","event_id":"13b867cf-db3d-4b1c-90b6-2f32a9d78124","data":{"id":"KkAkhdMs"}}',
    expected: { eventId: '13b867cf-db3d-4b1c-90b6-2f32a9d78124', eventType: 'payment.updated' },
    secret: 'sq0wsk-8f2c1a7e5b3d9c4e6f0a',
    otherSecret: 'sq0wsk-0f9e8d7c6b5a4f3e2d1c',
    url: 'https://hooks.example.com/hooks/acme',
    sdkVerify: async ({ body, headers, url }, secret) =>
      accepts(() =>
        WebhooksHelper.verifySignature({
          requestBody: body,
          signatureHeader: headers['x-square-hmacsha256-signature']!,
          signatureKey: secret,
          notificationUrl: url!,
        }),
      ),
  },
  {
    provider: 'line',
    body: '{"destination":"U8e742f61d673b39c7fff3cecb7536ef0","events":[{"type":"message","webhookEventId":"01FZ74A0TDDPYRVKNK77XKC3ZR","timestamp":1625665242211}]}',
    expected: { eventId: '01FZ74A0TDDPYRVKNK77XKC3ZR', eventType: 'message' },
    secret: '8c570fa6dd201bb328f1c1eac23a96d8',
    otherSecret: '0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c',
    sdkVerify: async ({ body, headers }, secret) => lineValidateSignature(body, secret, headers['x-line-signature']!),
  },
  {
    provider: 'razorpay',
    body: '{"entity":"event","account_id":"acc_BFQ7uQEaa7j2z7","event":"payment.captured","payload":{"payment":{"entity":{"id":"pay_29QQoUBi66xm2f"}}}}',
    expected: { eventId: 'evt_HxPq2Rm7Lk', eventType: 'payment.captured' },
    secret: 'rzp_webhook_secret_8f2c',
    otherSecret: 'rzp_webhook_secret_0f9e',
    headers: { 'x-razorpay-event-id': 'evt_HxPq2Rm7Lk' },
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => Razorpay.validateWebhookSignature(body, headers['x-razorpay-signature']!, secret)),
  },
  {
    provider: 'coinbase-commerce',
    body: '{"id":1,"scheduled_for":"2026-11-30T08:00:00Z","event":{"id":"24934862-d980-46cb-9402-43c81b0cdba6","type":"charge:confirmed","data":{"code":"66BEOV2A"}}}',
    expected: { eventId: '24934862-d980-46cb-9402-43c81b0cdba6', eventType: 'charge:confirmed' },
    secret: 'cc-shared-secret-8f2c1a7e',
    otherSecret: 'cc-shared-secret-0f9e8d7c',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => coinbase.Webhook.verifySigHeader(body, headers['x-cc-webhook-signature']!, secret)),
  },
  {
    provider: 'gocardless',
    body: '{"events":[{"id":"EV00BD05S5VM2T","created_at":"2026-11-30T08:00:00.000Z","resource_type":"mandates","action":"cancelled","links":{"mandate":"MD0000XH9A3T4C","organisation":"OR123"}}]}',
    expected: { eventId: 'EV00BD05S5VM2T', eventType: 'mandates' },
    secret: 'gc-webhook-secret-8f2c1a7e',
    otherSecret: 'gc-webhook-secret-0f9e8d7c',
    sdkVerify: async ({ body, headers }, secret) => accepts(() => gocardlessWebhooks.parse(body, secret, headers['webhook-signature']!)),
  },
  {
    provider: 'linear',
    body: `{"action":"create","type":"Issue","organizationId":"org_7f3e","webhookTimestamp":${NOW},"data":{"id":"issue_204"}}`,
    expected: { eventId: '4c3b9f7e-2a1d-4e8f-9b6c-0d5e7a1f3b2c', eventType: 'Issue' },
    secret: 'lin_wh_8f2c1a7e5b3d9c4e',
    otherSecret: 'lin_wh_0f9e8d7c6b5a4f3e',
    headers: { 'linear-delivery': '4c3b9f7e-2a1d-4e8f-9b6c-0d5e7a1f3b2c' },
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => new LinearWebhookClient(secret).verify(Buffer.from(body), headers['linear-signature']!)),
  },
  {
    provider: 'easypost',
    body: '{"id":"evt_3f9a2b7c1d8e4f6a","object":"Event","description":"tracker.updated","result":{"id":"trk_204"}}',
    expected: { eventId: 'evt_3f9a2b7c1d8e4f6a', eventType: 'tracker.updated' },
    secret: 'easypost-webhook-secret-8f2c',
    otherSecret: 'easypost-webhook-secret-0f9e',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => new EasyPostClient('EZTK_unused').Utils.validateWebhook(Buffer.from(body), headers, secret)),
  },
  {
    provider: 'hubspot',
    body: '[{"eventId":1964547513,"subscriptionId":2105,"portalId":62515,"occurredAt":1700000000000,"subscriptionType":"contact.creation","attemptNumber":0,"objectId":123}]',
    expected: { eventId: '1964547513', eventType: 'contact.creation' },
    secret: 'hubspot-client-secret-8f2c1a7e',
    otherSecret: 'hubspot-client-secret-0f9e8d7c',
    url: 'https://hooks.example.com/hooks/acme',
    sdkSign: (body, secret) => ({
      'x-hubspot-request-timestamp': String(NOW),
      'x-hubspot-signature-v3': HubSpotSignature.getSignature('POST', 'v3', {
        signature: '',
        clientSecret: secret,
        requestBody: body,
        url: 'https://hooks.example.com/hooks/acme',
        timestamp: NOW,
      }),
    }),
    sdkVerify: async ({ body, headers, url }, secret) =>
      accepts(() =>
        HubSpotSignature.isValid({
          signatureVersion: 'v3',
          signature: headers['x-hubspot-signature-v3']!,
          clientSecret: secret,
          requestBody: body,
          url: url!,
          timestamp: Number(headers['x-hubspot-request-timestamp']),
        }),
      ),
  },
  {
    provider: 'elevenlabs',
    body: '{"type":"post_call_transcription","event_timestamp":1739537297,"data":{"agent_id":"xyz","conversation_id":"conv_01J8K7M2Q4"}}',
    expected: { eventId: 'bh_2c2e834c9a3539e51cae8bb0aef2ce8aefbd80002b3a165318def87a70f04754', eventType: 'post_call_transcription' },
    secret: 'wsec_8f2c1a7e5b3d9c4e6f0a',
    otherSecret: 'wsec_0f9e8d7c6b5a4f3e2d1c',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => new ElevenLabsClient({ apiKey: 'unused' }).webhooks.constructEvent(body, headers['elevenlabs-signature']!, secret)),
  },
  {
    provider: 'vonage',
    body: '{"message_uuid":"aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab","to":"447700900000","from":"AcmeInc","timestamp":"2026-11-30T08:00:00Z","status":"delivered","api_key":"abcd1234"}',
    expected: { eventId: 'aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab', eventType: 'delivered' },
    secret: 'vonage-signature-secret-8f2c1a7e5b3d9c4e',
    otherSecret: 'vonage-signature-secret-0f9e8d7c6b5a4f3e',
    sdkVerify: async ({ headers }, secret) => vonageVerifySignature(headers.authorization!.replace(/^Bearer /, ''), secret),
  },
  {
    provider: 'qstash',
    body: '{"type":"order.created","order":"ord_01J8K7M2Q4"}',
    expected: { eventId: 'msg_26hZCxZCuWyyTWPmSVBrNB882AMR', eventType: 'order.created' },
    secret: 'sig_7RvLjqfZBvP5KEUimQCE1pvpLuou',
    otherSecret: 'sig_5ZB6DVzB1wjE8S6rZ7eenA8Pdnhs',
    url: 'https://hooks.example.com/hooks/acme',
    headers: { 'upstash-message-id': 'msg_26hZCxZCuWyyTWPmSVBrNB882AMR' },
    sdkVerify: async ({ body, headers, url }, secret) =>
      accepts(() =>
        new QStashReceiver({ currentSigningKey: secret, nextSigningKey: secret }).verify({
          signature: headers['upstash-signature']!,
          body,
          url,
        }),
      ),
  },
  {
    provider: 'lithic',
    body: '{"event_type":"card.created","token":"a3f9c2e1-7b8d-4e6f-9a0b-5c2d9e7f1a3b","payload":{"card_token":"c_204"}}',
    expected: { eventId: 'msg_2Kp7QeWd9Lm', eventType: 'card.created' },
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => new Lithic({ apiKey: 'unused' }).webhooks.verifySignature(body, headers, secret)),
  },
  {
    provider: 'finch',
    body: '{"account_id":"acc_7f3e","company_id":"cmp_204","event_type":"employment.updated","data":{"individual_id":"ind_42"}}',
    expected: { eventId: 'msg_2Kp7QeWd9Lm', eventType: 'employment.updated' },
    secret: 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => new Finch({ accessToken: 'unused' }).webhooks.verifySignature(body, headers, secret)),
  },
  {
    provider: 'imagekit',
    body: '{"type":"video.transformation.ready","id":"1ad1a1c4-a4ed-4b6f-9f3a-8a4a1c1b2c3d","created_at":"2026-11-30T08:00:00.000Z","data":{"asset":{"url":"https://ik.imagekit.io/demo/v.mp4"}}}',
    expected: { eventId: 'msg_2Kp7QeWd9Lm', eventType: 'video.transformation.ready' },
    secret: 'ik_whsec_8f2c1a7e5b3d9c4e',
    otherSecret: 'ik_whsec_0f9e8d7c6b5a4f3e',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => new ImageKit({ privateKey: 'unused' }).webhooks.unwrap(body, { headers, key: secret })),
  },
  {
    provider: 'dodopayments',
    body: '{"business_id":"bus_204","type":"payment.succeeded","timestamp":"2026-11-30T08:00:00Z","data":{"payment_id":"pay_01J8K7M2Q4"}}',
    expected: { eventId: 'msg_2Kp7QeWd9Lm', eventType: 'payment.succeeded' },
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => new DodoPayments({ bearerToken: 'unused' }).webhooks.unwrap(body, { headers, key: secret })),
  },
  {
    provider: 'orb',
    body: '{"id":"evt_Orb7Kq2Lm9","created_at":"2026-11-30T08:00:00+00:00","type":"invoice.issued","properties":{"invoice_id":"inv_204"}}',
    expected: { eventId: 'evt_Orb7Kq2Lm9', eventType: 'invoice.issued' },
    secret: 'orb_whsec_8f2c1a7e5b3d9c4e',
    otherSecret: 'orb_whsec_0f9e8d7c6b5a4f3e',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => new Orb({ apiKey: 'unused' }).webhooks.verifySignature(body, headers, secret)),
  },
  {
    provider: 'metronome',
    body: '{"id":"c8e1e8f4-6b0f-4d0e-9c7f-2f1b7c0e5a11","type":"alerts.low_remaining_credits_reached","properties":{"customer_id":"cus_204"}}',
    expected: { eventId: 'c8e1e8f4-6b0f-4d0e-9c7f-2f1b7c0e5a11', eventType: 'alerts.low_remaining_credits_reached' },
    secret: 'metronome-webhook-secret-8f2c',
    otherSecret: 'metronome-webhook-secret-0f9e',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => new Metronome({ bearerToken: 'unused' }).webhooks.verifySignature(body, headers, secret)),
  },
  {
    provider: 'modern-treasury',
    body: '{"event":"completed","data":{"id":"0f8e3719-3dfd-4613-9bbf-c0333781b59f","object":"payment_order","amount":4200}}',
    expected: { eventId: 'whk_7Rt2Lm9Kq', eventType: 'completed' },
    secret: 'mt-webhook-key-8f2c1a7e',
    otherSecret: 'mt-webhook-key-0f9e8d7c',
    headers: { 'x-webhook-id': 'whk_7Rt2Lm9Kq' },
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() =>
        new ModernTreasury({ apiKey: 'unused', organizationID: 'unused' }).webhooks.validateSignature(body, headers, { key: secret }),
      ),
  },
  {
    provider: 'box',
    body: '{"type":"webhook_event","id":"eb0c4e06-751f-442c-86f8-fd5bb404dbec","created_at":"2026-11-30T08:00:00-08:00","trigger":"FILE.UPLOADED","source":{"id":"1234567890","type":"file"}}',
    expected: { eventId: 'eb0c4e06-751f-442c-86f8-fd5bb404dbec', eventType: 'FILE.UPLOADED' },
    secret: 'SamplePrimaryKey8f2c1a7e',
    otherSecret: 'SamplePrimaryKey0f9e8d7c',
    headers: { 'box-signature-version': '1', 'box-signature-algorithm': 'HmacSHA256' },
    sdkVerify: async ({ body, headers }, secret) => accepts(() => BoxWebhooks.validateMessage(body, headers, secret)),
  },
  {
    provider: 'discord',
    body: '{"id":"1114196498442174495","application_id":"1114196498442174000","type":2,"guild_id":"613425648685547541","data":{"name":"hello"}}',
    expected: { eventId: '1114196498442174495', eventType: '2' },
    secret: discordKeys.raw.toString('hex'),
    otherSecret: discordOther.raw.toString('hex'),
    signingSecret: discordKeys.seed.toString('hex'),
    otherSigningSecret: discordOther.seed.toString('hex'),
    sdkVerify: async ({ body, headers }, secret) =>
      discordVerifyKey(body, headers['x-signature-ed25519']!, headers['x-signature-timestamp']!, secret).catch(() => false),
  },
  {
    provider: 'telnyx',
    body: '{"data":{"event_type":"message.received","id":"0ccc7b54-4df3-4bca-a65a-3da1ecc777f0","payload":{"text":"hi"}},"meta":{"attempt":1}}',
    expected: { eventId: '0ccc7b54-4df3-4bca-a65a-3da1ecc777f0', eventType: 'message.received' },
    secret: telnyxKeys.raw.toString('base64'),
    otherSecret: telnyxOther.raw.toString('base64'),
    signingSecret: telnyxKeys.seed.toString('base64'),
    otherSigningSecret: telnyxOther.seed.toString('base64'),
    sdkVerify: async ({ body, headers }, secret) => accepts(() => new TelnyxWebhook(secret).verify(body, headers)),
  },
  {
    provider: 'sendgrid',
    body: '[{"email":"ada@example.com","timestamp":1700000000,"event":"delivered","sg_event_id":"sg_evt_8f2c1a7e5b3d","sg_message_id":"14c5d75ce93.dfd.64b469"}]',
    expected: { eventId: 'sg_evt_8f2c1a7e5b3d', eventType: 'delivered' },
    secret: sendgridKeys.publicKey,
    otherSecret: sendgridOther.publicKey,
    signingSecret: sendgridKeys.privateKey,
    otherSigningSecret: sendgridOther.privateKey,
    sdkVerify: async ({ body, headers }, secret) => {
      const webhook = new EventWebhook();
      return webhook.verifySignature(
        webhook.convertPublicKeyToECDSA(secret),
        body,
        headers['x-twilio-email-event-webhook-signature']!,
        headers['x-twilio-email-event-webhook-timestamp']!,
      );
    },
  },
  {
    provider: 'twilio',
    body: `AccountSid=${twilioAccount}&Body=Hello+%E2%82%AC&From=%2B14155550100&MessageSid=SM1f0e8ae6ade43cb3c0ce4525424e404f&MessageStatus=delivered&To=%2B14155550199`,
    expected: { eventId: 'SM1f0e8ae6ade43cb3c0ce4525424e404f', eventType: 'delivered' },
    secret: '9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a',
    otherSecret: '0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c',
    url: twilioUrl,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    sdkSign: (body, secret) => ({
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(secret, twilioUrl, Object.fromEntries(new URLSearchParams(body))),
    }),
    sdkVerify: async ({ body, headers, url }, secret) =>
      twilio.validateRequest(secret, headers['x-twilio-signature']!, url!, Object.fromEntries(new URLSearchParams(body))),
  },
  {
    provider: 'zoom',
    body: '{"event":"meeting.started","event_ts":1764489600000,"payload":{"account_id":"AAAAAABBBB","object":{"id":"85712345678","uuid":"4444AAAiAAAAAiAiAiiAii==","topic":"Standup"}}}',
    expected: { eventId: 'rbSlg1xbQxKXUaeQ04P7Ig', eventType: 'meeting.started' },
    secret: 'zoom-secret-token-8f2c1a7e5b3d',
    otherSecret: 'zoom-secret-token-0f9e8d7c6b5a',
    headers: { 'x-zm-trackingid': 'rbSlg1xbQxKXUaeQ04P7Ig' },
    sdkVerify: async ({ body, headers }, secret) => {
      // The receiver logs every event it handles at debug level: keep the test output quiet.
      const quiet = vi.spyOn(console, 'debug').mockImplementation(() => undefined);
      try {
        const handler = new ZoomLambdaReceiver({ webhooksSecretToken: secret }).start();
        const response = await handler({ body, headers, isBase64Encoded: false } as never, {} as never, () => undefined);
        return (response as { statusCode: number }).statusCode === 200;
      } finally {
        quiet.mockRestore();
      }
    },
  },
  {
    provider: 'notion',
    body: '{"id":"367cba44-b6f3-4c92-81e7-6a2e9659efd4","timestamp":"2026-11-30T08:00:00.000Z","workspace_id":"13950b26-c203-4f3b-b97d-93ec06319565","subscription_id":"29d75c0d-5546-4414-8459-7b7a92f1fc4b","type":"page.created","entity":{"id":"153104cd-477e-809d-8dc4-ff2d96ae3090","type":"page"},"api_version":"2022-06-28","attempt_number":1}',
    expected: { eventId: '367cba44-b6f3-4c92-81e7-6a2e9659efd4', eventType: 'page.created' },
    secret: 'secret_8f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a',
    otherSecret: 'secret_0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c',
    sdkSign: async (body, secret) => ({ 'x-notion-signature': await notionSign({ body, verificationToken: secret }) }),
    sdkVerify: async ({ body, headers }, secret) =>
      notionVerify({ body, signature: headers['x-notion-signature']!, verificationToken: secret }),
  },
  {
    provider: 'adyen',
    body: '{"data":{"id":"48TYZO5ZVURJ2FCW","sequenceNumber":1,"status":"received","type":"bankTransfer","balancePlatform":"YOUR_BALANCE_PLATFORM","amount":{"currency":"EUR","value":4200}},"environment":"test","timestamp":"2026-11-30T08:00:00+01:00","type":"balancePlatform.transfer.created"}',
    expected: {
      eventId: 'bh_d32511e166376666cfe2106a1f09eb2e1ed999ec51f499ce77e226529fb2cd0f',
      eventType: 'balancePlatform.transfer.created',
    },
    secret: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
    otherSecret: '0F9E8D7C6B5A4F3E2D1C0B9A8F7E6D5C4B3A29181706F5E4D3C2B1A09F8E7D6C',
    sdkSign: (body, secret) => ({ hmacsignature: new AdyenHmacValidator().calculateHmac(body, secret) }),
    sdkVerify: async ({ body, headers }, secret) => new AdyenHmacValidator().validateHMACSignature(secret, headers.hmacsignature!, body),
  },
  {
    provider: 'pusher',
    body: '{"time_ms":1764489600000,"events":[{"name":"channel_occupied","channel":"presence-room-204"}]}',
    expected: { eventId: 'bh_ca5c05f747a55ab8b733359c003feb381ecad4a6d283008b8fce30e8ed8f9840', eventType: 'channel_occupied' },
    secret: 'pusher-app-secret-8f2c1a7e5b3d',
    otherSecret: 'pusher-app-secret-0f9e8d7c6b5a',
    headers: { 'content-type': 'application/json', 'x-pusher-key': 'pusher-app-key-278d' },
    sdkVerify: async ({ body, headers }, secret) =>
      new Pusher({ appId: '1204', key: 'pusher-app-key-278d', secret, cluster: 'eu' }).webhook({ headers, rawBody: body }).isValid(),
  },
  {
    provider: 'stream',
    body: '{"type":"message.new","cid":"messaging:room-204","message":{"id":"msg-8f2c1a7e","text":"hi","user":{"id":"ada"}},"user":{"id":"ada"},"created_at":"2026-11-30T08:00:00.000Z"}',
    expected: { eventId: '0f6c7a1e-2d3b-4c5a-8e9f-1a2b3c4d5e6f', eventType: 'message.new' },
    secret: 'stream-api-secret-8f2c1a7e5b3d',
    otherSecret: 'stream-api-secret-0f9e8d7c6b5a',
    headers: { 'x-webhook-id': '0f6c7a1e-2d3b-4c5a-8e9f-1a2b3c4d5e6f', 'x-api-key': 'stream-key-278d' },
    sdkVerify: async ({ body, headers }, secret) => new StreamChat('stream-key-278d', secret).verifyWebhook(body, headers['x-signature']!),
  },
  {
    provider: 'onfido',
    body: '{"payload":{"resource_type":"check","action":"check.completed","object":{"id":"3a4f5c6d-7e8f-4a0b-9c1d-2e3f4a5b6c7d","status":"complete","completed_at_iso8601":"2026-11-30T08:00:00Z","href":"https://api.eu.onfido.com/v3.6/checks/3a4f5c6d-7e8f-4a0b-9c1d-2e3f4a5b6c7d"}}}',
    expected: { eventId: 'bh_902cde8f28a16928f538d21f1f172d960c812d29982e67d44b5769dfe16383da', eventType: 'check.completed' },
    secret: 'onfido-webhook-token-8f2c1a7e',
    otherSecret: 'onfido-webhook-token-0f9e8d7c',
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => new OnfidoWebhookEventVerifier(secret).readPayload(body, headers['x-sha2-signature']!)),
  },
  {
    provider: 'fingerprint',
    body: '{"requestId":"1708102555327.NLOjmg","visitorId":"Ibk1527CUFmcnjLwIs4A","visitorFound":true,"timestamp":1708102555327,"url":"https://shop.example.com/checkout","ip":"203.0.113.7","bot":{"result":"notDetected"}}',
    expected: { eventId: '1708102555327.NLOjmg', eventType: 'notDetected' },
    secret: 'fpjs-webhook-secret-8f2c1a7e',
    otherSecret: 'fpjs-webhook-secret-0f9e8d7c',
    sdkVerify: async ({ body, headers }, secret) =>
      isValidFingerprintSignature({ header: headers['fpjs-event-signature']!, data: Buffer.from(body), secret }),
  },
  {
    provider: 'privy',
    body: '{"type":"user.created","user":{"id":"did:privy:cm3np4u9j001rc8b73seqmqqk","created_at":1764489600}}',
    expected: { eventId: 'msg_2Kp7QeWd9Lm', eventType: 'user.created' },
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    sdkVerify: async ({ body, headers }, secret) => {
      // verifyWebhook logs its refusals: keep the test output quiet.
      const quiet = vi.spyOn(console, 'error').mockImplementation(() => undefined);
      try {
        const privy = new PrivyClient('cm3np4u9j001rc8b73seqmqqk', 'privy-app-secret-unused');
        return await accepts(() => privy.verifyWebhook(JSON.parse(body), svixHeaders('svix', headers), secret));
      } finally {
        quiet.mockRestore();
      }
    },
  },
  {
    provider: 'retell',
    body: '{"event":"call_ended","call":{"call_id":"Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6","agent_id":"oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD","call_status":"ended","start_timestamp":1764489600000}}',
    expected: { eventId: 'bh_b8dc106e8d1389ede5be9a34fb5ef70ad9d0794273f6c14f5af94c24f8ac4ee1', eventType: 'call_ended' },
    secret: 'key_8f2c1a7e5b3d9c4e6f0a',
    otherSecret: 'key_0f9e8d7c6b5a4f3e2d1c',
    sdkSign: async (body, secret) => ({ 'x-retell-signature': await retellSign(body, secret) }),
    sdkVerify: async ({ body, headers }, secret) => retellVerify(body, secret, headers['x-retell-signature']!),
  },
  {
    provider: 'hookdeck',
    body: '{"type":"order.created","id":"ord_01J8K7M2Q4","amount":4200}',
    expected: { eventId: 'evt_7Rt2Lm9KqHx', eventType: 'order.created' },
    secret: 'hookdeck-signing-secret-8f2c',
    otherSecret: 'hookdeck-signing-secret-0f9e',
    headers: { 'x-hookdeck-eventid': 'evt_7Rt2Lm9KqHx' },
    sdkVerify: async ({ body, headers }, secret) =>
      (await hookdeckVerify({ headers, rawBody: body, signingSecret: secret })).isValidSignature,
  },
  {
    provider: 'sinch',
    body: '{"app_id":"01EB37HMH1M6SV18ASNS3G135H","accepted_time":"2026-11-30T08:00:00.000Z","event_time":"2026-11-30T08:00:00.000Z","project_id":"c36f3d3d-1513-4edd-ae42-11995557ff61","message":{"id":"01EQ8235TD19N21XQTH12B145D","direction":"TO_APP","contact_message":{"text_message":{"text":"hi"}},"channel_identity":{"channel":"WHATSAPP","identity":"46732001122","app_id":"01EB37HMH1M6SV18ASNS3G135H"}}}',
    expected: { eventId: '01EQ8235TD19N21XQTH12B145D', eventType: 'WHATSAPP' },
    secret: 'sinch-callback-secret-8f2c1a7e',
    otherSecret: 'sinch-callback-secret-0f9e8d7c',
    headers: { 'x-sinch-webhook-signature-algorithm': 'HmacSHA256' },
    sdkVerify: async ({ body, headers }, secret) =>
      new SinchConversationWebhooks(secret).validateAuthenticationHeader(headers, body, '/hooks/acme', 'POST'),
  },
  {
    provider: 'unit',
    body: '{"data":[{"id":"3717","type":"customer.created","attributes":{"createdAt":"2026-11-30T08:00:00.000Z","tags":{}},"relationships":{"customer":{"data":{"type":"customer","id":"120201"}}}}]}',
    expected: { eventId: '3717', eventType: 'customer.created' },
    secret: 'unit-webhook-secret-8f2c1a7e',
    otherSecret: 'unit-webhook-secret-0f9e8d7c',
    sdkVerify: async ({ body, headers }, secret) =>
      new Unit('unit-token-unused', 'https://api.s.unit.sh').webhooks.verify(headers['x-unit-signature']!, secret, JSON.parse(body)),
  },
  {
    provider: 'creem',
    body: '{"id":"evt_5WHHcZPv7VS0YUsberIuOz","eventType":"checkout.completed","created_at":1764489600000,"object":{"id":"ch_4l0N34kxo16AhRKUHFUuXr","object":"checkout","status":"completed"}}',
    expected: { eventId: 'evt_5WHHcZPv7VS0YUsberIuOz', eventType: 'checkout.completed' },
    secret: 'whsec_creem_8f2c1a7e5b3d9c4e',
    otherSecret: 'whsec_creem_0f9e8d7c6b5a4f3e',
    sdkVerify: async ({ body, headers }, secret) => accepts(() => creemVerifyWebhookSignature(body, headers, secret)),
  },
  {
    provider: 'messagebird',
    body: '{"type":"message.created","contact":{"id":"9354647c5c144a2b4c99f2n42497249","msisdn":31612345678},"conversation":{"id":"2e15efafec384e1c82e9842075e87beb","status":"active"},"message":{"id":"5f3437fdb8444583aea093a047ac014b","direction":"received","status":"received","type":"text","content":{"text":"hi"}}}',
    expected: { eventId: '5f3437fdb8444583aea093a047ac014b', eventType: 'message.created' },
    secret: 'messagebird-signing-key-8f2c1a7e5b3d',
    otherSecret: 'messagebird-signing-key-0f9e8d7c6b5a',
    url: 'https://hooks.example.com/hooks/acme?channel=whatsapp',
    sdkVerify: async ({ body, headers, url }, secret) =>
      accepts(() =>
        messagebirdVerify(url!, Buffer.from(body), headers['messagebird-signature-jwt']!, createSecretKey(Buffer.from(secret, 'utf8'))),
      ),
  },
  {
    provider: 'cloudinary',
    body: '{"notification_type":"upload","timestamp":"2026-11-30T08:00:00+00:00","request_id":"799c8bd1d7cc1f0c20e6d4a8c9a0a5c3","asset_id":"ba8c1e7d31ab7c5c4c3e6b8b6a3c4d2e","public_id":"sample","version":1764489600,"resource_type":"image","type":"upload","secure_url":"https://res.cloudinary.com/demo/image/upload/v1764489600/sample.jpg"}',
    expected: { eventId: 'bh_8f3eeb3832f05a32cf1e234e71c5ec3165423f068218a18720cdffd703039776', eventType: 'upload' },
    secret: 'cloudinary-api-secret-8f2c1a7e5b3d',
    otherSecret: 'cloudinary-api-secret-0f9e8d7c6b5a',
    sdkSign: (body, secret) => ({
      'x-cld-timestamp': String(NOW_S),
      'x-cld-signature': cloudinary.utils.webhook_signature(body, NOW_S, { api_secret: secret }),
    }),
    sdkVerify: async ({ body, headers }, secret) => {
      cloudinary.config({ api_secret: secret, signature_algorithm: 'sha1' });
      return cloudinary.utils.verifyNotificationSignature(body, Number(headers['x-cld-timestamp']), headers['x-cld-signature']!, TOLERANCE);
    },
  },
  {
    provider: 'slack',
    body: '{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","team_id":"T1DC2JH3J","api_app_id":"A0KRD7HC3","type":"event_callback","event_id":"Ev08MFMKH6","event_time":1764489600,"event":{"type":"app_mention","user":"U2CERLKJA","text":"<@U0LAN0Z89> hi","channel":"C0LAN2Q65"}}',
    expected: { eventId: 'Ev08MFMKH6', eventType: 'app_mention' },
    secret: '8f742231b10e8888abcd99yyyzzz85a5',
    otherSecret: '0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c',
    sdkVerify: async ({ body, headers }, secret) =>
      isValidSlackRequest({
        signingSecret: secret,
        body,
        headers: {
          'x-slack-signature': headers['x-slack-signature']!,
          'x-slack-request-timestamp': Number(headers['x-slack-request-timestamp']),
        },
        logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined } as never,
      }),
  },
  {
    provider: 'hygraph',
    body: '{"operation":"publish","data":{"__typename":"Post","id":"ckwf4tz3c00x40b50v7m9vq3y","stage":"PUBLISHED","title":"Hello","updatedAt":"2026-11-30T08:00:00.000000+00:00"}}',
    expected: { eventId: 'bh_48a424e282bfc274981a5c2f6073b193303e731b8cf5c56dcd397770a3991e83', eventType: 'publish' },
    secret: 'rCNwyiloY3oJYYkxgpBXaleIiUv5MYlx',
    otherSecret: 'Q0m8vK2xL5pR7tY1uW3zA6cE9gH4jN0b',
    sdkSign: (body, secret) => ({ 'gcms-signature': hygraphSign({ rawPayload: body, secret }) }),
    sdkVerify: async ({ body, headers }, secret) =>
      accepts(() => hygraphVerify({ rawPayload: body, signature: headers['gcms-signature']!, secret })),
  },
  {
    provider: 'livekit',
    body: '{"event":"room_started","room":{"sid":"RM_hycBMAjmt6Ub","name":"standup-204","emptyTimeout":300,"creationTime":"1764489600"},"id":"EV_3f9a2b7c1d8e","createdAt":"1764489600"}',
    expected: { eventId: 'EV_3f9a2b7c1d8e', eventType: 'room_started' },
    secret: 'APIk7Rt2Lm9Kq:livekit-api-secret-8f2c1a7e5b3d9c4e6f0a8b7c',
    otherSecret: 'APIk7Rt2Lm9Kq:livekit-api-secret-0f9e8d7c6b5a4f3e2d1c0b9a',
    headers: { 'content-type': 'application/webhook+json' },
    sdkSign: async (body, secret) => {
      const [apiKey, apiSecret] = secret.split(':') as [string, string];
      const token = new LiveKitAccessToken(apiKey, apiSecret, { ttl: '5m' });
      token.sha256 = createHash('sha256').update(body).digest('base64');
      return { authorization: await token.toJwt() };
    },
    sdkVerify: async ({ body, headers }, secret) => {
      const [apiKey, apiSecret] = secret.split(':') as [string, string];
      return accepts(() => new LiveKitWebhookReceiver(apiKey, apiSecret).receive(body, headers.authorization));
    },
  },
];

const TWILIO_JSON =
  '{"AccountSid":"AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c","MessageSid":"SM9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d","MessageStatus":"sent"}';

/** What `hookledger send --provider` posts for the source a team writes as `{ provider }` (ops/send.ts providerRequest). */
function sentByCli(provider: string, secret: string, url = 'https://hooks.example.com/hooks/acme'): Request {
  const sent = providerRequest({
    source: sourceFor(provider),
    provider,
    secret,
    now: NOW,
    eventId: 'evt_01JDQ8Z4R7M2K9T3W5X6Y7Z8A9',
    messageId: 'msg_01JDQ8Z4R7M2K9T3W5X6Y7Z8B0',
    url,
  });
  return { body: sent.body.toString('utf8'), headers: sent.headers, url };
}

function tamper(body: string): string {
  // One character of the payload changes; for form bodies, one character of a value.
  const at = body.search(/[0-9]/);
  const digit = body[at]!;
  return `${body.slice(0, at)}${digit === '9' ? '8' : String(Number(digit) + 1)}${body.slice(at + 1)}`;
}

describe.each(PROOFS)('$provider (proved by its own npm code)', (proof) => {
  const signingSecret = proof.signingSecret ?? proof.secret;
  const otherSigningSecret = proof.otherSigningSecret ?? proof.otherSecret;
  const ours = (body = proof.body, options: { now?: number; secret?: string } = {}): Request => ({
    body,
    url: proof.url,
    headers: { ...proof.headers, ...signWith(proof.provider, body, options.secret ?? signingSecret, { now: options.now, url: proof.url }) },
  });

  it('is listed as proved by sdk', () => {
    expect(PROVIDERS.find((p) => p.name === proof.provider)?.proof).toBe('sdk');
    expect(proof.sdkSign ?? proof.sdkVerify).toBeDefined();
  });

  if (proof.sdkSign) {
    it("accepts what the provider's code signed", async () => {
      const headers = { ...proof.headers, ...(await proof.sdkSign!(proof.body, signingSecret)) };
      expect(verifyWith(proof.provider, { body: proof.body, headers, url: proof.url }, proof.secret)).toEqual({
        ok: true,
        secretVersion: 'current',
      });
    });
  }

  if (proof.sdkVerify) {
    it("signs so that the provider's code accepts it", async () => {
      expect(await proof.sdkVerify!(ours(), proof.secret)).toBe(true);
    });

    it("signs under another secret and the provider's code refuses it", async () => {
      expect(await proof.sdkVerify!(ours(proof.body, { secret: otherSigningSecret }), proof.secret)).toBe(false);
    });
  }

  if (proof.sdkVerify) {
    it("accepts what `hookledger send --provider` posts: its sample, signed by send's own path", async () => {
      const sent = sentByCli(proof.provider, signingSecret, proof.url);
      expect(await proof.sdkVerify!(sent, proof.secret)).toBe(true);
    });
  }

  it('refuses a request signed with another secret: signature_mismatch', () => {
    expect(verifyWith(proof.provider, ours(proof.body, { secret: otherSigningSecret }), proof.secret)).toMatchObject({
      ok: false,
      code: 'signature_mismatch',
    });
  });

  it('refuses a tampered body: signature_mismatch', () => {
    const request = ours();
    const tampered = tamper(proof.body);
    expect(tampered).not.toBe(proof.body);
    expect(verifyWith(proof.provider, { ...request, body: tampered }, proof.secret)).toMatchObject({
      ok: false,
      code: 'signature_mismatch',
    });
  });

  if (hasTimestamp(proof.provider)) {
    it('refuses a timestamp beyond the tolerance: timestamp_out_of_tolerance', () => {
      const stale = ours(proof.body, { now: NOW - (TOLERANCE + 60) * 1000 });
      expect(verifyWith(proof.provider, stale, proof.secret)).toMatchObject({ ok: false, code: 'timestamp_out_of_tolerance' });
    });
  }

  it("reads the provider's event id and type through the preset's attribution", () => {
    expect(attributionOf(proof.provider, ours())).toEqual(proof.expected);
  });
});

describe('twilio JSON bodies (bodySHA256)', () => {
  const secret = '9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a';
  const url = twilioJsonUrl(TWILIO_JSON);

  it("signs so that the twilio library's validateRequestWithBody accepts it", () => {
    const headers = signWith('twilio', TWILIO_JSON, secret, { url });
    expect(twilio.validateRequestWithBody(secret, headers['x-twilio-signature']!, url, TWILIO_JSON)).toBe(true);
  });

  it('accepts the signature the twilio library computes for the URL', () => {
    const headers = { 'content-type': 'application/json', 'x-twilio-signature': twilio.getExpectedTwilioSignature(secret, url, {}) };
    expect(verifyWith('twilio', { body: TWILIO_JSON, headers, url }, secret)).toEqual({ ok: true, secretVersion: 'current' });
  });

  it('refuses a body whose SHA-256 is not the signed bodySHA256', () => {
    const headers = { 'content-type': 'application/json', 'x-twilio-signature': twilio.getExpectedTwilioSignature(secret, url, {}) };
    expect(verifyWith('twilio', { body: tamper(TWILIO_JSON), headers, url }, secret)).toMatchObject({
      ok: false,
      code: 'signature_mismatch',
    });
  });

  it('refuses a JSON body on a URL without bodySHA256: nothing signs it', () => {
    const headers = { 'content-type': 'application/json', 'x-twilio-signature': twilio.getExpectedTwilioSignature(secret, twilioUrl, {}) };
    expect(verifyWith('twilio', { body: TWILIO_JSON, headers, url: twilioUrl }, secret)).toMatchObject({
      ok: false,
      code: 'malformed_signature',
    });
  });
});

describe('messagebird: the reference tokens shipped in the messagebird package (lib/testdata/webhook-signature-jwt-reference.json)', () => {
  // Signed by MessageBird for its own test suite; read from the installed package, not copied here.
  interface Reference {
    readonly name: string;
    readonly method: string;
    readonly secret?: string;
    readonly url: string;
    readonly payload?: string;
    readonly timestamp: string;
    readonly token: string;
    readonly valid: boolean;
  }
  const references = JSON.parse(
    readFileSync(createRequire(import.meta.url).resolve('messagebird/lib/testdata/webhook-signature-jwt-reference.json'), 'utf8'),
  ) as Reference[];
  const signedPosts = references.filter((r) => r.method === 'POST' && r.payload && r.secret);
  const verifyReference = (r: Reference, body = r.payload!) =>
    verifyWith('messagebird', { body, headers: { 'messagebird-signature-jwt': r.token }, url: r.url }, r.secret!, Date.parse(r.timestamp));

  it('has the signed POST tokens this proof reads (HS256, with a payload)', () => {
    expect(signedPosts.map((r) => r.name)).toEqual([
      'Valid JWT with URL parameters and payload - POST',
      'Payload does not match - POST',
      'payload was added in transit - POST',
      'Special characters in the payload - POST',
    ]);
  });

  it('accepts each valid one at the instant it was made', () => {
    for (const r of signedPosts.filter((r) => r.valid)) expect(verifyReference(r), r.name).toEqual({ ok: true, secretVersion: 'current' });
  });

  it('refuses the invalid ones (payload does not match, payload added in transit): signature_mismatch', () => {
    const invalid = signedPosts.filter((r) => !r.valid);
    expect(invalid).toHaveLength(2);
    for (const r of invalid) expect(verifyReference(r), r.name).toMatchObject({ ok: false, code: 'signature_mismatch' });
  });

  it('refuses a valid one on another URL, and an hour later', () => {
    const [valid] = signedPosts.filter((r) => r.valid);
    const otherUrl = verifyWith(
      'messagebird',
      { body: valid!.payload!, headers: { 'messagebird-signature-jwt': valid!.token }, url: `${valid!.url}&baz=3` },
      valid!.secret!,
      Date.parse(valid!.timestamp),
    );
    expect(otherUrl).toMatchObject({ ok: false, code: 'signature_mismatch' });
    const late = verifyWith(
      'messagebird',
      { body: valid!.payload!, headers: { 'messagebird-signature-jwt': valid!.token }, url: valid!.url },
      valid!.secret!,
      Date.parse(valid!.timestamp) + 3600_000,
    );
    expect(late).toMatchObject({ ok: false, code: 'timestamp_out_of_tolerance' });
  });
});

describe('livekit: the api key is part of the secret', () => {
  const body =
    '{"event":"room_finished","room":{"sid":"RM_hycBMAjmt6Ub","name":"standup-204"},"id":"EV_9a8b7c6d5e4f","createdAt":"1764489600"}';

  it('refuses a token signed with the api secret but issued by another api key, as LiveKit does: signature_mismatch', async () => {
    const headers = signWith('livekit', body, 'APIother0000:livekit-api-secret-8f2c1a7e5b3d9c4e6f0a8b7c');
    const secret = 'APIk7Rt2Lm9Kq:livekit-api-secret-8f2c1a7e5b3d9c4e6f0a8b7c';
    expect(verifyWith('livekit', { body, headers }, secret)).toMatchObject({ ok: false, code: 'signature_mismatch' });
    expect(
      await accepts(() =>
        new LiveKitWebhookReceiver('APIk7Rt2Lm9Kq', 'livekit-api-secret-8f2c1a7e5b3d9c4e6f0a8b7c').receive(body, headers.authorization),
      ),
    ).toBe(false);
  });

  it('refuses a secret without the api key when signing: it is configuration, not a request', () => {
    expect(() => signWith('livekit', body, 'livekit-api-secret-only')).toThrow('signing secret is not <api key>:<api secret>');
  });
});
