/**
 * The key port's adapter (VerificationKeysPort, core/schemes/types.ts): public keys of key-fetching
 * schemes (jwks: Plaid) fetched from the scheme's configured endpoint and cached by key id.
 *
 * Plaid's endpoint: POST `{ client_id, secret, key_id }` (the source's secret is
 * `<client_id>:<secret>`) answers `{ key: <JWK> }`, or 400 for a key id it does not know.
 *
 * - A known key is served from memory for `ttlMs` (one fetch per kid per TTL, whatever the traffic),
 *   then refreshed; while the endpoint cannot be reached it keeps serving, asking again after
 *   `missTtlMs`. Known kids never wait on the budgets below: invented kids cannot starve them.
 * - An unknown kid is fetched once; a miss is remembered for `missTtlMs`. What a flood of invented
 *   kids (each naming a new kid, so no cache helps) can spend is bounded per source, not across
 *   sources: `maxMissesPerMinute` fetches that found no key (a fetch that finds one costs nothing).
 *   Beyond that a new kid is refused (intake answers 503, the provider retries) and remembered as
 *   refused; named again (the provider's retry), it is fetched from a second budget,
 *   `maxRetriesPerMinute`, that kids named once never touch. So a genuine new kid gets through at
 *   its retry unless the flood also names each of its invented kids twice, and the endpoint gets at
 *   most misses + retries calls a minute per source under any flood.
 * - Concurrent requests for one kid share one fetch. Credentials never appear in errors or logs.
 */
import { HookledgerError } from '../core/errors';
import type { JsonWebKey, KeyRequest, VerificationKeysPort } from '../core/schemes/types';

export class KeyFetchError extends HookledgerError {
  override readonly name = 'KeyFetchError';
}

export interface HttpVerificationKeysOptions {
  readonly fetch?: typeof fetch;
  readonly clock?: () => number;
  /** How long a fetched key is served without asking again. @default 24 h */
  readonly ttlMs?: number;
  /** How long an unknown kid is remembered as unknown, and a failed refresh of a known one waits. @default 60 s */
  readonly missTtlMs?: number;
  /** Per source and rolling minute: fetches of kids not known here that found no key. @default 10 */
  readonly maxMissesPerMinute?: number;
  /** Per source and rolling minute, beyond the misses: fetches of a kid refused before and named again. @default 10 */
  readonly maxRetriesPerMinute?: number;
  /** Per call; providers stop waiting for the webhook answer after a few seconds. @default 2000 */
  readonly timeoutMs?: number;
}

interface Entry {
  readonly key: JsonWebKey | undefined;
  readonly until: number;
}

/** What one source spent on kids it did not know, over the last minute. */
interface Budget {
  /** When fetches of new kids found no key (or failed). */
  misses: number[];
  /** Fetches of new kids still running: counted as misses until they say otherwise. */
  running: number;
  /** When kids refused before were fetched at their retry. */
  retries: number[];
  /** Kids refused for the miss budget, oldest first (bounded). */
  readonly refused: Set<string>;
}

/** How many refused kids a source remembers; an older one named again counts as new. */
const MAX_REFUSED = 1000;
const MINUTE = 60_000;

export class HttpVerificationKeys implements VerificationKeysPort {
  private readonly fetchImpl: typeof fetch;
  private readonly clock: () => number;
  private readonly ttlMs: number;
  private readonly missTtlMs: number;
  private readonly maxMissesPerMinute: number;
  private readonly maxRetriesPerMinute: number;
  private readonly timeoutMs: number;
  private readonly cache = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<JsonWebKey | undefined>>();
  private readonly budgets = new Map<string, Budget>();
  private fetches: number[] = [];

  constructor(options: HttpVerificationKeysOptions = {}) {
    this.fetchImpl = options.fetch ?? fetch;
    this.clock = options.clock ?? Date.now;
    this.ttlMs = options.ttlMs ?? 86_400_000;
    this.missTtlMs = options.missTtlMs ?? 60_000;
    this.maxMissesPerMinute = options.maxMissesPerMinute ?? 10;
    this.maxRetriesPerMinute = options.maxRetriesPerMinute ?? 10;
    this.timeoutMs = options.timeoutMs ?? 2000;
  }

  async get(request: KeyRequest & { readonly sourceId: string; readonly credentials: string }): Promise<JsonWebKey | undefined> {
    const id = `${request.sourceId}\n${request.url}\n${request.kid}`;
    const cached = this.cache.get(id);
    if (cached && cached.until > this.clock()) return cached.key;
    const running = this.inflight.get(id);
    if (running) return running;
    const fetched = cached?.key ? this.refresh(id, request, cached.key) : this.discover(id, request);
    this.inflight.set(id, fetched);
    try {
      return await fetched;
    } finally {
      this.inflight.delete(id);
    }
  }

  /** Outbound calls made in the last minute (tests and diagnostics). */
  recentFetches(): number {
    this.fetches = this.fetches.filter((at) => at > this.clock() - MINUTE);
    return this.fetches.length;
  }

  /**
   * A known kid whose TTL ran out: asked again outside every budget. While the endpoint cannot be
   * reached the key keeps verifying (its own expired_at is checked by the verifier) and is asked for
   * again after missTtlMs, not on every request.
   */
  private async refresh(id: string, request: KeyRequest & { readonly credentials: string }, known: JsonWebKey) {
    try {
      const key = await this.fetchKey(request);
      this.cache.set(id, { key, until: this.clock() + (key ? this.ttlMs : this.missTtlMs) });
      return key;
    } catch {
      this.cache.set(id, { key: known, until: this.clock() + this.missTtlMs });
      return known;
    }
  }

  /** A kid not known here: fetched within the source's budgets, or refused (503, the provider retries). */
  private async discover(id: string, request: KeyRequest & { readonly sourceId: string; readonly credentials: string }) {
    const budget = this.budgetOf(request.sourceId);
    const now = this.clock();
    budget.misses = budget.misses.filter((at) => at > now - MINUTE);
    budget.retries = budget.retries.filter((at) => at > now - MINUTE);
    let retry = false;
    if (budget.misses.length + budget.running >= this.maxMissesPerMinute) {
      // Spent by kids that found no key. A kid refused before and named again (a retry) has its own budget.
      if (!budget.refused.has(request.kid) || budget.retries.length >= this.maxRetriesPerMinute) {
        this.remember(budget, request.kid);
        throw new KeyFetchError(
          `verification key fetches for source "${request.sourceId}" found no key ${this.maxMissesPerMinute} times in the last minute; retry later`,
        );
      }
      retry = true;
      budget.retries.push(now);
    }
    budget.refused.delete(request.kid);
    if (!retry) budget.running++;
    let key: JsonWebKey | undefined;
    try {
      key = await this.fetchKey(request);
    } catch (error) {
      if (!retry) budget.misses.push(this.clock());
      throw error;
    } finally {
      if (!retry) budget.running--;
    }
    if (!key && !retry) budget.misses.push(this.clock());
    this.cache.set(id, { key, until: this.clock() + (key ? this.ttlMs : this.missTtlMs) });
    if (!key) this.forgetExpiredMisses();
    return key;
  }

  private budgetOf(sourceId: string): Budget {
    let budget = this.budgets.get(sourceId);
    if (!budget) {
      budget = { misses: [], running: 0, retries: [], refused: new Set() };
      this.budgets.set(sourceId, budget);
    }
    return budget;
  }

  /** A refused kid, newest last; the oldest is forgotten beyond MAX_REFUSED. */
  private remember(budget: Budget, kid: string): void {
    budget.refused.delete(kid);
    budget.refused.add(kid);
    if (budget.refused.size > MAX_REFUSED) budget.refused.delete(budget.refused.values().next().value as string);
  }

  /** Remembered misses of invented kids are dropped once over, so a flood does not grow the cache for ever. */
  private forgetExpiredMisses(): void {
    if (this.cache.size < 2 * MAX_REFUSED) return;
    const now = this.clock();
    for (const [id, entry] of this.cache) if (!entry.key && entry.until <= now) this.cache.delete(id);
  }

  private async fetchKey(request: KeyRequest & { readonly credentials: string }): Promise<JsonWebKey | undefined> {
    this.fetches.push(this.clock());
    const colon = request.credentials.indexOf(':');
    const [clientId, secret] = colon > 0 ? [request.credentials.slice(0, colon), request.credentials.slice(colon + 1)] : ['', ''];
    let response: Response;
    try {
      response = await this.fetchImpl(request.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: clientId, secret, key_id: request.kid }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new KeyFetchError(`the verification key endpoint did not answer (${error instanceof Error ? error.name : 'error'})`);
    }
    // 4xx: the endpoint does not know this kid (or these credentials): a miss, remembered briefly.
    if (response.status >= 400 && response.status < 500) return undefined;
    if (!response.ok) throw new KeyFetchError(`the verification key endpoint answered ${response.status}`);
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      throw new KeyFetchError('the verification key endpoint answered something other than JSON');
    }
    const key = body && typeof body === 'object' ? (body as { key?: unknown }).key : undefined;
    if (!key || typeof key !== 'object' || Array.isArray(key)) throw new KeyFetchError('the verification key endpoint answered no key');
    const jwk = key as JsonWebKey;
    // A key served under another id is not the key asked for.
    return jwk.kid === undefined || jwk.kid === request.kid ? jwk : undefined;
  }
}
