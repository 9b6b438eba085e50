/**
 * The EventStore table's adapters, one per kind of caller: Receipts (intake's conditional write with
 * its registry, index, body claims and conflicts), ReceiptAdmin (the operators' lookups, erasure
 * marks and backfills of receipts), Payloads (item and bucket), KeyRegistry, AuditLog, Requeues. Each
 * caller takes the one it uses; `eventStores` builds them all over one client and table (the local
 * stack, tests, the CLI); intake builds only its own (`intakeStores`), so its bundle holds no other.
 */
import { AuditLog } from './audit-log';
import { KeyRegistry } from './key-registry';
import { Payloads, type PayloadsOptions } from './payloads';
import { ReceiptAdmin } from './receipt-admin';
import { Receipts, type ReceiptsOptions } from './receipts';
import { Requeues } from './requeues';

export interface EventStoresOptions extends PayloadsOptions, Omit<ReceiptsOptions, 'payloads'> {}

export interface EventStores {
  readonly receipts: Receipts;
  readonly receiptAdmin: ReceiptAdmin;
  readonly payloads: Payloads;
  readonly keys: KeyRegistry;
  readonly audit: AuditLog;
  readonly requeues: Requeues;
}

export function eventStores(options: EventStoresOptions): EventStores {
  const table = tableOf(options);
  const { receipts, payloads, keys } = intakeStores(options);
  return {
    receipts,
    receiptAdmin: new ReceiptAdmin({ ...table, receipts }),
    payloads,
    keys,
    audit: new AuditLog(table),
    requeues: new Requeues(table),
  };
}

function tableOf(options: EventStoresOptions) {
  return { client: options.client, tableName: options.tableName, onCapacity: options.onCapacity };
}

/** The adapters intake uses, and only those. */
export function intakeStores(options: EventStoresOptions): Pick<EventStores, 'receipts' | 'payloads' | 'keys'> {
  const payloads = new Payloads(options);
  return {
    receipts: new Receipts({ ...tableOf(options), payloads, ...(options.shardsOf ? { shardsOf: options.shardsOf } : {}) }),
    payloads,
    keys: new KeyRegistry(tableOf(options)),
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
