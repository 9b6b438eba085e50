/**
 * An example transform (`transform: 'transforms/crm.ts'` on an HTTP destination): reshapes a payment
 * event into the deal a CRM's intake endpoint expects. It sees only the consumer's narrowed view; what
 * it returns is signed and POSTed. Throwing quarantines the delivery with the message (`hookledger trace`).
 */
import type { TransformInput, TransformOutput } from '../core/transform';

export function transform({ eventId, eventType, tenantId, payload }: TransformInput): TransformOutput {
  const data = (payload.data ?? {}) as { amount?: unknown; currency?: unknown };
  if (typeof data.amount !== 'number') {
    throw new Error(`the CRM needs a numeric data.amount; event ${eventId} has ${JSON.stringify(data.amount ?? null)}`);
  }
  return {
    body: {
      deal: {
        external_id: eventId,
        account: tenantId,
        stage: eventType === 'payment.succeeded' ? 'won' : 'open',
        value_cents: data.amount,
        currency: typeof data.currency === 'string' ? data.currency.toUpperCase() : 'USD',
      },
    },
    headers: { 'x-crm-account': tenantId },
  };
}
