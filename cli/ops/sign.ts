/**
 * Signs a request body the way each supported provider does, for `hookledger send`. The verifiers
 * in lambdas/shared/verify are proved against the providers' own libraries; these signers are proved
 * against the verifiers (test/ops/sign.test.ts), so `send` can exercise any configured source.
 */
import { createHmac } from 'node:crypto';
import type { VerificationScheme } from '../../core/config/schema';
import { standardWebhooksKey } from '../../lambdas/shared/verify/standard-webhooks';

export interface SignInput {
  readonly body: Buffer;
  readonly secret: string;
  /** Epoch milliseconds. */
  readonly now: number;
  /** Standard Webhooks' `webhook-id`. */
  readonly messageId: string;
}

/** The headers carrying the signature (and its timestamp) for one scheme. */
export function signatureHeaders(scheme: VerificationScheme, input: SignInput): Record<string, string> {
  const ts = String(Math.floor(input.now / 1000));
  const mac = (algorithm: 'sha256' | 'sha512', key: Buffer | string, ...parts: (string | Buffer)[]) => {
    const hmac = createHmac(algorithm, key);
    for (const part of parts) hmac.update(part);
    return hmac.digest();
  };
  switch (scheme.type) {
    case 'standard-webhooks': {
      const signature = mac('sha256', standardWebhooksKey(input.secret), `${input.messageId}.${ts}.`, input.body).toString('base64');
      return { 'webhook-id': input.messageId, 'webhook-timestamp': ts, 'webhook-signature': `v1,${signature}` };
    }
    case 'stripe':
      return { 'stripe-signature': `t=${ts},v1=${mac('sha256', input.secret, `${ts}.`, input.body).toString('hex')}` };
    case 'github':
      return { 'x-hub-signature-256': `sha256=${mac('sha256', input.secret, input.body).toString('hex')}` };
    case 'shopify':
      return { 'x-shopify-hmac-sha256': mac('sha256', input.secret, input.body).toString('base64') };
    case 'slack':
      return {
        'x-slack-request-timestamp': ts,
        'x-slack-signature': `v0=${mac('sha256', input.secret, `v0:${ts}:`, input.body).toString('hex')}`,
      };
    case 'hmac':
      return { [scheme.header]: `${scheme.prefix}${mac(scheme.algorithm, input.secret, input.body).toString(scheme.encoding)}` };
  }
}
