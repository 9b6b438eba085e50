/**
 * Bodies and views that do not fit where they normally travel: the payload bucket's object keys (the
 * prefixes IAM grants use come from here too), the sizes that decide, and the ceiling on accepted
 * bodies. Builders for the object keys live next to the table keys' builders in spirit: one place,
 * read by the adapters that write and read the objects and by the constructs that grant them.
 *
 * Bucket layout (one bucket, SSE, SSL only, lifecycle expiry = payload retention days):
 *   payloads/<source>/<eventId>/<payloadHmac>   a stored body too large for its payload item (intake
 *                                               writes, the fan-out reads)
 *   views/<consumerId>/<eventId>/<viewSha256>   a consumer's narrowed view too large for a queue
 *                                               message (the fan-out writes, only that consumer reads)
 */

/**
 * The most `payloads.inlineMaxBytes` may be: a stored body (after gzip, when gzip is smaller) above
 * it never fits its payload item. DynamoDB items stop at 400 KB, names and the other attributes
 * included; 300 KB leaves room and keeps a payload item's write under 300 WRU.
 */
export const MAX_INLINE_PAYLOAD_BYTES = 300_000;

/**
 * The default `payloads.inlineMaxBytes`: a stored body up to 7,000 bytes stays in its payload item
 * (7 write units with the item's key and attributes), a larger one goes to the payload bucket. Just
 * under where the two cost the same at list prices and the default 30-day retention (7,040 bytes;
 * docs/configuration.md, "Where a body is stored"; bench/body-store.ts computes it): in the item a body costs a
 * write unit per started KB at intake, a read unit per started 4 KB at the fan-out and DynamoDB
 * storage until TTL; in the bucket one PUT and one GET ($5.40 per million), S3 storage until the
 * lifecycle rule, and a reference item of one write and one read unit.
 */
export const DEFAULT_INLINE_PAYLOAD_BYTES = 7_000;

/** Where a body of `storedBytes` (as stored: gzip when smaller) is kept, given `payloads.inlineMaxBytes`. */
export const payloadStoreFor = (storedBytes: number, inlineMaxBytes: number): 'item' | 'bucket' =>
  storedBytes > inlineMaxBytes ? 'bucket' : 'item';

/**
 * The largest `maxBodyBytes` a source may set: 4 MiB. Intake runs behind API Gateway (HTTP API,
 * payload format 2.0), which invokes Lambda synchronously, and a synchronous invocation's request
 * stops at 6 MB (6,291,456 bytes), the event envelope included:
 *
 *   - envelope (request context, headers, path, query): HTTP API caps the request line and headers at
 *     10,240 bytes; with the request context and JSON names, allow 16 KiB (16,384 bytes);
 *   - a binary body (a content type API Gateway does not treat as text) is base64-encoded: 4/3 of its
 *     size, so the most a binary body can be is (6,291,456 - 16,384) x 3/4 = 4,706,304 bytes;
 *   - a text body is carried as a JSON string: every `"`, `\` and raw newline/tab costs one more byte.
 *
 * At 4,194,304 bytes a base64 body is 5,592,408 bytes (5,608,792 with the envelope, 682,664 to spare)
 * and a text body fits as long as escaping adds at most 49.6% ((6,291,456 - 16,384 - 4,194,304) /
 * 4,194,304), which ordinary JSON webhooks (5-20% quotes) never reach. A request over the platform's
 * limit never reaches intake: API Gateway answers it (413/5xx) and the provider retries, in vain.
 */
export const MAX_BODY_BYTES_CEILING = 4 * 1024 * 1024;

/** The default `maxBodyBytes`: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export const OBJECT_PREFIX = { payload: 'payloads/', view: 'views/' } as const;

/** Where a large body is stored: the keyed hash names the bytes, as in the payload item's key. */
export const payloadObjectKey = (source: string, eventId: string, payloadHmac: string) =>
  `${OBJECT_PREFIX.payload}${source}/${eventId}/${payloadHmac}`;

/** Where a consumer's too-large narrowed view is stored; `viewSha256` names its content. */
export const viewObjectKey = (consumerId: string, eventId: string, viewSha256: string) =>
  `${OBJECT_PREFIX.view}${consumerId}/${eventId}/${viewSha256}`;

/** The object-key patterns IAM grants use (`*` matches the rest of the key). */
export const payloadObjectPattern = () => `${OBJECT_PREFIX.payload}*`;
export const viewObjectPattern = (consumerId?: string) => (consumerId ? `${OBJECT_PREFIX.view}${consumerId}/*` : `${OBJECT_PREFIX.view}*`);

/**
 * The object tag that carries an object's retention in days: the bucket has one lifecycle rule per
 * retention value the configuration uses (a source's `retentionDays`, else `retention.payloadDays`),
 * filtered on this tag, so a body or view expires after its own source's retention. Per-source
 * prefixes cannot do it: views are keyed by consumer, not source.
 */
export const RETENTION_TAG = 'hookledger-retention-days';

/** Whole days between receipt and payload expiry (what intake computed from the source's retention). */
export const retentionDaysOf = (receivedAt: number, payloadExpiresAt: number) =>
  Math.max(1, Math.round((payloadExpiresAt - receivedAt) / 86_400_000));

/** Where an event's stored bodies live (its own and any conflicting one): erasure deletes the prefix. */
export const payloadObjectPrefix = (source: string, eventId: string) => `${OBJECT_PREFIX.payload}${source}/${eventId}/`;

/** Where one consumer's claim-checked views of an event live. */
export const viewObjectPrefix = (consumerId: string, eventId: string) => `${OBJECT_PREFIX.view}${consumerId}/${eventId}/`;
