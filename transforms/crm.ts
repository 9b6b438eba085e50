/**
 * An example transform (`transform: 'transforms/crm.ts'` on an HTTP destination): reshapes a payment
 * event into the deal a CRM's intake endpoint expects. It sees only the consumer's narrowed view; what
 * it returns is signed and POSTed. Throwing quarantines the delivery with the message (`hookledger trace`).
 *
 * Two habits worth copying. An error message names fields and kinds, never a value from the payload:
 * messages are kept on the ledger row and shown by `trace` and the console (erasure scrubs them, but
 * nothing else would). And a payload value put in a header must be Latin-1: hookledger checks the
 * request before sending it, and quarantines one it could not send as `transform_invalid` (percent-
 * encode such a value if the destination decodes it, or keep it in the body).
 */
import { TransformError, type TransformInput, type TransformOutput } from '../core/transform';

export function transform({ eventId, eventType, tenantId, payload }: TransformInput): TransformOutput {
  const data = (payload.data ?? {}) as { amount?: unknown; currency?: unknown; reference?: unknown };
  if (typeof data.amount !== 'number') {
    throw new TransformError(`the CRM needs a numeric data.amount; event ${eventId} has ${kindOf(data.amount)}`);
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
    // The merchant's order reference, which the CRM indexes from a header.
    headers: { 'x-crm-account': tenantId, ...(typeof data.reference === 'string' ? { 'x-crm-reference': data.reference } : {}) },
  };
}

/** What a value is, for a message: its kind, never the value itself. */
function kindOf(value: unknown): string {
  if (value === undefined || value === null) return 'none';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
