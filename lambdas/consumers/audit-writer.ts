/**
 * audit-writer: every event; writes one structured audit line per event (ids and type only, never
 * the payload) and charges one unit of audit storage.
 */
import { lambdaConsumer } from '../runtime/lambda';
import type { ConsumerHandle } from '../runtime/runtime';

export const handle: ConsumerHandle = async ({ attribution, payload, logger, idempotencyKey }) => {
  logger.info('audit', {
    audit_key: idempotencyKey,
    event_id: attribution.eventId,
    event_type: attribution.eventType,
    tenant_id: attribution.tenantId,
    key_id: attribution.keyId,
    occurred: typeof payload.created === 'number' || typeof payload.created === 'string' ? payload.created : undefined,
  });
  return { units: 1 };
};

export const handler = lambdaConsumer('audit-writer', handle);
