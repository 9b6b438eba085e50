/**
 * The key port's adapter (VerificationKeysPort, core/schemes/types.ts): public keys of key-fetching
 * schemes (jwks: Plaid) fetched from the scheme's configured endpoint and cached by key id.
 *
 * Plaid's endpoint: POST `{ client_id, secret, key_id }` (the source's secret is
 * `<client_id>:<secret>`) answers `{ key: <JWK> }`, or 400 for a key id it does not know.
 *
 * - A known key is served from memory for `ttlMs` (one fetch per kid per TTL, whatever the traffic).
 * - An unknown kid is fetched once; a miss is remembered for `missTtlMs`, so a stream of requests
 *   naming invented kids costs one outbound call per kid per interval, and at most
 *   `maxFetchesPerMinute` calls overall: beyond that the port throws and intake answers 503.
 * - Concurrent requests for one kid share one fetch. A key whose TTL ran out keeps serving while the
 *   endpoint cannot be reached. Credentials never appear in errors or logs.
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
  /** How long an unknown kid is remembered as unknown. @default 60 s */
  readonly missTtlMs?: number;
  /** Outbound calls allowed per rolling minute, all sources together. @default 10 */
  readonly maxFetchesPerMinute?: number;
  /** Per call; providers stop waiting for the webhook answer after a few seconds. @default 2000 */
  readonly timeoutMs?: number;
}

interface Entry {
  readonly key: JsonWebKey | undefined;
  readonly until: number;
}

export class HttpVerificationKeys implements VerificationKeysPort {
  private readonly fetchImpl: typeof fetch;
  private readonly clock: () => number;
  private readonly ttlMs: number;
  private readonly missTtlMs: number;
  private readonly maxFetchesPerMinute: number;
  private readonly timeoutMs: number;
  private readonly cache = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<JsonWebKey | undefined>>();
  private fetches: number[] = [];

  constructor(options: HttpVerificationKeysOptions = {}) {
    this.fetchImpl = options.fetch ?? fetch;
    this.clock = options.clock ?? Date.now;
    this.ttlMs = options.ttlMs ?? 86_400_000;
    this.missTtlMs = options.missTtlMs ?? 60_000;
    this.maxFetchesPerMinute = options.maxFetchesPerMinute ?? 10;
    this.timeoutMs = options.timeoutMs ?? 2000;
  }

  async get(request: KeyRequest & { readonly sourceId: string; readonly credentials: string }): Promise<JsonWebKey | undefined> {
    const id = `${request.sourceId}\n${request.url}\n${request.kid}`;
    const cached = this.cache.get(id);
    if (cached && cached.until > this.clock()) return cached.key;
    const running = this.inflight.get(id);
    if (running) return running;
    const fetched = this.fetchKey(request).then(
      (key) => {
        this.cache.set(id, { key, until: this.clock() + (key ? this.ttlMs : this.missTtlMs) });
        return key;
      },
      (error: unknown) => {
        // The endpoint is down or the budget spent: a key fetched before still verifies (its own
        // expired_at is checked by the verifier); an unknown kid waits for the endpoint (503).
        if (cached?.key) return cached.key;
        throw error;
      },
    );
    this.inflight.set(id, fetched);
    try {
      return await fetched;
    } finally {
      this.inflight.delete(id);
    }
  }

  /** Outbound calls made in the last minute (tests and diagnostics). */
  recentFetches(): number {
    return this.prune();
  }

  private prune(): number {
    const since = this.clock() - 60_000;
    this.fetches = this.fetches.filter((at) => at > since);
    return this.fetches.length;
  }

  private async fetchKey(request: KeyRequest & { readonly credentials: string }): Promise<JsonWebKey | undefined> {
    if (this.prune() >= this.maxFetchesPerMinute) {
      throw new KeyFetchError(`more than ${this.maxFetchesPerMinute} verification key fetches in a minute; retry later`);
    }
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
