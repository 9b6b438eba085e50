/**
 * billing-meter: every event; units by event type. The ledger row the runtime writes on
 * acknowledgement IS the meter reading, so this handler only decides how many units an event is worth.
 */
import { matchesEventType } from '../../core/config/routing';
import { lambdaConsumer } from '../runtime/lambda';
import type { ConsumerHandle } from '../runtime/runtime';

/** First matching pattern wins. */
export const UNITS_BY_TYPE: readonly (readonly [pattern: string, units: number])[] = [
  ['payment.succeeded', 5],
  ['payment.*', 3],
  ['scoped_key.*', 2],
  ['*', 1],
];

export function unitsFor(eventType: string): number {
  return UNITS_BY_TYPE.find(([pattern]) => matchesEventType(pattern, eventType))?.[1] ?? 1;
}

export const handle: ConsumerHandle = async ({ attribution }) => ({ units: unitsFor(attribution.eventType) });

export const handler = lambdaConsumer('billing-meter', handle);
