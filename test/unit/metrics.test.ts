/**
 * The per-stack metrics as the functions emit them (EMF, lambdas/shared/metrics.ts): intake requests
 * by Stack and Outcome and its verification failures by Stack and Source, failed secret reads by
 * Stack and Served, fan-out deliveries skipped for a consumer no longer configured and HTTP circuits
 * opened, by Stack and Consumer. Exactly the dimensions the dashboard and alarms name: no
 * Powertools `service` dimension.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createCircuitOpenMetric,
  createIntakeMetrics,
  createSecretRefreshFailureMetric,
  createSkippedDeliveriesMetric,
} from '../../lambdas/shared/metrics';

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
      onOutcome('recorded', 'platform');
      onOutcome('duplicate', 'platform');
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
      Outcome: 'duplicate',
      IntakeRequests: 1,
    });
  });

  it('adds SignatureFailures by Stack and Source for each verification failure, and nothing more for any other outcome', () => {
    const onOutcome = createIntakeMetrics('Hookledger-staging');
    const lines = emitted(() => {
      onOutcome('signature_mismatch', 'platform');
      onOutcome('timestamp_out_of_tolerance', 'shop');
      onOutcome('unknown_source', 'nonexistent');
      onOutcome('recorded', 'platform');
    });
    expect(lines.map((l) => [l.IntakeRequests === undefined ? 'SignatureFailures' : 'IntakeRequests', l.Outcome ?? l.Source])).toEqual([
      ['IntakeRequests', 'signature_mismatch'],
      ['SignatureFailures', 'platform'],
      ['IntakeRequests', 'timestamp_out_of_tolerance'],
      ['SignatureFailures', 'shop'],
      ['IntakeRequests', 'unknown_source'],
      ['IntakeRequests', 'recorded'],
    ]);
    expect(lines[1]).toEqual({
      _aws: {
        Timestamp: expect.any(Number),
        CloudWatchMetrics: [
          { Namespace: 'Hookledger', Dimensions: [['Stack', 'Source']], Metrics: [{ Name: 'SignatureFailures', Unit: 'Count' }] },
        ],
      },
      Stack: 'Hookledger-staging',
      Source: 'platform',
      SignatureFailures: 1,
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

describe('createSecretRefreshFailureMetric', () => {
  it('emits SecretRefreshFailures once per failed read, by Stack and Served only (the alarm names both)', () => {
    const onFailure = createSecretRefreshFailureMetric('Hookledger-staging');
    const [stale, none] = emitted(() => {
      onFailure('stale');
      onFailure('none');
    });
    expect(stale).toMatchObject({
      _aws: {
        CloudWatchMetrics: [
          { Namespace: 'Hookledger', Dimensions: [['Stack', 'Served']], Metrics: [{ Name: 'SecretRefreshFailures', Unit: 'Count' }] },
        ],
      },
      Stack: 'Hookledger-staging',
      Served: 'stale',
      SecretRefreshFailures: 1,
    });
    expect(stale).not.toHaveProperty('service');
    expect(none).toMatchObject({ Stack: 'Hookledger-staging', Served: 'none', SecretRefreshFailures: 1 });
  });
});

describe('createCircuitOpenMetric', () => {
  it('emits HttpCircuitOpened for its consumer, by Stack and Consumer only', () => {
    const onOpen = createCircuitOpenMetric('Hookledger-prod', 'crm-sync');
    const [line] = emitted(() => onOpen());
    expect(line).toMatchObject({
      _aws: {
        CloudWatchMetrics: [
          { Namespace: 'Hookledger', Dimensions: [['Stack', 'Consumer']], Metrics: [{ Name: 'HttpCircuitOpened', Unit: 'Count' }] },
        ],
      },
      Stack: 'Hookledger-prod',
      Consumer: 'crm-sync',
      HttpCircuitOpened: 1,
    });
    expect(line).not.toHaveProperty('service');
  });

  it('refuses an empty stack name, naming the metric it would merge', () => {
    expect(() => createCircuitOpenMetric('', 'crm-sync')).toThrow(
      'stackName must not be empty: it is the Stack dimension of HttpCircuitOpened',
    );
  });
});
