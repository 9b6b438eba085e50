/**
 * What every registrar shares: the 429 loop (Retry-After honoured, seconds or an HTTP date), the
 * translation of a provider's error status into a typed error naming the credential by where it lives
 * (never its value), and `requestJson`, one JSON request with the bearer key for the providers
 * registered over plain fetch (no SDK in the main package).
 */
import { ProviderApiError, ProviderAuthError, retryAfterMs } from '../../adapters/provider-events';
import { HookledgerError } from '../../core/errors';
import type { GapApi } from '../../core/gaps';
import type { RegistrarOptions } from './types';

/** 429s retried per call before giving up. */
export const CONNECT_MAX_RATE_LIMIT_RETRIES = 5;
/** The longest Retry-After waited out; a longer one fails the command (run it again after). */
export const CONNECT_MAX_RETRY_AFTER_MS = 120_000;
/** One request's time limit. */
export const CONNECT_REQUEST_TIMEOUT_MS = 30_000;
/** The longest provider reason quoted in a message. */
const QUOTED_REASON_CHARS = 300;

/** A 429 seen by a call: `withRateLimitRetries` waits `retryAfterMs` (or backs off) and calls again. */
export class RateLimitedError extends HookledgerError {
  override readonly name = 'RateLimitedError';
  constructor(readonly retryAfterMs: number | undefined) {
    super('rate limited (429)');
  }
}

/** The credential is valid but may not manage webhook endpoints (403). */
export class ProviderPermissionError extends ProviderApiError {
  override readonly name = 'ProviderPermissionError';
  constructor(api: GapApi, credential: string) {
    super(
      api,
      `refused the request (403): the credential ${credential} lacks the permission to manage webhook endpoints (see docs/providers/${api}.md)`,
      403,
    );
  }
}

/** The provider refused what was asked (400, 422: a URL it will not call, an unknown event type), its reason quoted. */
export class ProviderRefusedError extends ProviderApiError {
  override readonly name = 'ProviderRefusedError';
  constructor(
    api: GapApi,
    status: number,
    /** The provider's own words, as its error body gives them. */
    readonly reason: string,
  ) {
    super(api, `refused the request (${status}): "${reason}"`, status);
  }
}

/** Calls `call` until it does not throw a `RateLimitedError`, waiting each one's Retry-After. */
export async function withRateLimitRetries<T>(api: GapApi, options: RegistrarOptions, call: () => Promise<T>): Promise<T> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const max = options.maxRateLimitRetries ?? CONNECT_MAX_RATE_LIMIT_RETRIES;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof RateLimitedError)) throw error;
      // Without a Retry-After: 1 s, 2 s, 4 s...
      const wait = error.retryAfterMs ?? 1000 * 2 ** attempt;
      if (attempt >= max) throw new ProviderApiError(api, `still rate limited (429) after ${max} retries; run again later`, 429);
      if (wait > CONNECT_MAX_RETRY_AFTER_MS) {
        throw new ProviderApiError(api, `rate limited (429) with Retry-After ${Math.ceil(wait / 1000)} s; run again after that`, 429);
      }
      options.onRateLimited?.(wait);
      await sleep(wait);
    }
  }
}

/**
 * A provider's error status as the error to throw: 429 a `RateLimitedError` (retried), 401 a
 * `ProviderAuthError`, 403 a `ProviderPermissionError`, 400/409/422 a `ProviderRefusedError` quoting
 * its reason, anything else a `ProviderApiError` with the status.
 */
export function providerFailure(
  api: GapApi,
  credential: string,
  answer: { readonly status: number; readonly retryAfter?: string | null | undefined; readonly reason: string },
): HookledgerError {
  const { status } = answer;
  if (status === 429) return new RateLimitedError(retryAfterMs(answer.retryAfter));
  if (status === 401) return new ProviderAuthError(api, status, credential);
  if (status === 403) return new ProviderPermissionError(api, credential);
  const reason = answer.reason.slice(0, QUOTED_REASON_CHARS);
  if (status === 400 || status === 409 || status === 422) return new ProviderRefusedError(api, status, reason);
  return new ProviderApiError(api, `${status}: ${reason}`, status);
}

/**
 * The provider's reason from its error body, in the shapes the registering APIs use: Stripe
 * `error.message`, GitHub `message` + `errors[].message`, Square `errors[].detail`, Paddle `error.detail`.
 */
export function providerReason(body: unknown, fallback: string): string {
  if (typeof body !== 'object' || body === null) return fallback;
  const b = body as {
    message?: unknown;
    error?: { message?: unknown; detail?: unknown };
    errors?: readonly { message?: unknown; detail?: unknown; code?: unknown }[];
  };
  const parts: string[] = [];
  for (const text of [b.error?.message, b.error?.detail, b.message]) if (typeof text === 'string') parts.push(text);
  for (const e of Array.isArray(b.errors) ? b.errors : []) {
    const text = e?.detail ?? e?.message ?? e?.code;
    if (typeof text === 'string') parts.push(text);
  }
  return parts.length > 0 ? parts.join(': ') : fallback;
}

export interface JsonRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** From the base URL on: `/v2/webhooks/subscriptions`. */
  readonly path: string;
  readonly body?: unknown;
  /** Beside the bearer key and JSON's (Square's `Square-Version`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** One JSON request with `Authorization: Bearer <apiKey>`, 429s waited out; the parsed body (undefined when empty). */
export async function requestJson(
  api: GapApi,
  options: RegistrarOptions & { readonly baseUrl: string },
  request: JsonRequest,
): Promise<unknown> {
  const url = `${options.baseUrl.replace(/\/+$/, '')}${request.path}`;
  return withRateLimitRetries(api, options, async () => {
    let response: Response;
    try {
      response = await fetch(url, {
        method: request.method,
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          accept: 'application/json',
          ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...request.headers,
        },
        ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
        signal: AbortSignal.timeout(CONNECT_REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new ProviderApiError(api, `unreachable (${error instanceof Error ? error.message : String(error)})`);
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : (JSON.parse(text) as unknown);
    } catch {
      if (response.ok) throw new ProviderApiError(api, `answered ${response.status} with a body that is not JSON`, response.status);
    }
    if (!response.ok) {
      throw providerFailure(api, options.credential, {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        reason: providerReason(body, text || response.statusText),
      });
    }
    return body;
  });
}
