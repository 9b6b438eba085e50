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
  /** How many events the provider listed in the window. */
  readonly providerEvents: number;
  readonly missing: MissingEvent[];
  readonly recovered: RecoveredEvent[];
}

/** Missing events not recovered by this run: what the exit code and the metric count. */
export function unrecovered(report: GapReport): number {
  const done = new Set(report.recovered.filter((r) => r.outcome !== 'failed').map((r) => r.eventId));
  return report.missing.filter((m) => !done.has(m.eventId)).length;
}
