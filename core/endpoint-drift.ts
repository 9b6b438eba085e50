/**
 * A source's webhook endpoint at its provider against its configuration: which of the provider's
 * endpoints is the source's, and how it differs (another URL, event types missing or extra, disabled
 * by the provider). Pure, in core/ so the scheduled ProviderDrift check (lambdas/reconcile) reads it
 * as `sources connect | remote` (ops/connect) do.
 */

/**
 * The Square API version every webhook subscriptions request names (`Square-Version`), and a created
 * subscription keeps: its payloads follow it, so registration and the drift check name the same one.
 */
export const SQUARE_API_VERSION = '2025-01-23';

/** One webhook endpoint as a provider's API lists it. */
export interface RemoteEndpoint {
  readonly id: string;
  readonly url: string;
  readonly enabled: boolean;
  readonly events: readonly string[];
  /** The provider's own delivery status, where its API gives one. */
  readonly status?: string;
}

export type Drift =
  | { readonly kind: 'not_connected' }
  | { readonly kind: 'url'; readonly expected: string; readonly actual: string }
  | { readonly kind: 'missing_events'; readonly events: readonly string[] }
  | { readonly kind: 'extra_events'; readonly events: readonly string[] }
  | { readonly kind: 'disabled'; readonly status?: string };

export interface DesiredEndpoint {
  readonly url: string;
  readonly events: readonly string[];
}

/**
 * The source's endpoint among the provider's: the one at its webhook URL, else one at the same path on
 * another host (an old tunnel, a URL edited at the provider), so a moved URL is drift to fix and never
 * a reason for a second endpoint.
 */
export function findEndpoint(endpoints: readonly RemoteEndpoint[], url: string): RemoteEndpoint | undefined {
  const exact = endpoints.find((e) => sameUrl(e.url, url));
  if (exact) return exact;
  const path = pathOf(url);
  return path === undefined ? undefined : endpoints.find((e) => pathOf(e.url) === path);
}

/** Every way the endpoint differs from the configuration; empty when it matches. */
export function driftOf(endpoint: RemoteEndpoint | undefined, desired: DesiredEndpoint): Drift[] {
  if (!endpoint) return [{ kind: 'not_connected' }];
  const drift: Drift[] = [];
  if (!sameUrl(endpoint.url, desired.url)) drift.push({ kind: 'url', expected: desired.url, actual: endpoint.url });
  const remote = new Set(endpoint.events);
  const wanted = new Set(desired.events);
  const missing = desired.events.filter((e) => !remote.has(e));
  const extra = endpoint.events.filter((e) => !wanted.has(e));
  if (missing.length > 0) drift.push({ kind: 'missing_events', events: missing });
  if (extra.length > 0) drift.push({ kind: 'extra_events', events: extra });
  if (!endpoint.enabled) drift.push({ kind: 'disabled', ...(endpoint.status ? { status: endpoint.status } : {}) });
  return drift;
}

/** One line per drift, for people. */
export function describeDrift(drift: Drift): string {
  switch (drift.kind) {
    case 'not_connected':
      return 'no endpoint at the provider for this source (hookledger sources connect)';
    case 'url':
      return `another URL: the provider sends to ${drift.actual}, the source is at ${drift.expected}`;
    case 'missing_events':
      return `event types not subscribed: ${drift.events.join(', ')}`;
    case 'extra_events':
      return `event types subscribed but not in the source's events: ${drift.events.join(', ')}`;
    case 'disabled':
      return `disabled by the provider${drift.status ? ` (${drift.status})` : ''}`;
  }
}

function sameUrl(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

function pathOf(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).pathname.replace(/\/+$/, '') : undefined;
}
