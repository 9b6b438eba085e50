/** The consumer runtime's typed errors: what a team's `handle` throws to quarantine or retry a delivery. */
import { HookledgerError } from '../../core/errors';

/** Thrown by a consumer handler to quarantine the delivery at once (no further retries). */
export class PermanentError extends HookledgerError {
  override readonly name: string = 'PermanentError';
  constructor(
    message: string,
    /** A short, low-cardinality category recorded on the delivery (`invalid_payload`, ...). */
    readonly category = 'permanent',
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * Thrown by a consumer handler for a failure worth retrying (an HTTP destination's 429, 5xx or
 * timeout). `retryAfterMs` (a Retry-After header) lengthens the backoff, never shortens it.
 */
export class RetryableError extends HookledgerError {
  override readonly name: string = 'RetryableError';
  constructor(
    message: string,
    /** A short, low-cardinality category recorded on the delivery (`http_503`, `timeout`, ...). */
    readonly category: string,
    readonly retryAfterMs?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A short category for an error, safe to store and to use as a metric dimension. */
export function errorCategory(error: unknown): string {
  if (error instanceof PermanentError || error instanceof RetryableError) return error.category;
  if (error instanceof Error) {
    const name = error.name && error.name !== 'Error' ? error.name : 'error';
    return name.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64) || 'error';
  }
  return 'non_error_thrown';
}

/** An error message trimmed for storage: never more than 300 characters. */
export function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 300 ? `${message.slice(0, 297)}...` : message;
}
