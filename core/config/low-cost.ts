/**
 * The documented lower-cost configuration (docs/cost-and-scale.md, "Lower-cost configuration"): what
 * trades a feature or some latency for a smaller bill, every delivery guarantee kept. `lowCost(config)`
 * sets, where the configuration leaves them at their defaults:
 *  - `intake.endpoint: 'function-url'`: no API Gateway request price or access log; gives up stage
 *    throttling, WAF and a custom domain (docs/configuration.md, "Intake endpoint");
 *  - batching windows of LOW_COST.batchingWindowSeconds on the fan-out's stream and on each unordered
 *    consumer's queue: fuller batches, so fewer invocations and SQS requests, for up to that much
 *    more latency per hop; a consumer's visibility timeout is raised to what the window needs;
 *  - provisioned tables at LOW_COST.targetUtilization: capacity-hours instead of per-request units,
 *    with less headroom than the default 70% before auto scaling catches up with a rise (a throttled
 *    intake write answers 503 and the provider sends again; nothing accepted is lost).
 * The bench prices this configuration at 50 webhooks/s (bench/low-cost.ts) and the guarantee tests
 * run on it (test/e2e/low-cost.test.ts).
 */
import { minimumVisibilitySeconds } from './consumer-rules';
import { defineConfig, type HookledgerConfig } from './schema';

export const LOW_COST = {
  /** Seconds each batch may gather for, on the fan-out's stream and on each consumer's queue. */
  batchingWindowSeconds: 1,
  /** Percent of the provisioned capacity auto scaling keeps in use. */
  targetUtilization: 80,
} as const;

/** `config` with the lower-cost settings wherever it keeps the defaults; validated again. */
export function lowCost(config: HookledgerConfig): HookledgerConfig {
  const window = LOW_COST.batchingWindowSeconds;
  return defineConfig({
    ...config,
    intake: { ...config.intake, endpoint: 'function-url' },
    fanout: { ...config.fanout, batchingWindowSeconds: config.fanout.batchingWindowSeconds || window },
    consumers: config.consumers.map((c) => {
      // A FIFO queue's event source takes no batching window: ordered consumers keep theirs unset.
      if (c.ordering !== undefined || c.batchingWindowSeconds > 0) return c;
      const visibility = Math.max(c.visibilityTimeoutSeconds, minimumVisibilitySeconds({ ...c, batchingWindowSeconds: window }));
      return { ...c, batchingWindowSeconds: window, visibilityTimeoutSeconds: visibility };
    }),
    capacity:
      config.capacity.eventStore.mode === 'on-demand' && config.capacity.ledger.mode === 'on-demand'
        ? { mode: 'provisioned', targetUtilization: LOW_COST.targetUtilization }
        : config.capacity,
  } as Parameters<typeof defineConfig>[0]);
}
