/**
 * The stream poller's timers and background work, behind a port so a test can see when nothing of the
 * poller's is left to run (every loop ended, no timer pending) and wait on that, instead of sleeping
 * a fixed time and looking whether anything more happened.
 */
import { sleep } from '../support';

export interface PollerScheduler {
  /** Resolves after `ms`, or as soon as `signal` aborts; never rejects. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /**
   * Told of each piece of work the poller runs in the background (a shard's read loop, the discovery
   * loop, a shard discovery started by a shard read to its end); returns a promise that settles as
   * `task` does, which the poller keeps and stop() waits for.
   */
  track(task: Promise<void>): Promise<void>;
}

/** Plain timers; background work as it is. */
export const realScheduler: PollerScheduler = {
  sleep: (ms, signal) => sleep(ms, signal),
  track: (task) => task,
};
