/**
 * The bench's errors. A bench that cannot measure what it says it measures stops, naming what went
 * wrong, rather than print figures for something else.
 */
import { HookledgerError } from '../core/errors';

/**
 * The bench cannot run as it was set up: an option, an environment variable or one of its own
 * constants it cannot use. The message names the value and what to change; nothing was measured.
 */
export class BenchSetupError extends HookledgerError {
  override readonly name: string = 'BenchSetupError';
}

/**
 * A run was not clean: a request not answered 202, a delivery failed or not acknowledged in time, a
 * row it wrote not found, a child process that failed. Its figures would measure something else, so
 * none are reported; the message names the request, event or process.
 */
export class BenchRunError extends HookledgerError {
  override readonly name: string = 'BenchRunError';
}

/** What a bench error prints: our own errors say what to do; anything else is a bug, so its stack. */
export function benchErrorText(error: unknown): string {
  if (error instanceof HookledgerError) return `bench: ${error.message}`;
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** Runs a bench entry point to its end: exit 0, or the error's text on stderr and exit 1. */
export function runToExit(work: () => Promise<unknown>): void {
  work().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(benchErrorText(error));
      process.exit(1);
    },
  );
}
