/**
 * risk-evaluator: payment.* and scoped_key.* events. Scores a payment and, for a large one, takes a
 * new action (a review hold) authorized by the event's key: so it checks the key's status NOW and
 * declines the action when the key has been revoked since intake (attribution stays with the tenant
 * captured at intake; authorization does not).
 */
import { PermanentError } from '../runtime/errors';
import { lambdaConsumer } from '../runtime/lambda';
import type { ConsumerHandle } from '../runtime/runtime';

export const REVIEW_THRESHOLD = 100_000;

export const handle: ConsumerHandle = async ({ attribution, payload, keyStatus, logger, idempotencyKey }) => {
  if (!attribution.eventType.startsWith('payment.')) return { units: 1, outcome: 'observed' };
  const data = payload.data as { amount?: unknown } | undefined;
  const amount = data?.amount;
  if (amount !== undefined && (typeof amount !== 'number' || !Number.isFinite(amount))) {
    throw new PermanentError('data.amount must be a number', 'invalid_payload');
  }
  if ((amount ?? 0) < REVIEW_THRESHOLD) return { units: 1, outcome: 'scored' };
  if ((await keyStatus()) !== 'active') {
    logger.info('key not active: review hold declined', { event_id: attribution.eventId, key_id: attribution.keyId });
    return { units: 1, outcome: 'action_declined_key_revoked' };
  }
  logger.info('review hold placed', { event_id: attribution.eventId, hold_key: idempotencyKey });
  return { units: 2, outcome: 'hold_placed' };
};

export const handler = lambdaConsumer('risk-evaluator', handle);
