/**
 * The built-in `handle` of HTTP destination consumers (`kind: 'http'`): POSTs the narrowed payload
 * to the consumer's `url`, signed with Standard Webhooks under the consumer's own secret, with the
 * idempotency key as `webhook-id`. Everything else (claim with fencing, ledger row, retries with
 * backoff, quarantine, its own queue and DLQ) is the consumer runtime's, exactly as for a Lambda
 * consumer.
 *
 *   2xx                          done; units from the units header, else the configured units
 *   410 or `permanentStatuses`   PermanentError: quarantined at once
 *   anything else, timeouts,     RetryableError (Retry-After honoured); counts toward the circuit
 *   network errors               breaker, which pauses the consumer after `breakAfterFailures`
 *                                consecutive failures
 *   a request that cannot be     PermanentError (`transform_invalid`: the transform's result fails
 *   built                        its check; `request_invalid`: fetch refused it before sending):
 *                                quarantined, never counted toward the breaker. The same request
 *                                fails on every attempt, and it says nothing about the destination:
 *                                one event must not pause a destination every tenant shares.
 */

import type { Breakers } from '../../adapters/ledger-controls';
import { activeSecrets } from '../../adapters/secrets';
import type { ConsumerConfig, HttpDeliveryConfig } from '../../core/config/schema';
import { ConfigurationError } from '../../core/errors';
import { standardWebhooks } from '../../core/schemes/standard-webhooks';
import type { SigningSecrets } from '../../core/schemes/types';
import { checkTransformRequest, type Transform, type TransformRequest } from '../../core/transform';
import type { Logger } from '../shared/logger';
import { PermanentError, RetryableError } from './errors';
import type { ConsumerHandle, DeliveryResult } from './runtime';

/** Where an HTTP consumer's signing secrets come from (Secrets Manager, or the local secrets file). */
export interface ConsumerSecretsPort {
  get(consumerId: string): Promise<SigningSecrets>;
}

export interface HttpHandleDeps {
  readonly consumer: ConsumerConfig;
  readonly secrets: ConsumerSecretsPort;
  /** The breaker's consecutive-failure count, kept among the consumer's own ledger rows. */
  readonly breaker: Pick<Breakers, 'recordBreakerFailure' | 'resetBreaker'>;
  /**
   * Opens the breaker: pauses the consumer as `hookledger pause` does (its event source mapping on
   * AWS, its poller locally). Not awaited by the delivery that trips it.
   */
  readonly pause: (consumerId: string) => Promise<void>;
  /** Told when the breaker opens (publish the alarm metric). */
  readonly onBreakerOpen?: (consumerId: string, failures: number) => void;
  readonly logger: Logger;
  /** The consumer's `transform` (its module's export), run before signing; a throw quarantines. */
  readonly transform?: Transform;
  readonly fetch?: typeof fetch;
  readonly clock?: () => number;
  /** Sleeps for the rate limiter; tests may replace it. */
  readonly sleep?: (ms: number) => Promise<void>;
}

const USER_AGENT = 'hookledger/1';
/**
 * undici's codes for a request it refuses to write (a header or body it cannot send). It reports them
 * as `TypeError('fetch failed')` with the error as `cause`, as it does a refused connection.
 */
const REQUEST_REFUSED_CODES = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED', 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH']);
/** How often a worker that saw no failure still resets the breaker's shared count on success. */
const RESET_CHECK_MS = 5000;

export function createHttpHandle(deps: HttpHandleDeps): ConsumerHandle {
  const { consumer } = deps;
  if (consumer.kind !== 'http' || !consumer.url) {
    throw new ConfigurationError(
      `consumer ${consumer.id} is not an http consumer with a url; give it kind: 'http' and url in hookledger.config.ts`,
    );
  }
  const destination = new HttpDestination(deps, consumer.url);
  return (delivery) => destination.deliver(delivery);
}

/**
 * One HTTP consumer's destination, as this worker sees it: deliver is shape (the transform) → sign →
 * post → answer; the rate limiter and the circuit breaker's count are shared by its deliveries.
 */
class HttpDestination {
  private readonly http: HttpDeliveryConfig;
  private readonly clock: () => number;
  private readonly doFetch: typeof fetch;
  private readonly limiter: () => Promise<void>;
  /** Answers that quarantine at once: 410 and the configured `permanentStatuses`. */
  private readonly permanent: ReadonlySet<number>;
  private readonly breaker: BreakerCount;

  constructor(
    private readonly deps: HttpHandleDeps,
    private readonly url: string,
  ) {
    this.http = deps.consumer.http as HttpDeliveryConfig;
    this.clock = deps.clock ?? Date.now;
    this.doFetch = deps.fetch ?? fetch;
    this.limiter = rateLimiter(this.http.ratePerSecond, this.clock, deps.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))));
    this.permanent = new Set([410, ...this.http.permanentStatuses]);
    this.breaker = new BreakerCount(deps, this.http.breakAfterFailures, this.clock);
  }

  async deliver(delivery: Parameters<ConsumerHandle>[0]): Promise<DeliveryResult> {
    const shaped: Pick<TransformRequest, 'json' | 'headers'> = this.deps.transform
      ? await transformed(this.deps.transform, delivery)
      : { json: JSON.stringify(delivery.payload), headers: {} };
    await this.limiter();
    const body = Buffer.from(shaped.json, 'utf8');
    const now = this.clock();
    const secrets = activeSecrets(await this.deps.secrets.get(this.deps.consumer.id), now);
    const headers = {
      ...shaped.headers,
      ...signedHeaders(body, delivery.idempotencyKey, now, secrets),
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'hookledger-event-type': delivery.attribution.eventType,
      'hookledger-attempt': String(delivery.attempt),
    };
    let response: Response;
    try {
      // Called as a plain function: fetch is not a method of this class.
      const { doFetch } = this;
      response = await doFetch(this.url, {
        method: 'POST',
        body,
        headers,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.http.timeoutMs),
      });
    } catch (error) {
      const failure = fetchFailure(error, this.http.timeoutMs);
      if (failure instanceof PermanentError) throw failure;
      return this.breaker.failed(failure);
    }
    return this.answer(response, now);
  }

  /** What the destination's answer means: done with its units, quarantined, or retried (a breaker failure). */
  private async answer(response: Response, now: number): Promise<DeliveryResult> {
    // The answer's body is not kept: it could hold anything the destination chose to echo.
    await response.body?.cancel().catch(() => undefined);
    const status = response.status;
    if (status >= 200 && status < 300) {
      await this.breaker.succeeded();
      const fromHeader = unitsOf(response.headers.get(this.http.unitsHeader));
      if (fromHeader === 'invalid') return { units: this.http.units, outcome: 'units_header_invalid' };
      return { units: fromHeader ?? this.http.units, outcome: `http_${status}` };
    }
    if (this.permanent.has(status)) {
      // A definite answer from a live destination: not a breaker failure.
      throw new PermanentError(`destination answered ${status}`, `http_${status}`);
    }
    return this.breaker.failed(
      new RetryableError(`destination answered ${status}`, `http_${status}`, retryAfterMs(response.headers.get('retry-after'), now)),
    );
  }
}

/**
 * The circuit breaker's consecutive-failure count, shared by the consumer's workers on its ledger
 * rows. A success resets it, but without a write per delivery: only after this worker saw a failure,
 * or at most every RESET_CHECK_MS (another worker's failures are then forgiven within that time of
 * successes here).
 */
class BreakerCount {
  private resetDue = true;
  private lastReset = 0;

  constructor(
    private readonly deps: HttpHandleDeps,
    private readonly breakAfterFailures: number,
    private readonly clock: () => number,
  ) {}

  async succeeded(): Promise<void> {
    const now = this.clock();
    if (!this.resetDue && now - this.lastReset < RESET_CHECK_MS) return;
    await this.deps.breaker.resetBreaker(this.deps.consumer.id, now);
    this.resetDue = false;
    this.lastReset = now;
  }

  /** Counts the failure (opening the breaker at `breakAfterFailures`), then throws it. */
  async failed(error: RetryableError): Promise<never> {
    const { consumer, logger } = this.deps;
    this.resetDue = true;
    const failures = await this.deps.breaker.recordBreakerFailure(consumer.id, this.clock());
    if (failures >= this.breakAfterFailures) {
      logger.warn('circuit breaker open: pausing the consumer', { consumer_id: consumer.id, failures });
      this.deps.onBreakerOpen?.(consumer.id, failures);
      // Not awaited: pausing waits for the batches in flight, this one included.
      void this.deps.pause(consumer.id).catch((e: unknown) =>
        logger.error('could not pause the consumer for its circuit breaker', {
          consumer_id: consumer.id,
          error: (e as Error)?.name ?? 'error',
        }),
      );
    }
    throw error;
  }
}

/**
 * The consumer's transform on one delivery: what it returns, checked as the request fetch will send
 * and copied (core/transform.ts). A throw or a result that cannot be sent is the transform's bug, the
 * same on every attempt: quarantined at once, never sent, never counted toward the breaker.
 */
export async function transformed(transform: Transform, delivery: Parameters<ConsumerHandle>[0]): Promise<TransformRequest> {
  const { attribution } = delivery;
  let out: unknown;
  try {
    const result = transform({
      eventId: attribution.eventId,
      eventType: attribution.eventType,
      tenantId: attribution.tenantId,
      keyId: attribution.keyId,
      payload: delivery.payload,
    });
    // Only a promise is awaited: awaiting a plain result would read its `then`, a getter the check must see.
    out = result instanceof Promise ? await result : result;
  } catch (error) {
    throw new PermanentError(`transform threw: ${error instanceof Error ? error.message : String(error)}`, 'transform_failed', {
      cause: error,
    });
  }
  const checked = checkTransformRequest(out);
  if (!checked.ok) throw new PermanentError(checked.problem, 'transform_invalid');
  return checked.request;
}

/**
 * What a fetch that threw means. A request fetch refused to build reached nothing: not the
 * destination's failure, and refused again on every attempt, so quarantined (`request_invalid`)
 * and kept off the breaker. A timeout or anything on the wire is the destination's: retried.
 */
function fetchFailure(error: unknown, timeoutMs: number): PermanentError | RetryableError {
  const refused = refusedBeforeSending(error);
  if (refused) {
    return new PermanentError(
      `fetch refused the request before sending it (${refused}); quarantined, not counted toward the circuit breaker`,
      'request_invalid',
      { cause: error },
    );
  }
  const timedOut = (error as Error)?.name === 'TimeoutError' || (error as Error)?.name === 'AbortError';
  return new RetryableError(
    timedOut ? `no answer within ${timeoutMs} ms` : 'request failed before an answer',
    timedOut ? 'timeout' : 'network',
    undefined,
    { cause: error },
  );
}

/**
 * Whether fetch refused the request itself, before any connection: its argument checks (URL, header
 * names and values, body) throw a TypeError of their own, without a cause; what it refuses to write
 * comes as `fetch failed` with one of undici's request codes. What happened on the wire (refused,
 * reset, DNS, TLS) always carries its cause and stays a network failure. Returns what to record: the
 * error's class and code, never its message.
 */
function refusedBeforeSending(error: unknown): string | undefined {
  if (!(error instanceof TypeError)) return undefined;
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && REQUEST_REFUSED_CODES.has(code)) return `TypeError ${code}`;
  return error.cause === undefined && error.message !== 'fetch failed' ? 'TypeError' : undefined;
}

/** Standard Webhooks headers; during a rotation overlap signed with both secrets (receivers may hold either). */
export function signedHeaders(body: Buffer, messageId: string, now: number, secrets: SigningSecrets): Record<string, string> {
  const sign = (secret: string) =>
    standardWebhooks.sign({ headerPrefix: 'webhook', secretFormat: 'whsec-base64' }, { body, secret, now, messageId });
  const headers = sign(secrets.current);
  if (secrets.previous === undefined) return headers;
  const previous = sign(secrets.previous);
  return { ...headers, 'webhook-signature': `${headers['webhook-signature']} ${previous['webhook-signature']}` };
}

/** A units header: a finite number >= 0, absent (undefined), or anything else ('invalid'). */
function unitsOf(value: string | null): number | undefined | 'invalid' {
  if (value === null || value.trim() === '') return undefined;
  const units = Number(value);
  return Number.isFinite(units) && units >= 0 ? units : 'invalid';
}

/** Retry-After as seconds or an HTTP date, in ms from now; capped at 12 h (SQS's longest visibility). */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * 1000 : Date.parse(trimmed) - now;
  if (!Number.isFinite(ms) || ms <= 0) return undefined;
  return Math.min(ms, 43_200_000);
}

/** Spaces deliveries at least 1/rate seconds apart within one worker (each call reserves the next slot). */
function rateLimiter(perSecond: number, clock: () => number, sleep: (ms: number) => Promise<void>): () => Promise<void> {
  const gapMs = 1000 / perSecond;
  let next = 0;
  return async () => {
    const now = clock();
    const slot = Math.max(now, next);
    next = slot + gapMs;
    if (slot > now) await sleep(slot - now);
  };
}
