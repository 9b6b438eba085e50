/**
 * What the operations need, injected: document client, table names, queues, config, clock and the
 * operator's name. The front ends build these for the local stack or a deployed one (ops/target.ts); tests
 * build them for DynamoDB Local and fauxqs.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { eventStores } from '../adapters/event-stores';
import { Ledger } from '../adapters/ledger';
import type { PayloadBlobs } from '../adapters/payload-blobs';
import type { Progress, TableNames } from '../adapters/table-scan';
import type { HookledgerConfig } from '../core/config/schema';

export type { Progress, TableNames };

export interface QueuePair {
  readonly url: string;
  readonly dlqUrl: string;
}

export interface StoreDeps {
  readonly ddb: DynamoDBDocumentClient;
  readonly tables: TableNames;
  /** The payload bucket, where bodies over `payloads.inlineMaxBytes` are kept; without it such a body cannot be read. */
  readonly blobs?: PayloadBlobs;
  readonly clock?: () => number;
}

export interface OperatorDeps extends StoreDeps {
  /** Recorded on audit items. The CLI passes $USER. */
  readonly operator: string;
}

export interface ConfigDeps {
  readonly config: HookledgerConfig;
}

export const now = (deps: { readonly clock?: () => number }) => (deps.clock ?? Date.now)();

/**
 * The EventStore table's adapters (receipts, payloads, keys, audit, requeues) over the injected client:
 * every single-item read and write the operations make.
 */
export const eventStoresOf = (deps: StoreDeps) =>
  eventStores({ client: deps.ddb, tableName: deps.tables.events, clock: deps.clock, ...(deps.blobs ? { blobs: deps.blobs } : {}) });

/** The Ledger adapter over the injected client. */
export const ledgerOf = (deps: StoreDeps) => new Ledger({ client: deps.ddb, tableName: deps.tables.ledger });
