/**
 * How `npm start`'s process ends, whatever asks it to: SIGINT (Ctrl-C to the terminal's whole job,
 * or npm relaying it to this process alone), SIGTERM (`kill PID`, a process manager or an IDE's stop
 * button, which npm relays too), SIGHUP (the terminal closed), or the parent gone (npm SIGKILLed:
 * nothing relays anything then, so a watchdog notices this process was re-parented). Each runs the
 * same stop, once: a second signal while it runs neither aborts it half-way nor starts it again.
 *
 * A clean stop exits 0: the user asked for it, and any other code makes npm print its "Lifecycle
 * script `start` failed" block under the quiet "stopping..." that Ctrl-C ends with.
 */

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** How often the watchdog checks that the process that started this one is still its parent. */
export const PARENT_POLL_MS = 500;

/**
 * A stop that has not finished by then is abandoned: the process exits and its exit hook SIGKILLs
 * what is left (local/emulators.ts), still inside the 10 s a process manager waits before SIGKILL.
 */
export const STOP_DEADLINE_MS = 8_000;

export const EXIT_STOPPED = 0;
/** The stop did not finish within STOP_DEADLINE_MS or failed. */
export const EXIT_STOP_FAILED = 1;

export type StopReason = NodeJS.Signals | 'parent-gone';

export interface StopOnSignalsOptions {
  /** Default STOP_DEADLINE_MS. */
  readonly deadlineMs?: number;
  /** Default PARENT_POLL_MS. */
  readonly parentPollMs?: number;
}

interface Lifecycle {
  readonly stop: (reason: StopReason) => Promise<unknown>;
  readonly deadlineMs: number;
  stopping: boolean;
  watchdog: NodeJS.Timeout | undefined;
}

/**
 * Runs `stop` once on the first of SIGINT, SIGTERM, SIGHUP or the parent's death, then exits 0
 * (1 when it failed or outlived the deadline). Signals that come while it runs are absorbed.
 */
export function stopOnSignals(stop: (reason: StopReason) => Promise<unknown>, options: StopOnSignalsOptions = {}): void {
  const lifecycle: Lifecycle = { stop, deadlineMs: options.deadlineMs ?? STOP_DEADLINE_MS, stopping: false, watchdog: undefined };
  // After a SIGHUP the terminal is gone: a write to it fails (EIO, EPIPE), which must not end the stop.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  for (const signal of STOP_SIGNALS) process.on(signal, () => void beginStop(lifecycle, signal));
  const parent = process.ppid;
  lifecycle.watchdog = setInterval(() => {
    if (process.ppid !== parent) void beginStop(lifecycle, 'parent-gone');
  }, options.parentPollMs ?? PARENT_POLL_MS);
  lifecycle.watchdog.unref();
}

async function beginStop(lifecycle: Lifecycle, reason: StopReason): Promise<void> {
  if (lifecycle.stopping) return;
  lifecycle.stopping = true;
  clearInterval(lifecycle.watchdog);
  const deadline = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), lifecycle.deadlineMs).unref());
  const outcome = await Promise.race([lifecycle.stop(reason).then(() => 'stopped' as const), deadline]).catch((error: unknown) => {
    console.error(`hookledger: the stop failed: ${error instanceof Error ? error.message : String(error)}`);
    return 'failed' as const;
  });
  if (outcome === 'late') console.error(`hookledger: the stop took over ${lifecycle.deadlineMs / 1000} s; ending what is left.`);
  process.exit(outcome === 'stopped' ? EXIT_STOPPED : EXIT_STOP_FAILED);
}
