/**
 * The provider gap check's contracts: which provider APIs list what they sent (`gapCheck.api` on a
 * source), where each lives by default, which base URLs are accepted, and the report `hookledger gaps`
 * prints and the scheduled run publishes. The clients are in adapters/provider-events.ts.
 */

/**
 * The provider APIs a gap check can read, and how each recovers a missing event:
 * `body` (the API returns the event as the webhook carried it: recorded through intake's write path)
 * or `redelivery` (the API only lists deliveries and re-sends one on request: the signed webhook does the rest).
 */
export const GAP_APIS = {
  stripe: { baseUrl: 'https://api.stripe.com', recovery: 'body', retentionDays: 30 },
  github: { baseUrl: 'https://api.github.com', recovery: 'redelivery', retentionDays: 3 },
  paddle: { baseUrl: 'https://api.paddle.com', recovery: 'body', retentionDays: 90 },
  square: { baseUrl: 'https://connect.squareup.com', recovery: 'body', retentionDays: 28 },
} as const;

export type GapApi = keyof typeof GAP_APIS;
export const GAP_API_NAMES = Object.keys(GAP_APIS) as GapApi[];

/**
 * The bounds of one run's paging through a provider's list (`gapCheck.maxPages`, `gapCheck.maxEvents`):
 * a list that never ends, or a misbehaving API answering the same page forever, stops there with an
 * error instead of growing without end. 500 pages of 100 (Stripe, GitHub, Square; Paddle's 200) take a
 * few minutes, about what the scheduled function's 5-minute timeout allows; 50,000 events with their
 * bodies fit its 512 MB.
 */
export const DEFAULT_GAP_MAX_PAGES = 500;
export const GAP_MAX_PAGES_CEILING = 10_000;
export const DEFAULT_GAP_MAX_EVENTS = 50_000;
export const GAP_MAX_EVENTS_CEILING = 500_000;

/**
 * `events: ['*']` on a source: every type the provider sends (Stripe's and GitHub's wildcard). The gap
 * check then compares every listed type, and recovery is refused: it would record them all.
 */
export const EVERY_EVENT_TYPE = '*';

/**
 * The event types recovery may record for a source: its `events` by name, or undefined when it declares
 * none or `*` (recovery is then refused: a provider's list holds types the endpoint never receives).
 */
export function recoverableTypes(source: { readonly events?: readonly string[] }): ReadonlySet<string> | undefined {
  const events = source.events;
  if (!events || events.includes(EVERY_EVENT_TYPE)) return undefined;
  return new Set(events);
}

/** Whether the source receives this type: every type when it declares none or `*`, else the named ones. */
export function receivesType(source: { readonly events?: readonly string[] }, type: string): boolean {
  const events = source.events;
  return !events || events.includes(EVERY_EVENT_TYPE) || events.includes(type);
}

/** Recorded on a receipt written from a provider's API instead of a signed webhook (it has no secret version). */
export const PROVIDER_API_ORIGIN = 'provider_api';
export type ReceiptOrigin = typeof PROVIDER_API_ORIGIN;

/** Where the credential of a source's gap check lives in the local secrets file. */
export const apiKeyPath = (sourceId: string) => `sources.${sourceId}.apiKey`;

/**
 * Why a base URL is refused, or undefined when it is fine: https, or http on loopback only (stand-ins
 * in tests). The credential travels with every request: never in the clear to another host.
 */
export function baseUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `"${value}" is not a URL`;
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return undefined;
  return `"${value}" must be https:// (http:// only to a loopback address: 127.0.0.1, ::1 or localhost), since the API key is sent with every request`;
}

export function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || hostname === '::1' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** One event the provider says it sent. */
export interface ProviderEvent {
  readonly eventId: string;
  readonly type: string;
  /** Epoch ms. */
  readonly createdAt: number;
}

export interface MissingEvent {
  readonly eventId: string;
  readonly type: string;
  /** ISO 8601. */
  readonly createdAt: string;
}

/**
 * What recovering one missing event did: `recorded` (written through intake's write path),
 * `duplicate` (a receipt appeared meanwhile), `redelivery_requested` (the provider will re-send it
 * signed), or `failed` with the reason (the event stays missing).
 */
export interface RecoveredEvent {
  readonly eventId: string;
  readonly outcome: 'recorded' | 'duplicate' | 'duplicate_conflict' | 'redelivery_requested' | 'failed';
  readonly reason?: string;
}

export interface GapReport {
  readonly source: string;
  readonly api: GapApi;
  /** ISO 8601, the window [from, to) of the provider's events (by their creation time). */
  readonly from: string;
  readonly to: string;
  /** How many events of the types the source declares (`events`) the provider listed in the window. */
  readonly providerEvents: number;
  /**
   * The provider's events of types the source does not declare: never sent to its endpoint, so neither
   * compared nor recovered. `types`: their distinct types, sorted.
   */
  readonly skipped: { readonly events: number; readonly types: readonly string[] };
  readonly missing: MissingEvent[];
  readonly recovered: RecoveredEvent[];
}

/** Missing events not recovered by this run: what the exit code and the metric count. */
export function unrecovered(report: GapReport): number {
  const done = new Set(report.recovered.filter((r) => r.outcome !== 'failed').map((r) => r.eventId));
  return report.missing.filter((m) => !done.has(m.eventId)).length;
}
