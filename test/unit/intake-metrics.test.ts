/**
 * The per-stack metrics as the functions emit them (EMF): intake requests by Stack and Outcome, and
 * fan-out deliveries skipped for a consumer no longer configured, by Stack and Consumer.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSkippedDeliveriesMetric } from '../../lambdas/fanout/metrics';
import { createIntakeMetrics } from '../../lambdas/shared/intake-metrics';

afterEach(() => vi.restoreAllMocks());

function emitted(fn: () => void): Record<string, unknown>[] {
  const lines: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  fn();
  vi.restoreAllMocks();
  return lines
    .flatMap((l) => l.split('\n'))
    .filter((l) => l.includes('"_aws"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('createIntakeMetrics', () => {
  it('emits IntakeRequests once per outcome with exactly the Stack and Outcome dimensions', () => {
    const onOutcome = createIntakeMetrics('Hookledger-staging');
    const [first, second] = emitted(() => {
      onOutcome('recorded');
      onOutcome('signature_mismatch');
    });
    expect(first).toMatchObject({
      _aws: {
        CloudWatchMetrics: [
          { Namespace: 'Hookledger', Dimensions: [['Stack', 'Outcome']], Metrics: [{ Name: 'IntakeRequests', Unit: 'Count' }] },
        ],
      },
      Stack: 'Hookledger-staging',
      Outcome: 'recorded',
      IntakeRequests: 1,
    });
    expect(first).not.toHaveProperty('service');
    expect(second).toMatchObject({
      _aws: { CloudWatchMetrics: [{ Dimensions: [['Stack', 'Outcome']] }] },
      Stack: 'Hookledger-staging',
      Outcome: 'signature_mismatch',
      IntakeRequests: 1,
    });
  });

  it('refuses an empty stack name, which would merge every copy', () => {
    expect(() => createIntakeMetrics('')).toThrow('stackName must not be empty: it is the Stack dimension of IntakeRequests');
  });
});

describe('createSkippedDeliveriesMetric', () => {
  it('emits FanOutSkippedDeliveries with the count, by Stack and Consumer only', () => {
    const onSkipped = createSkippedDeliveriesMetric('Other');
    const [line] = emitted(() => onSkipped('fraud-graph', 3));
    expect(line).toMatchObject({
      _aws: {
        CloudWatchMetrics: [
          { Namespace: 'Hookledger', Dimensions: [['Stack', 'Consumer']], Metrics: [{ Name: 'FanOutSkippedDeliveries', Unit: 'Count' }] },
        ],
      },
      Stack: 'Other',
      Consumer: 'fraud-graph',
      FanOutSkippedDeliveries: 3,
    });
    expect(line).not.toHaveProperty('service');
  });
});
