/**
 * Ordering keys, read at intake: the fan-out needs each ordered consumer's key to pick the FIFO
 * message group, and only intake holds the signed body. Read from signed parts only (the tenant
 * captured at intake, or a field of the signed body), like the attribution.
 *
 * A key is stored on the receipt (and copied into each delivery message) as at most
 * MAX_STORED_ORDERING_KEY_CHARS characters: a longer one is stored as the message group it maps to
 * (`messageGroupOf`, `h-` + its SHA-256), which is what the fan-out and the runtime use it for. The
 * group is unchanged (a stored `h-...` maps to itself), and a body field of any size can no longer
 * push the receipt past DynamoDB's 400 KB item limit, which answered 503 to a request that could
 * never succeed.
 */

import { readPath } from '../../adapters/dotted-path';
import { messageGroupOf, UNKEYED_GROUP } from '../../core/config/consumers';
import { findConsumer } from '../../core/config/routing';
import type { HookledgerConfig } from '../../core/config/schema';

/** SQS's limit on a message group id: a longer key is hashed into its group anyway (core/config/consumers.ts). */
export const MAX_STORED_ORDERING_KEY_CHARS = 128;

/** The key as stored: itself up to the bound, else the FIFO group it maps to (the same group either way). */
export function storedOrderingKey(key: string): string {
  return key.length <= MAX_STORED_ORDERING_KEY_CHARS ? key : messageGroupOf(key);
}

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
      keys[id] = storedOrderingKey(tenantId);
      continue;
    }
    const value = readPath(body, ordering.key.body);
    // A missing key cannot be refused (the provider cannot fix it): such events share one group.
    keys[id] = typeof value === 'string' || typeof value === 'number' ? storedOrderingKey(String(value)) : UNKEYED_GROUP;
  }
  return Object.keys(keys).length > 0 ? keys : undefined;
}
