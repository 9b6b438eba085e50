/**
 * The EventStore table's adapters, one per kind of caller: Receipts (intake's conditional write with
 * its registry, index, body claims and conflicts), ReceiptAdmin (the operators' lookups, erasure
 * marks and backfills of receipts), Payloads (item and bucket), KeyRegistry, AuditLog, Requeues. Each
 * caller takes the one it uses; `eventStores` builds them all over one client and table (the local
 * stack, tests, the CLI); intake builds only its own (`intakeStores`), so its bundle holds no other.
 */
import { AuditLog } from './audit-log';
import { KeyRegistry } from './key-registry';
import type { BlobWrites } from './payload-blobs';
import { Payloads, type PayloadsOptions, PayloadWrites } from './payloads';
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
  const payloads = new Payloads(options);
  const receipts = receiptsOver(options, payloads);
  return {
    receipts,
    receiptAdmin: new ReceiptAdmin({ ...table, receipts }),
    payloads,
    keys: new KeyRegistry(table),
    audit: new AuditLog(table),
    requeues: new Requeues(table),
  };
}

/** The adapters intake uses, and only those: its payload writes, not the reads. */
export function intakeStores(
  options: Omit<EventStoresOptions, 'blobs'> & { readonly blobs?: BlobWrites },
): Pick<EventStores, 'receipts' | 'keys'> {
  return { receipts: receiptsOver(options, new PayloadWrites(options)), keys: new KeyRegistry(tableOf(options)) };
}

function tableOf(options: Pick<EventStoresOptions, 'client' | 'tableName' | 'onCapacity'>) {
  return { client: options.client, tableName: options.tableName, onCapacity: options.onCapacity };
}

function receiptsOver(
  options: Pick<EventStoresOptions, 'client' | 'tableName' | 'onCapacity' | 'shardsOf' | 'clock'>,
  payloads: PayloadWrites,
): Receipts {
  return new Receipts({
    ...tableOf(options),
    payloads,
    ...(options.shardsOf ? { shardsOf: options.shardsOf } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
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
