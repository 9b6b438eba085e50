/**
 * The few helpers every part of the local stack shares: one waiting function, one way to put an
 * error in a log line, and the logger port the pollers report through.
 */

/** Where the pollers report retries and skipped records (the console by default, a recorder in tests). */
export interface PollerLogger {
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}

/** A PollerLogger writing to the console, each line tagged with the poller's name. */
export function consoleLogger(tag: string): PollerLogger {
  return {
    warn: (message, extra) => console.warn(`[${tag}] ${message}`, extra ?? ''),
    error: (message, extra) => console.error(`[${tag}] ${message}`, extra ?? ''),
  };
}

/**
 * Resolves after `ms`, or as soon as `signal` aborts (never rejects), so a stopping poller does not
 * sit out its poll interval or retry delay.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!signal) {
      setTimeout(resolve, ms);
      return;
    }
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

/** `Name: message` for errors, the string form of anything else thrown. */
export function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
