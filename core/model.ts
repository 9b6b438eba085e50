/**
 * The data model. Two tables, every write a single-item conditional write (see docs/cost-and-scale.md "Data model and cost").
 *
 * EventStore (partition key `pk`, stream NEW_IMAGE, TTL attribute `expiresAt`):
 *   evt#<source>#<eventId>        kind=event    the receipt: attribution, delivery set, keyed payload hash (never expires)
 *   pay#<source>#<eventId>#<hmac> kind=payload  the raw payload (gzip when smaller), expires after retention; the
 *                                               key names the body's keyed hash, so a receipt can only ever point
 *                                               at the bytes it was written for
 *   bdy#<source>#<hmac>           kind=claim    sources with replay protection by body: the first attribution these
 *                                               exact signed bytes were received with (never expires)
 *   cfl#<source>#<eventId>        kind=audit    intake audit: requests that reused a recorded event id with other bytes
 *   rq#<replayId>#<ledgerKey>     kind=requeue  an explicit re-queue (replay/backfill) for one consumer
 *   rq#<repairId>#<ledgerKey>     kind=requeue  a repair: re-sends a delivery whose message was lost
 *   key#<keyId>                   kind=key      tenant key registry
 *   audit#<at>#<id>               kind=audit    operator actions (rotation, replay), never secret values
 *   tday#<yyyy-mm-dd>#<tenantId>  kind=tenantDay the tenant-day registry: this tenant had receipts that UTC day
 *   dup#<source>#<yyyy-mm-ddThh>  kind=duplicates intake's duplicate answers of one source in one UTC hour, one
 *                                               counter per minute (`m00`..`m59`); never expires, as receipts
 *   ckpt#<job>                    kind=checkpoint where a paged job (the scheduled reconcile) stopped
 *
 * The window index (GSI WINDOW_INDEX, sparse): receipts carry `wpk` = `<tenantId>#<yyyy-mm-dd>[#<shard>]`
 * (the tenant id escaped by `keyPart`: `%` and `#` percent-encoded, `tenants` spelled `%74enants`) and
 * `wsk` = receivedAt; tenant-day items carry `wpk` = `tenants#<yyyy-mm-dd>` and `wsk` = 0. No other
 * item has `wpk`, so no other item is in the index.
 *
 * No id can forge a key: source and consumer ids are config (`[a-z0-9-]`, no `#`, `:` or `/`); an
 * event id is always the last part before a fixed-length hash or after a `#`-free source (`evt#`,
 * `pay#`, `cfl#`, payload objects), or sits between a `:` and the last `#` of a ledger key (consumer
 * ids have no `#`); a key id is the whole rest of `key#`; operation and audit ids are ours; `tday#`'s
 * day has a fixed length; tenant ids in window partitions are escaped (`keyPart`).
 *
 * Ledger (partition key `pk` = ledgerKey `<source>:<eventId>#<consumerId>`):
 *   one item per (event, consumer): the delivery's lease/attempt/state, its access log (every read,
 *   under the consumer's principal) and, once done, the usage row (tenant captured at intake, units).
 */

import type { ReceiptOrigin } from './gaps';

export const TABLE_KEY = 'pk';
export const TTL_ATTRIBUTE = 'expiresAt';

export type SecretVersion = 'current' | 'previous';

/** Captured once at intake and carried through every hop; never inferred later. */
export interface Attribution {
  readonly source: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly tenantId: string;
  readonly keyId: string;
}

export interface EventItem extends Attribution {
  readonly pk: string;
  readonly kind: 'event';
  readonly receivedAt: number;
  /** The delivery set: exactly the consumers subscribed to this event type at intake. */
  readonly consumers: string[];
  /** HMAC-SHA256 of the raw body under the deployment's payload-hash key, hex. */
  readonly payloadHmac: string;
  /** Receipts written before keyed hashes: a plain SHA-256 (and the payload under the old key). */
  readonly payloadSha256?: string;
  readonly payloadBytes: number;
  /** Which signing secret verified the webhook; absent on a receipt recovered from the provider's API (`origin`). */
  readonly secretVersion?: SecretVersion;
  /** `provider_api`: recorded by `hookledger gaps --recover` from the provider's list of events, not a webhook. */
  readonly origin?: ReceiptOrigin;
  readonly payloadExpiresAt: number;
  /** Ordered consumers in the delivery set -> the event's ordering key for each (read at intake from signed parts). */
  readonly orderingKeys?: Record<string, string>;
  /**
   * With `tracing: 'xray'`: the X-Ray trace header of the intake invocation that wrote the receipt
   * (when X-Ray sampled it), which the fan-out carries on to each consumer's message (lambdas/shared/tracing.ts).
   */
  readonly traceHeader?: string;
  /**
   * When intake wrote the receipt (its clock just before the conditional write, after the payload's):
   * the timeline's `recorded` step. Absent on receipts written before receipts kept it.
   */
  readonly recordedAt?: number;
  /** Set by `hookledger erase`: the payload (item, objects, views) and the ordering keys are gone; the rest stays. */
  readonly erasedAt?: number;
  readonly erasedBy?: string;
  readonly erasureId?: string;
}

export interface PayloadItem {
  readonly pk: string;
  readonly kind: 'payload';
  /** How the stored bytes are encoded, here or in the payload bucket. */
  readonly encoding: 'gzip' | 'identity';
  /** The stored bytes; absent exactly when `s3Key` names where they are. */
  readonly body?: Uint8Array;
  /**
   * Bodies whose stored size passes `payloads.inlineMaxBytes` (core/blobs.ts): the payload bucket's
   * object key (`payloads/<source>/<eventId>/<payloadHmac>`).
   */
  readonly s3Key?: string;
  /** Stored bytes (after encoding) of a body kept in the payload bucket. */
  readonly storedBytes?: number;
  readonly expiresAt: number;
}

export interface RequeueItem extends Attribution {
  readonly pk: string;
  readonly kind: 'requeue';
  readonly consumerId: string;
  /**
   * Exactly one of the two. A replay re-runs a done delivery (without charging it again); a repair
   * only re-sends a delivery whose message was lost, so a done one stays as it is.
   */
  readonly replayId?: string;
  readonly repairId?: string;
  readonly receivedAt: number;
  readonly createdAt: number;
  readonly expiresAt: number;
  /** Copied from the receipt: which payload item the delivery reads, and until when. */
  readonly payloadHmac?: string;
  readonly payloadExpiresAt?: number;
  /** Copied from the receipt for an ordered consumer: the FIFO message group. */
  readonly orderingKey?: string;
  /**
   * Copied from the receipt (`tracing: 'xray'`) while X-Ray still takes segments for its trace: the
   * fan-out sends it as the message's AWSTraceHeader, so the re-sent delivery joins the webhook's trace.
   */
  readonly traceHeader?: string;
}

/** The first attribution a body was received with (sources with `replayProtection: 'body'`). */
export interface BodyClaimItem extends Attribution {
  readonly pk: string;
  readonly kind: 'claim';
  readonly claimedAt: number;
}

/** One request that named a recorded event id with different bytes; nothing else was stored for it. */
export interface ConflictEntry {
  readonly at: number;
  readonly payloadHmac: string;
  readonly payloadBytes: number;
  /** Absent for an event recorded from the provider's API (`origin`). */
  readonly secretVersion?: SecretVersion;
  readonly origin?: ReceiptOrigin;
}

export interface ConflictItem {
  readonly pk: string;
  readonly kind: 'audit';
  readonly action: 'intake.duplicate_conflict';
  readonly source: string;
  readonly eventId: string;
  /** Every conflicting request counted; the first MAX_CONFLICT_ENTRIES kept in full. */
  readonly count: number;
  readonly entries: ConflictEntry[];
}

export const MAX_CONFLICT_ENTRIES = 50;

export type DeliveryState = 'leased' | 'retrying' | 'quarantined' | 'done';

/** One read of the event by a consumer; the n-th entry belongs to claim (attempt) n. */
export interface ReadEntry {
  readonly principal: string;
  readonly at: number;
  readonly replayId?: string;
  /**
   * When the claimed message was put on the queue: SQS's SentTimestamp (the fan-out's send, or a
   * re-queue's). Absent on entries written before claims recorded it.
   */
  readonly sentAt?: number;
}

export interface ErrorEntry {
  readonly attempt: number;
  readonly category: string;
  readonly message: string;
  readonly at: number;
}

/**
 * Entries kept in a ledger row's `reads` and `errors` lists; past that they are counted
 * (`readsDropped`, `errorsDropped`). 50 x ~400 bytes keeps a row far below the 400 KB item limit
 * at the largest `maxReceiveCount` (1000) the config allows.
 */
export const LEDGER_LIST_CAP = 50;

export interface LedgerItem extends Attribution {
  readonly pk: string;
  readonly consumerId: string;
  readonly receivedAt: number;
  readonly state: DeliveryState;
  /** Incremented by every claim: the fencing token. */
  readonly attempt: number;
  readonly leaseUntil?: number;
  readonly reads: ReadEntry[];
  readonly errors?: ErrorEntry[];
  /** Reads beyond LEDGER_LIST_CAP: counted, not listed. */
  readonly readsDropped?: number;
  /** Errors beyond LEDGER_LIST_CAP: counted, not listed. */
  readonly errorsDropped?: number;
  readonly lastErrorCategory?: string;
  // Set once, by the acknowledgement that made it done: the usage row.
  readonly units?: number;
  readonly ackAt?: number;
  readonly ackAttempt?: number;
  readonly principal?: string;
  readonly policyVersion?: string;
  readonly outcome?: string;
  // Replays of a done delivery re-run the handler but never touch the usage fields above.
  readonly replayId?: string;
  readonly replayLeaseUntil?: number;
  readonly replays?: { replayId: string; at: number; policyVersion: string; attempt: number; outcome: string }[];
  /** Written by `hookledger replay` on an existing item: who asked for which replay, when. Nothing else changes. */
  readonly replayRequests?: ReplayRequestEntry[];
  /**
   * Set by `hookledger erase` on a delivery that was not done: quarantined `payload_erased`, never
   * claimed again (its message, if still queued, is dropped unread and uncharged). Done rows are never touched.
   */
  readonly erasedAt?: number;
  readonly erasureId?: string;
}

/** One operator request to replay a delivery (the re-queued message may still be on its way). */
export interface ReplayRequestEntry {
  readonly replayId: string;
  readonly at: number;
  readonly operator: string;
}

/**
 * The EventStore's key prefixes: the key builders below and the IAM grants (lib/constructs, which
 * spell `dynamodb:LeadingKeys` patterns with `keyPattern`) both read them from here.
 */
export const KEY_PREFIX = {
  event: 'evt#',
  payload: 'pay#',
  bodyClaim: 'bdy#',
  conflict: 'cfl#',
  requeue: 'rq#',
  key: 'key#',
  audit: 'audit#',
  tenantDay: 'tday#',
  checkpoint: 'ckpt#',
  duplicates: 'dup#',
} as const;
export type ItemKind = keyof typeof KEY_PREFIX;

/** An IAM `dynamodb:LeadingKeys` pattern matching every EventStore item of one kind. */
export const keyPattern = (kind: ItemKind) => `${KEY_PREFIX[kind]}*`;
/** The separator between a delivery's event and its consumer in a ledger key. */
export const LEDGER_CONSUMER_SEPARATOR = '#';
/** An IAM `dynamodb:LeadingKeys` pattern matching the ledger rows of one consumer (and no other). */
export const ledgerKeyPatternOf = (consumerId: string) => `*${LEDGER_CONSUMER_SEPARATOR}${consumerId}`;

/**
 * The prefix of a body-derived event id (`eventId: { derived: 'body-hash' }`). Here, not beside the
 * config schema, so that intake reads it without bundling zod.
 */
export const BODY_HASH_ID_PREFIX = 'bh_';
export const eventKey = (source: string, eventId: string) => `${KEY_PREFIX.event}${source}#${eventId}`;
/** Without a hash: the key of payloads stored before keyed hashes (receipts with only `payloadSha256`). */
export const payloadKey = (source: string, eventId: string, payloadHmac?: string) =>
  payloadHmac ? `${KEY_PREFIX.payload}${source}#${eventId}#${payloadHmac}` : `${KEY_PREFIX.payload}${source}#${eventId}`;
export const bodyClaimKey = (source: string, payloadHmac: string) => `${KEY_PREFIX.bodyClaim}${source}#${payloadHmac}`;
export const conflictKey = (source: string, eventId: string) => `${KEY_PREFIX.conflict}${source}#${eventId}`;
export const ledgerKey = (source: string, eventId: string, consumerId: string) =>
  `${source}:${eventId}${LEDGER_CONSUMER_SEPARATOR}${consumerId}`;
export interface LedgerKeyParts {
  readonly source: string;
  readonly eventId: string;
  readonly consumerId: string;
}
/**
 * A ledger key split back into its parts. The key is the truth (a planted or damaged item may lack
 * its attribute copies); source ids have no ':' and consumer ids no '#'. Undefined when malformed.
 */
export function parseLedgerKey(pk: string): LedgerKeyParts | undefined {
  const colon = pk.indexOf(':');
  const hash = pk.lastIndexOf(LEDGER_CONSUMER_SEPARATOR);
  if (colon <= 0 || hash <= colon + 1 || hash === pk.length - 1) return undefined;
  return { source: pk.slice(0, colon), eventId: pk.slice(colon + 1, hash), consumerId: pk.slice(hash + 1) };
}
/**
 * Control items in the Ledger, `kind: 'control'`, ending in `#<consumerId>` like the consumer's own
 * rows (so its role reaches them and no other consumer's) but never parsed as a ledger key: a
 * ledger key starts with a source id, which cannot contain `#`.
 */
export const versionWatermarkKey = (consumerId: string, orderingKey: string) =>
  // base64url: an ordering key may hold ':' or '#', which would make the item parse as a ledger key.
  `ver#${Buffer.from(orderingKey, 'utf8').toString('base64url')}${LEDGER_CONSUMER_SEPARATOR}${consumerId}`;
export const breakerKey = (consumerId: string) => `breaker${LEDGER_CONSUMER_SEPARATOR}${consumerId}`;
export const requeueKey = (operationId: string, source: string, eventId: string, consumerId: string) =>
  `${KEY_PREFIX.requeue}${operationId}#${ledgerKey(source, eventId, consumerId)}`;
export const keyRegistryKey = (keyId: string) => `${KEY_PREFIX.key}${keyId}`;
/** An operator action's audit item: time first, so a listing reads in order. */
export const auditKey = (at: number, id: string) => `${KEY_PREFIX.audit}${new Date(at).toISOString()}#${id}`;

/**
 * SQS's message size limit (and SendMessageBatch's total), which Lambda's SQS event source carries
 * whole: 1 MiB. A narrowed view that would not fit goes to the payload bucket and the message carries
 * its key (`payloadObject`, claim check).
 */
export const MAX_QUEUE_MESSAGE_BYTES = 1024 * 1024;

/**
 * Why a message carries no payload: past retention (or never stored), a view too large for a
 * message where no payload bucket is configured for the claim check, or a stored body that cannot be
 * read in its source's body format (stored before the format was fixed, or under another one).
 */
export type PayloadUnavailable = 'expired' | 'too_large' | 'unreadable';

/** The error category of a delivery whose event's payload an operator erased (`hookledger erase`). */
export const PAYLOAD_ERASED = 'payload_erased';
/** The error category of a delivery refused because its payload passed retention: its DLQ copy carries none. */
export const PAYLOAD_EXPIRED = 'payload_expired';

/**
 * The message the fan-out puts on a consumer's queue: the captured attribution and the consumer's
 * narrowed view of the payload (only the fields its config lists), read once by the fan-out.
 */
export interface DeliveryMessage extends Attribution {
  /** 2: the message carries the narrowed payload (1: a reference the consumer read itself). */
  readonly v: 2;
  /**
   * The payload fields this consumer may see; absent when `payloadObject` says where they are
   * (claim check) or `payloadUnavailable` says why there are none.
   */
  readonly payload?: Readonly<Record<string, unknown>>;
  /**
   * Claim check: a narrowed view too large for a queue message, stored as JSON in the payload bucket
   * under `views/<consumerId>/...`, which only this consumer's role may read.
   */
  readonly payloadObject?: string;
  readonly payloadUnavailable?: PayloadUnavailable;
  /** Ordered consumers with `ordering.version`: the event's version, read by the fan-out from the full payload. */
  readonly orderingVersion?: string | number;
  readonly consumerId: string;
  readonly receivedAt: number;
  readonly replayId?: string;
  /** Set on a message re-sent by `reconcile --repair`: an ordinary delivery (done stays done), logged with this id. */
  readonly repairId?: string;
  /** The receipt's keyed payload hash: names the payload item. Absent for receipts from before it. */
  readonly payloadHmac?: string;
  /** Epoch ms after which the payload is never served, whatever TTL has deleted yet. */
  readonly payloadExpiresAt?: number;
  /** Ordered consumers only: the event's ordering key (the FIFO message group), captured at intake. */
  readonly orderingKey?: string;
}

export type AuditAction = 'replay' | 'backfill' | 'repair' | 'erase' | 'secret.rotate' | 'secret.retire' | 'key.issue' | 'key.revoke';

/** An operator action (`auditKey(at, auditId)`): who did what, when, to what. Never a secret value. */
export interface AuditItem {
  readonly pk: string;
  readonly kind: 'audit';
  readonly action: AuditAction;
  readonly auditId: string;
  readonly at: number;
  readonly operator: string;
  /** What the action was about (ids, counts, window); each action writes its own. */
  readonly [detail: string]: unknown;
}

export interface KeyItem {
  readonly pk: string;
  readonly kind: 'key';
  readonly keyId: string;
  readonly tenantId: string;
  readonly status: 'active' | 'revoked';
  readonly createdAt: number;
  readonly revokedAt?: number;
}

/**
 * The window index: a sparse GSI on the EventStore. One Query of `tenants#<day>` lists the tenants
 * that had receipts that UTC day; one Query of `<tenant>#<day>[#<shard>]` with `wsk BETWEEN` returns
 * exactly that tenant's receipts of a time range. Declared here so the CDK construct and the local
 * provisioning create the same index, and the readers and writers agree on its attributes.
 */
export const WINDOW_INDEX = {
  name: 'byTenantDay',
  partitionKey: 'wpk',
  sortKey: 'wsk',
  /**
   * What a window reader needs from a receipt (besides the keys, the table key and the index keys
   * that every GSI projects). Kept small so the index entry of a receipt stays within 1 KB: one
   * write unit.
   */
  projected: ['kind', 'source', 'eventId', 'eventType', 'tenantId', 'keyId', 'consumers', 'receivedAt', 'secretVersion', 'shards'],
} as const;

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
/** The UTC day of an epoch-ms instant, `yyyy-mm-dd`. */
export const utcDay = (at: number) => new Date(at).toISOString().slice(0, 10);
/** The first part of the GSI partition listing the tenants of one UTC day: `tenants#<day>`. */
const DAY_TENANTS = 'tenants';
/** Words a key part may not spell as it is, because the key format uses them itself. */
export const RESERVED_KEY_PARTS: ReadonlySet<string> = new Set([DAY_TENANTS]);

/**
 * A provider-supplied id (a tenant id) as one `#`-separated part of a key: `%` and `#` percent-encoded,
 * and an id that spells a reserved word (`tenants`) gets its first character encoded as well
 * (`%74enants`). Injective, never contains `#`, never a reserved word: no id can forge another id's key
 * or the day's tenant list. Every id without `%` or `#` that is not reserved is unchanged, so the keys
 * written before this escape stay valid (`hookledger index backfill` re-keys the others).
 */
export function keyPart(id: string): string {
  const escaped = id.replace(/[%#]/g, (c) => (c === '%' ? '%25' : '%23'));
  if (!RESERVED_KEY_PARTS.has(escaped)) return escaped;
  return `%${escaped.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}${escaped.slice(1)}`;
}

/**
 * The GSI partition of a tenant's receipts of one UTC day (and one shard, when the tenant is sharded).
 * The tenant id is escaped (`keyPart`): a tenant named `tenants` is not the day's tenant list.
 */
export const tenantDayPartition = (tenantId: string, day: string, shard?: number) =>
  shard === undefined || shard === 0 ? `${keyPart(tenantId)}#${day}` : `${keyPart(tenantId)}#${day}#${shard}`;
/** The GSI partition listing the tenants of one UTC day: no escaped tenant id spells it. */
export const dayTenantsPartition = (day: string) => `${DAY_TENANTS}#${day}`;
/**
 * The tenant id is the key's last part, after a day of fixed length (`yyyy-mm-dd`): whatever it holds
 * it cannot read as another day or tenant, so it is kept as it is (existing registry items keep their keys).
 */
export const tenantDayKey = (day: string, tenantId: string) => `${KEY_PREFIX.tenantDay}${day}#${tenantId}`;
export const checkpointKey = (job: string) => `${KEY_PREFIX.checkpoint}${job}`;

/**
 * Intake's duplicate answers of one source, one item per UTC hour (`dup#<source>#<yyyy-mm-ddThh>`),
 * one counter attribute per minute of it: a duplicate adds 1 to its minute (one UpdateItem, the item
 * stays under 1 KB), and a window of h hours is read as h items per source. The hour in the key
 * spreads a source's writes over a new partition key every hour.
 */
export interface DuplicateCountItem {
  readonly pk: string;
  readonly kind: 'duplicates';
  readonly source: string;
  /** The hour's start, epoch ms. */
  readonly hourStart: number;
  /** `m00`..`m59`: the duplicates answered in that minute; absent for a minute with none. */
  readonly [minute: `m${string}`]: number;
}

export const duplicateCountKey = (source: string, at: number) =>
  `${KEY_PREFIX.duplicates}${source}#${new Date(at).toISOString().slice(0, 13)}`;
/** The counter attribute of `at`'s minute within its hour's item: `m00`..`m59`. */
export const duplicateMinuteAttribute = (at: number) => `m${String(new Date(at).getUTCMinutes()).padStart(2, '0')}`;
/** The hour starts (epoch ms) whose items cover [from, to). */
export function duplicateCountHours(from: number, to: number): number[] {
  const hours: number[] = [];
  for (let at = Math.floor(from / HOUR_MS) * HOUR_MS; at < to; at += HOUR_MS) hours.push(at);
  return hours;
}

/**
 * A receipt's shard within its tenant-day partition: FNV-1a of the event id, modulo `shards`. Shard 0
 * has no suffix, so a tenant that was never sharded keeps one partition per day.
 */
export function windowShard(eventId: string, shards: number): number {
  if (shards <= 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < eventId.length; i++) {
    hash ^= eventId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

/** The index attributes of a receipt (spread into the item). */
export function receiptIndexAttributes(receipt: Pick<EventItem, 'tenantId' | 'eventId' | 'receivedAt'>, shards = 1) {
  return {
    [WINDOW_INDEX.partitionKey]: tenantDayPartition(receipt.tenantId, utcDay(receipt.receivedAt), windowShard(receipt.eventId, shards)),
    [WINDOW_INDEX.sortKey]: receipt.receivedAt,
  };
}

/** One tenant had receipts on one UTC day, spread over `shards` index partitions. */
export interface TenantDayItem {
  readonly pk: string;
  readonly kind: 'tenantDay';
  readonly day: string;
  readonly tenantId: string;
  readonly shards: number;
  readonly wpk: string;
  readonly wsk: number;
}

export function tenantDayItem(day: string, tenantId: string, shards = 1): TenantDayItem {
  return { pk: tenantDayKey(day, tenantId), kind: 'tenantDay', day, tenantId, shards, wpk: dayTenantsPartition(day), wsk: 0 };
}
