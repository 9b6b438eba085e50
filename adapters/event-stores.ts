/**
 * The EventStore table's adapters, one per kind of caller: Receipts (intake's conditional write with
 * its registry, index, body claims and conflicts; receipt lookups and backfill), Payloads (item and
 * bucket), KeyRegistry, AuditLog, Requeues. Each caller takes the one it uses; `eventStores` builds
 * them all over one client and table (the local stack, tests), `intakeStore` is what intake is given.
 */
import { AuditLog } from './audit-log';
import { KeyRegistry } from './key-registry';
import { Payloads, type PayloadsOptions } from './payloads';
import { Receipts, type ReceiptsOptions } from './receipts';
import { Requeues } from './requeues';

export interface EventStoresOptions extends PayloadsOptions, Omit<ReceiptsOptions, 'payloads'> {}

export interface EventStores {
  readonly receipts: Receipts;
  readonly payloads: Payloads;
  readonly keys: KeyRegistry;
  readonly audit: AuditLog;
  readonly requeues: Requeues;
}

export function eventStores(options: EventStoresOptions): EventStores {
  const table = { client: options.client, tableName: options.tableName, onCapacity: options.onCapacity };
  const payloads = new Payloads(options);
  return {
    receipts: new Receipts({ ...table, payloads, ...(options.shardsOf ? { shardsOf: options.shardsOf } : {}) }),
    payloads,
    keys: new KeyRegistry(table),
    audit: new AuditLog(table),
    requeues: new Requeues(table),
  };
}

/** What intake writes and reads: the receipt (with its payload), the body claim, the key registry. */
export interface IntakeStore extends Pick<Receipts, 'recordEvent' | 'claimBody'>, Pick<KeyRegistry, 'getKey'> {}

export function intakeStore({ receipts, keys }: Pick<EventStores, 'receipts' | 'keys'>): IntakeStore {
  return {
    recordEvent: (event, rawBody) => receipts.recordEvent(event, rawBody),
    claimBody: (claim, payloadHmac) => receipts.claimBody(claim, payloadHmac),
    getKey: (keyId) => keys.getKey(keyId),
  };
}
