/**
 * Ordering keys, read at intake: the fan-out needs each ordered consumer's key to pick the FIFO
 * message group, and only intake holds the signed body. Read from signed parts only (the tenant
 * captured at intake, or a field of the signed body), like the attribution.
 */

import { readPath } from '../../adapters/dotted-path';
import { UNKEYED_GROUP } from '../../core/config/consumers';
import { findConsumer } from '../../core/config/routing';
import type { HookledgerConfig } from '../../core/config/schema';

/** Ordered consumer id -> ordering key, for the consumers of one delivery set; undefined when none is ordered. */
export function orderingKeysFor(
  config: HookledgerConfig,
  consumerIds: readonly string[],
  tenantId: string,
  body: unknown,
): Record<string, string> | undefined {
  const keys: Record<string, string> = {};
  for (const id of consumerIds) {
    const ordering = findConsumer(config, id)?.ordering;
    if (!ordering) continue;
    if (ordering.key === 'tenant') {
      keys[id] = tenantId;
      continue;
    }
    const value = readPath(body, ordering.key.body);
    // A missing key cannot be refused (the provider cannot fix it): such events share one group.
    keys[id] = typeof value === 'string' || typeof value === 'number' ? String(value) : UNKEYED_GROUP;
  }
  return Object.keys(keys).length > 0 ? keys : undefined;
}
