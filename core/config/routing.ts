/**
 * Routing over a validated configuration. No zod here: the Lambdas import this module, and the
 * configuration they get was validated at synth (see lambdas/shared/bundled-config.ts).
 */
import { FeatureNotBundledError } from '../bundled-features';
import { type FilterEvent, matchesPattern } from '../filter';
import type { ConsumerConfig, HookledgerConfig, SourceConfig } from './schema';

/** `*` matches all; `payment.*` matches `payment.x` and `payment.x.y`; otherwise exact. */
export function matchesEventType(pattern: string, eventType: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return eventType.startsWith(pattern.slice(0, -1));
  return pattern === eventType;
}

/** The consumers subscribed to an event type, in config order: the event's delivery set. */
export function subscribedConsumers(config: HookledgerConfig, eventType: string): string[] {
  return config.consumers.filter((c) => c.subscribes.some((p) => matchesEventType(p, eventType))).map((c) => c.id);
}

/**
 * The event's delivery set, written by intake on the receipt: the consumers subscribed to its type
 * whose filter (if any) matches the event, in config order. A filter never widens a subscription.
 */
export function deliverySet(config: Pick<HookledgerConfig, 'consumers'>, event: FilterEvent): string[] {
  return config.consumers.filter((c) => receives(c, event)).map((c) => c.id);
}

/** Whether one consumer receives the event: its type subscribed, and its filter matching. */
export function receives(consumer: Pick<ConsumerConfig, 'subscribes' | 'filter'>, event: FilterEvent): boolean {
  if (!consumer.subscribes.some((p) => matchesEventType(p, event.type))) return false;
  if (consumer.filter === undefined) return true;
  // Folded in a bundle whose configuration has no filter: core/filter.ts is then left out of it.
  if (process.env.HOOKLEDGER_BUNDLED_FILTERS !== 'false') return matchesPattern(consumer.filter, event);
  throw new FeatureNotBundledError('filters', 'a consumer');
}

export function findSource(config: HookledgerConfig, id: string): SourceConfig | undefined {
  return config.sources.find((s) => s.id === id);
}

export function findConsumer(config: HookledgerConfig, id: string): ConsumerConfig | undefined {
  return config.consumers.find((c) => c.id === id);
}

/**
 * Days a source's raw payloads are kept: its own `retentionDays`, else `retention.payloadDays`. A
 * source no longer configured (a re-queue of an old receipt) gets the deployment's default.
 */
export function payloadRetentionDays(
  config: Pick<HookledgerConfig, 'retention'>,
  source: Pick<SourceConfig, 'retentionDays'> | undefined,
): number {
  return source?.retentionDays ?? config.retention.payloadDays;
}

/** Every distinct payload retention (days) the configuration uses, ascending: one bucket lifecycle rule each. */
export function payloadRetentionValues(config: Pick<HookledgerConfig, 'retention' | 'sources'>): number[] {
  const days = new Set([config.retention.payloadDays, ...config.sources.map((s) => payloadRetentionDays(config, s))]);
  return [...days].sort((a, b) => a - b);
}
