/**
 * Realistic `payment.succeeded` events of exactly TARGET_BYTES of JSON, and their Standard Webhooks
 * signatures. Deterministic per index (a tiny PRNG), distinct per event, amounts below the
 * risk-evaluator's review threshold so no event takes the key-registry path.
 */
import { Webhook } from 'standardwebhooks';
import { BenchSetupError } from './errors';

export const TARGET_BYTES = 1024;

export interface SignedRequest {
  readonly eventId: string;
  readonly body: string;
  readonly headers: Record<string, string>;
}

const BRANDS = ['visa', 'mastercard', 'amex'] as const;
const CURRENCIES = ['eur', 'usd', 'gbp'] as const;
const CITIES = [
  ['Berlin', 'DE', '10115'],
  ['Austin', 'US', '78701'],
  ['Leeds', 'GB', 'LS1 4AP'],
] as const;
const FILLER =
  'Annual plan renewal incl. priority support, 3 seats, usage add-on (API calls) and invoice PDF delivery to billing contact. ';

/** mulberry32: enough to vary fields reproducibly. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;
const hex = (r: () => number, n: number) => Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join('');

/** A `payment.succeeded` event body of exactly TARGET_BYTES bytes (ASCII JSON). */
export function paymentEvent(index: number, runId: string, createdAt = Date.now()): { eventId: string; body: string } {
  const r = rng(index + 1);
  const eventId = `evt_${runId}_${String(index).padStart(6, '0')}`;
  const [city, country, postal] = pick(r, CITIES);
  const tenant = `tenant_${100 + Math.floor(r() * 400)}`;
  const event = {
    id: eventId,
    type: 'payment.succeeded',
    api_version: '2026-10-01',
    created: Math.floor(createdAt / 1000),
    livemode: true,
    tenant_id: tenant,
    key_id: `key_${hex(r, 12)}`,
    data: {
      object: 'payment',
      id: `pay_${hex(r, 20)}`,
      amount: 500 + Math.floor(r() * 90_000),
      currency: pick(r, CURRENCIES),
      status: 'succeeded',
      captured: true,
      customer: { id: `cus_${hex(r, 14)}`, email: `billing+${hex(r, 6)}@example.com`, name: 'Acme Logistics GmbH' },
      payment_method: {
        type: 'card',
        card: {
          brand: pick(r, BRANDS),
          last4: String(1000 + Math.floor(r() * 9000)),
          exp_month: 1 + Math.floor(r() * 12),
          exp_year: 2027 + Math.floor(r() * 5),
          country,
          fingerprint: hex(r, 16),
        },
      },
      billing_details: { address: { line1: `${1 + Math.floor(r() * 200)} Market Street`, city, postal_code: postal, country } },
      metadata: { order_id: `ord_${hex(r, 10)}`, invoice_id: `in_${hex(r, 12)}`, plan: 'business-annual' },
      receipt_url: `https://pay.example.com/receipts/${hex(r, 24)}`,
      description: '',
    },
  };
  const bare = JSON.stringify(event).length;
  const room = TARGET_BYTES - bare;
  if (room < 0) {
    throw new BenchSetupError(
      `payment event is ${bare} bytes before padding; TARGET_BYTES is ${TARGET_BYTES}: raise TARGET_BYTES to at least ${bare}`,
    );
  }
  event.data.description = FILLER.repeat(Math.ceil(room / FILLER.length) + 1).slice(0, room);
  return { eventId, body: JSON.stringify(event) };
}

/** Signs now, as a provider would (the timestamp must be within the source's 300 s tolerance). */
export function signRequest(secret: string, eventId: string, body: string, at = Date.now()): SignedRequest {
  const msgId = `msg_${eventId}`;
  return {
    eventId,
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': msgId,
      'webhook-timestamp': String(Math.floor(at / 1000)),
      'webhook-signature': new Webhook(secret).sign(msgId, new Date(at), body),
    },
  };
}

export function signedPayments(secret: string, runId: string, count: number, from = 0): SignedRequest[] {
  return Array.from({ length: count }, (_, i) => {
    const { eventId, body } = paymentEvent(from + i, runId);
    return signRequest(secret, eventId, body);
  });
}
