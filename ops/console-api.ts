/**
 * The console's JSON API (`/api`) as both of its ends read it: console/api.ts answers each route with
 * the response named here (the compiler checks the operation's report against it), and the page
 * (console/client/) reads the same types. A response is the part of the operation's report (ops/) the
 * page shows; the report itself may carry more. Queries and bodies are what the page sends: the
 * server parses and checks each field itself.
 *
 * Types only, and importing nothing: the page's typecheck (console/client/tsconfig.json: DOM types,
 * none of Node's) reads every file it imports, and its bundle keeps none of an `import type`. So the
 * states and kinds are spelled out here rather than taken from core/model.ts (which uses Node's
 * Buffer) or the report modules (which import the adapters).
 */

/** A delivery's state as the operator sees it: `ready` when no ledger row exists yet. */
export type DeliveryState = 'ready' | 'leased' | 'retrying' | 'quarantined' | 'done';

/** Receipts with receivedAt in [from, to), epoch milliseconds. */
export interface TimeWindow {
  readonly from: number;
  readonly to: number;
}

/** A time as the page types it: an ISO time, `now`, or a duration back from now (`-24h`). */
type TimeText = string;

/** What every route answers with when it fails (4xx, 5xx): the error's class name and its message. */
export interface ApiErrorBody {
  readonly error: string;
  readonly message: string;
}

// --- GET /overview ------------------------------------------------------------------------------

export interface OverviewResponse {
  /** The target's label (the local stack, or the deployed stack's name and region). */
  readonly target: string;
  readonly kind: 'local' | 'aws';
  /** The configured source ids. */
  readonly sources: readonly string[];
  /** The configured consumer ids. */
  readonly consumers: readonly string[];
}

// --- GET /events --------------------------------------------------------------------------------

export interface EventsQuery {
  /** One event by id: no window is read. */
  readonly eventId?: string;
  readonly tenant?: string;
  readonly type?: string;
  readonly source?: string;
  readonly consumer?: string;
  /** Only events with a delivery in this state (a `DeliveryState`). */
  readonly state?: string;
  /** `recorded` or `duplicate_conflict`. */
  readonly outcome?: string;
  readonly from?: TimeText;
  readonly to?: TimeText;
  /** Offset into the newest-first order: the previous page's `next`. */
  readonly cursor?: number;
  readonly limit?: number;
}

export interface EventRow {
  readonly source: string;
  readonly eventId: string;
  readonly tenantId: string;
  readonly eventType: string;
  readonly receivedAt: number;
  /** Each consumer of the delivery set, and where its delivery stands. */
  readonly deliveries: Readonly<Record<string, DeliveryState>>;
}

export interface EventsResponse {
  readonly rows: readonly EventRow[];
  /** Matching events in the window (or 0/1 by id). */
  readonly total: number;
  /** The cursor of the next page; absent on the last. */
  readonly next?: number;
  /** Absent when the search was by id. */
  readonly window?: TimeWindow;
  /** Set when the id searched for was read as a prefix of event ids. */
  readonly idPrefix?: string;
}

/**
 * Replay matching: the chosen consumer's deliveries of every event the Events filters match in the
 * window (answered with `ReplayResponse`).
 */
export interface MatchingReplayBody {
  readonly consumer: string;
  /** An event id prefix (the search box's text). */
  readonly eventId?: string;
  readonly tenant?: string;
  readonly type?: string;
  readonly source?: string;
  readonly state?: string;
  readonly outcome?: string;
  readonly from: TimeText;
  readonly to: TimeText;
  /** Count only. */
  readonly dryRun?: boolean;
}

// --- GET /event, POST /event/replay -------------------------------------------------------------

export interface EventQuery {
  readonly source?: string;
  readonly eventId: string;
}

export interface EventReceipt {
  readonly source: string;
  readonly eventId: string;
  readonly tenantId: string;
  readonly keyId: string;
  readonly eventType: string;
  readonly receivedAt: number;
  /** Which signing secret verified the webhook (`current`, `previous`); absent for an event recorded from the provider's API. */
  readonly secretVersion?: string;
  /** The keyed hash of the body (`hmac-sha256:<hex>`). */
  readonly payloadHash: string;
  readonly payloadBytes: number;
  readonly payload: 'present' | 'expired' | 'erased';
  /** Set once `hookledger erase` removed the payload: when, by whom, which run. */
  readonly erased?: { readonly at: number; readonly by: string; readonly erasureId: string };
  /** Set when the body was kept in the payload bucket: its object key. */
  readonly payloadObject?: string;
  readonly payloadExpiresAt: number;
  /** The delivery set. */
  readonly consumers: readonly string[];
}

/**
 * One step of the event's timeline (ops/trace.ts `TimelineStep`): received, recorded, queued per
 * consumer, then each consumer's attempts. No `at` for a step nothing times (`note` says why).
 */
export interface TimelineStep {
  readonly step: 'received' | 'recorded' | 'queued' | 'claimed' | 'acknowledged' | 'failed' | 'erased';
  readonly consumer?: string;
  readonly attempt?: number;
  readonly at?: number;
  readonly sinceReceiptMs?: number;
  readonly category?: string;
  readonly outcome?: string;
  readonly replayId?: string;
  /** An HTTP destination's answer. */
  readonly httpStatus?: number;
  /** From the claim to this outcome, ms (for an HTTP destination: the request and the worker's steps around it). */
  readonly durationMs?: number;
  readonly note?: string;
}

export interface DeliveryError {
  readonly attempt: number;
  readonly at: number;
  readonly category: string;
  readonly message: string;
}

export interface EventDelivery {
  readonly consumer: string;
  /** In the receipt's delivery set (a row outside it is shown as unexpected). */
  readonly expected: boolean;
  readonly state: DeliveryState;
  readonly attempts: number;
  readonly lastErrorCategory?: string;
  /** The latest attempts' errors, oldest first. */
  readonly errors: readonly DeliveryError[];
  readonly units?: number;
  /** Who read the payload for this delivery. */
  readonly principal?: string;
  /** The payload reads recorded on the ledger row (the page counts them). */
  readonly reads: readonly unknown[];
  readonly ackAt?: number;
}

export interface EventResponse {
  readonly receipt: EventReceipt;
  readonly deliveries: readonly EventDelivery[];
  /** Requests that named this event id with other bytes (answered `duplicate_conflict`, nothing stored). */
  readonly conflicts: { readonly count: number };
  /** The stored payload: parsed when it is JSON, its text otherwise; absent once expired or erased, or kept in the bucket. */
  readonly payload?: { readonly json?: unknown; readonly text?: string };
  /** Every step from receipt to each consumer's last attempt, as `hookledger trace --json` has it. */
  readonly timeline: readonly TimelineStep[];
}

export interface ReplayBody {
  readonly source: string;
  readonly eventId: string;
  readonly consumer: string;
  /** Count only. */
  readonly dryRun?: boolean;
}

export interface ReplayResponse {
  readonly consumer: string;
  readonly dryRun: boolean;
  readonly matched: number;
  /** Left out: their payload passed retention, or was erased. */
  readonly expired?: number;
  readonly erased?: number;
  readonly requeued: number;
  /** Absent on a dry run or when nothing matched. */
  readonly replayId?: string;
}

// --- GET /consumers, POST /consumers/{pause,resume,redrive} ---------------------------------------

export interface ConsumersQuery {
  /** How far back the deliveries are counted: a duration (`24h`). */
  readonly since?: string;
}

/** A queue's messages: visible, and in flight (received, not yet deleted). */
export interface QueueDepth {
  readonly visible: number;
  readonly inFlight: number;
}

export interface ConsumerRow {
  readonly consumer: string;
  /** Absent when the pause state could not be read. */
  readonly paused?: boolean;
  readonly ready: number;
  /** Leased, lease still live. */
  readonly leased: number;
  /** Leased, lease ended: SQS will hand it out again. */
  readonly expiredLeases: number;
  readonly retrying: number;
  readonly quarantined: number;
  readonly done: number;
  readonly queue?: QueueDepth;
  readonly dlq?: QueueDepth;
  readonly oldestPendingAgeMs?: number;
}

/** An HTTP consumer's circuit breaker: its consecutive failures, and the count that pauses it. */
export interface CircuitState {
  readonly failures: number;
  readonly breakAfter?: number;
}

export interface ConsumersResponse {
  /** When the counts were read. */
  readonly at: number;
  readonly window?: TimeWindow;
  readonly consumers: readonly ConsumerRow[];
  readonly intake: { readonly events: number };
  /** The fan-out's on-failure queue. */
  readonly fanoutFailures?: QueueDepth;
  /** Per HTTP consumer. */
  readonly circuits: Readonly<Record<string, CircuitState>>;
}

export interface ConsumerBody {
  readonly consumer: string;
}

export interface PauseResponse {
  readonly consumer: string;
  readonly paused: boolean;
}

export interface RedriveBody extends ConsumerBody {
  /** Count only. */
  readonly dryRun?: boolean;
}

export interface RedriveResponse {
  readonly consumer: string;
  readonly dryRun: boolean;
  /** What the DLQ held: on a dry run now, else when the redrive started. */
  readonly toMove: number;
  /** Absent on a dry run. */
  readonly moved?: number;
}

// --- GET /usage (and /usage.csv) ------------------------------------------------------------------

export interface UsageQuery {
  readonly from?: TimeText;
  readonly to?: TimeText;
  readonly tenant?: string;
  readonly consumer?: string;
}

export interface UsageRow {
  readonly tenantId: string;
  readonly consumerId: string;
  readonly units: number;
  /** Done deliveries counted (including those with 0 units). */
  readonly deliveries: number;
}

export interface UsageResponse {
  readonly from: number;
  readonly to: number;
  readonly rows: readonly UsageRow[];
  readonly totalUnits: number;
}

// --- GET /reconcile, POST /reconcile/repair -------------------------------------------------------

export interface ReconcileQuery {
  readonly from?: TimeText;
  readonly to?: TimeText;
  /** A duration (`15m`). */
  readonly grace?: string;
}

export interface Violation {
  /** `missing_delivery`, `stalled_delivery`, `unexpected_delivery`, ... */
  readonly kind: string;
  readonly source: string;
  readonly eventId: string;
  readonly consumerId: string;
  readonly ledgerKey: string;
}

export interface ReconcileResponse {
  readonly from: number;
  readonly to: number;
  readonly receipts: number;
  readonly expectedDeliveries: number;
  readonly ledgerItems: number;
  readonly quarantined: number;
  /** Expected deliveries with no ledger item yet, still within the grace. */
  readonly inGrace: number;
  readonly violations: readonly Violation[];
}

export interface RepairBody extends ReconcileQuery {
  /** Count only. */
  readonly dryRun?: boolean;
}

export interface RepairResponse {
  readonly dryRun: boolean;
  /** Absent on a dry run or when there was nothing to repair. */
  readonly repairId?: string;
  /** Re-queued now (on a dry run: would be). */
  readonly repaired: number;
  /** Not re-queued now: paused, or over the limit. */
  readonly unrepaired: number;
  /** Violations a re-send cannot fix. */
  readonly notRepairable: number;
}

// --- GET /sources -------------------------------------------------------------------------------

export interface SourcesQuery {
  readonly from?: TimeText;
  readonly to?: TimeText;
}

export interface SourceRow {
  readonly source: string;
  readonly provider?: string;
  readonly scheme: string;
  /** The provider event types the source declares it receives (`events`); absent when it declares none. */
  readonly declaredEvents?: readonly string[];
  /** Events recorded in the window. */
  readonly events: number;
  readonly bySecretVersion: Readonly<Record<string, number>>;
  /** The newest receipt the previous secret verified in the window. */
  readonly previousSecretLastVerified?: number;
  /** Absent when the rotation state could not be read (`rotationError` says why). Never a value. */
  readonly rotation?: { readonly hasPrevious: boolean; readonly previousUntil?: number };
  readonly rotationError?: string;
}

export interface SourcesResponse {
  readonly window: TimeWindow;
  readonly sources: readonly SourceRow[];
  /** Intake requests by outcome: the local stack's counters; absent on AWS. */
  readonly outcomes?: Readonly<Record<string, number>>;
}

// --- GET /activity ------------------------------------------------------------------------------

export interface ActivityQuery {
  /** `1h`, `24h` or `7d`, ending now; `from`/`to` instead when absent. */
  readonly preset?: string;
  readonly from?: TimeText;
  readonly to?: TimeText;
}

export interface SourceActivity {
  readonly source: string;
  /** Events received per bucket. */
  readonly received: readonly number[];
  readonly total: number;
  /** Requests answered as duplicates per bucket (counted per minute by intake, in the bucket the minute starts in). */
  readonly duplicates: readonly number[];
  readonly duplicateTotal: number;
}

export interface ConsumerActivity {
  readonly consumer: string;
  /** Per bucket, in the bucket of the event's receipt (as status and usage attribute them). */
  readonly done: readonly number[];
  readonly retrying: readonly number[];
  readonly quarantined: readonly number[];
  readonly totals: { readonly done: number; readonly retrying: number; readonly quarantined: number };
  /** Received -> acknowledged of the bucket's done deliveries, ms; null where none was done. */
  readonly p50: readonly (number | null)[];
  readonly p99: readonly (number | null)[];
  /** Over the window. */
  readonly latencyMs: { readonly p50?: number; readonly p99?: number; readonly samples: number };
}

export interface ActivityResponse {
  readonly from: number;
  readonly to: number;
  readonly bucketMs: number;
  /** Each bucket's start. */
  readonly buckets: readonly number[];
  readonly sources: readonly SourceActivity[];
  readonly consumers: readonly ConsumerActivity[];
}

// --- GET /health --------------------------------------------------------------------------------

export interface HealthRow {
  /** The alarm's name on a deployed stack (`Paused` has none). */
  readonly rule: string;
  /** A consumer id, a source id (SignatureFailures), `fan-out` or `reconcile`. */
  readonly subject: string;
  readonly state: 'OK' | 'ALARM';
  readonly detail: string;
  /** Why the row is in its state: what was found and the threshold it is held against. */
  readonly reason: string;
  /** When an ALARM row's condition began (ms since the epoch), where the data records it. */
  readonly since?: number;
}

export interface HealthResponse {
  readonly at: number;
  readonly rows: readonly HealthRow[];
  /** What the rules could not see here, and how they differ from the deployed alarms. */
  readonly notes: readonly string[];
}

// --- the routes ---------------------------------------------------------------------------------

/** Every GET route: its path under /api, its query, what it answers. */
export interface ConsoleGets {
  '/overview': { query: Record<string, never>; response: OverviewResponse };
  '/events': { query: EventsQuery; response: EventsResponse };
  '/event': { query: EventQuery; response: EventResponse };
  '/consumers': { query: ConsumersQuery; response: ConsumersResponse };
  '/usage': { query: UsageQuery; response: UsageResponse };
  /** A download: the CLI's usage CSV (text/csv, with a file name). */
  '/usage.csv': { query: UsageQuery; response: string };
  '/reconcile': { query: ReconcileQuery; response: ReconcileResponse };
  '/sources': { query: SourcesQuery; response: SourcesResponse };
  '/activity': { query: ActivityQuery; response: ActivityResponse };
  '/health': { query: Record<string, never>; response: HealthResponse };
}

/** Every POST route: its path under /api, its JSON body, what it answers. */
export interface ConsolePosts {
  '/event/replay': { body: ReplayBody; response: ReplayResponse };
  '/events/replay': { body: MatchingReplayBody; response: ReplayResponse };
  '/consumers/pause': { body: ConsumerBody; response: PauseResponse };
  '/consumers/resume': { body: ConsumerBody; response: PauseResponse };
  '/consumers/redrive': { body: RedriveBody; response: RedriveResponse };
  '/reconcile/repair': { body: RepairBody; response: RepairResponse };
}

export type GetPath = keyof ConsoleGets;
export type PostPath = keyof ConsolePosts;
