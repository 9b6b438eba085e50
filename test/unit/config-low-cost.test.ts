/**
 * The documented lower-cost configuration (core/config/low-cost.ts): what `lowCost` sets on the
 * shipped configuration, what it leaves as written, and what `hookledger cost` makes of it.
 */
import { describe, expect, it } from 'vitest';
import { LOW_COST, lowCost } from '../../core/config/low-cost';
import { defineConfig } from '../../core/config/schema';
import shipped from '../../hookledger.config';
import { runCli } from '../support/cli';

const env = { USER: 'cost-test', HOOKLEDGER_STATE: '/nonexistent/state.json' };

describe('lowCost on the shipped configuration', () => {
  const config = lowCost(shipped);

  it('serves intake from its function URL, gathers 1 s batches on the fan-out and every consumer, and provisions both tables at 80%', () => {
    expect(config.intake.endpoint).toBe('function-url');
    expect(config.fanout.batchingWindowSeconds).toBe(1);
    expect(config.consumers.map((c) => [c.id, c.batchingWindowSeconds])).toEqual([
      ['billing-meter', 1],
      ['audit-writer', 1],
      ['risk-evaluator', 1],
    ]);
    for (const table of [config.capacity.eventStore, config.capacity.ledger]) {
      expect(table).toMatchObject({ mode: 'provisioned', targetUtilization: LOW_COST.targetUtilization, minWrite: 5, maxWrite: 1000 });
    }
  });

  it('raises a visibility timeout to 6x the function timeout plus the window where the window needs it, and only there', () => {
    const visibility = Object.fromEntries(config.consumers.map((c) => [c.id, c.visibilityTimeoutSeconds]));
    // billing-meter and audit-writer: 60 s for a 10 s timeout, 61 needed; risk-evaluator: 90 s for 15 s, 91 needed.
    expect(visibility).toEqual({ 'billing-meter': 61, 'audit-writer': 61, 'risk-evaluator': 91 });
    expect(
      lowCost(defineConfig({ ...shipped, consumers: [{ ...shipped.consumers[0]!, visibilityTimeoutSeconds: 120 }] })).consumers[0],
    ).toMatchObject({ visibilityTimeoutSeconds: 120, batchingWindowSeconds: 1 });
  });

  it('keeps what the configuration sets itself: its own windows, its provisioned bounds, an ordered consumer without a window', () => {
    const own = defineConfig({
      ...shipped,
      fanout: { batchingWindowSeconds: 3 },
      consumers: [
        { ...shipped.consumers[0]!, batchingWindowSeconds: 2, visibilityTimeoutSeconds: 62 },
        { ...shipped.consumers[1]!, id: 'ledger-sync', ordering: { key: 'tenant' } },
      ],
      capacity: { mode: 'provisioned', minWrite: 50, targetUtilization: 60 },
    });
    const c = lowCost(own);
    expect(c.fanout.batchingWindowSeconds).toBe(3);
    expect(c.consumers.map((x) => [x.id, x.batchingWindowSeconds, x.visibilityTimeoutSeconds])).toEqual([
      ['billing-meter', 2, 62],
      ['ledger-sync', 0, 60],
    ]);
    expect(c.capacity.ledger).toMatchObject({ mode: 'provisioned', minWrite: 50, targetUtilization: 60 });
  });
});

describe('hookledger cost --rate 50/s on the lower-cost configuration', () => {
  interface Report {
    provisioned: { perMillionUsd: number; services: Record<string, { perMillionUsd: number }> };
    perWebhook: { sqsRequests: number; lambdaInvocations: number };
    assumptions: { batching: { stream: { windowSeconds: number } }; notes: string[] };
  }
  const cost = async (config: typeof shipped) =>
    JSON.parse((await runCli(['cost', '--rate', '50/s', '--json'], config, env)).stdout) as Report;

  it('prices no API Gateway request, models the windows, and asks fewer SQS requests and invocations than the shipped stack', async () => {
    const [low, base] = await Promise.all([cost(lowCost(shipped)), cost(shipped)]);
    expect(low.provisioned.services.apiGateway!.perMillionUsd).toBe(0);
    expect(base.provisioned.services.apiGateway!.perMillionUsd).toBeCloseTo(1, 6);
    expect(low.assumptions.batching.stream.windowSeconds).toBe(1);
    expect(low.perWebhook.sqsRequests).toBeLessThan(base.perWebhook.sqsRequests / 2);
    expect(low.perWebhook.lambdaInvocations).toBeLessThan(base.perWebhook.lambdaInvocations);
    expect(low.provisioned.services.cloudwatchLogs!.perMillionUsd).toBeLessThan(base.provisioned.services.cloudwatchLogs!.perMillionUsd);
    expect(low.assumptions.notes.join('\n')).toContain("intake through its Lambda function URL (intake.endpoint 'function-url')");
    expect(low.assumptions.notes.join('\n')).toContain('once per 1 s batching window');
  });
});
