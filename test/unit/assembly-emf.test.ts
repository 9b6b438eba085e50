/**
 * The assembly stack reads the functions' EMF lines as CloudWatch does (local/assembly/emf.ts): only
 * a line that declares the metric in `_aws.CloudWatchMetrics` and carries a number for it counts,
 * by the value of its `Outcome` field (IntakeRequests) or its `Source` field (SignatureFailures).
 */
import { describe, expect, it } from 'vitest';
import { createIntakeMetrics } from '../../lambdas/shared/metrics';
import { emfValue, intakeOutcomeCounter } from '../../local/assembly/emf';

const line = (outcome: string, value = 1) =>
  JSON.stringify({
    _aws: {
      Timestamp: 1,
      CloudWatchMetrics: [
        { Namespace: 'Hookledger', Dimensions: [['Stack', 'Outcome']], Metrics: [{ Name: 'IntakeRequests', Unit: 'Count' }] },
      ],
    },
    Stack: 'Hookledger',
    Outcome: outcome,
    IntakeRequests: value,
  });

describe('EMF lines read as CloudWatch reads them', () => {
  it('counts 3 recorded, 1 duplicate and 1 signature_mismatch out of 8 lines, skipping log lines and other metrics', () => {
    const counter = intakeOutcomeCounter();
    for (const l of [
      line('recorded'),
      line('recorded', 2),
      '{"level":"INFO","message":"webhook accepted","outcome":"duplicate"}',
      line('duplicate'),
      line('signature_mismatch'),
      JSON.stringify({
        _aws: { CloudWatchMetrics: [{ Metrics: [{ Name: 'SecretRefreshFailures' }] }] },
        Outcome: 'recorded',
        SecretRefreshFailures: 1,
      }),
      '{"_aws": not json',
      JSON.stringify({ Outcome: 'recorded', IntakeRequests: 1 }),
    ]) {
      counter.add(l);
    }
    expect(counter.outcomes()).toEqual({ duplicate: 1, recorded: 3, signature_mismatch: 1 });
  });

  it('counts SignatureFailures per source in the minute it reads them, beside the outcomes', () => {
    const at = Date.parse('2026-12-01T10:00:30Z');
    const counter = intakeOutcomeCounter(() => at);
    const failure = (source: string) =>
      JSON.stringify({
        _aws: {
          Timestamp: 1,
          CloudWatchMetrics: [
            { Namespace: 'Hookledger', Dimensions: [['Stack', 'Source']], Metrics: [{ Name: 'SignatureFailures', Unit: 'Count' }] },
          ],
        },
        Stack: 'Hookledger',
        Source: source,
        SignatureFailures: 1,
      });
    for (const l of [line('signature_mismatch'), failure('platform'), line('signature_mismatch'), failure('platform'), failure('shop')]) {
      counter.add(l);
    }
    expect(counter.outcomes()).toEqual({ signature_mismatch: 2 });
    const minute = Date.parse('2026-12-01T10:00:00Z');
    expect(counter.signatureFailures()).toEqual({
      at,
      bySource: { platform: [{ from: minute, count: 2 }], shop: [{ from: minute, count: 1 }] },
    });
  });

  it("reads the very line intake's metric publisher writes (lambdas/shared/emf.ts)", () => {
    const lines: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    }) as typeof process.stdout.write;
    try {
      createIntakeMetrics('Hookledger-staging')('recorded', 'platform');
    } finally {
      process.stdout.write = write;
    }
    const found = lines.map((l) => emfValue(l, 'IntakeRequests')).find((v) => v !== undefined);
    expect(found?.value).toBe(1);
    expect(found?.fields).toMatchObject({ Outcome: 'recorded', Stack: 'Hookledger-staging' });
  });
});
