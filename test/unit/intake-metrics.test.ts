/** The intake metric as the ingest function emits it: one EMF line per request, by Stack and Outcome. */
import { afterEach, describe, expect, it, vi } from 'vitest';
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
  return lines.flatMap((l) => l.split('\n')).filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('createIntakeMetrics', () => {
  it('emits IntakeRequests once per outcome with exactly the Stack and Outcome dimensions', () => {
    const onOutcome = createIntakeMetrics('Hookledger-staging');
    const [first, second] = emitted(() => {
      onOutcome('recorded');
      onOutcome('signature_mismatch');
    });
    expect(first).toMatchObject({
      _aws: { CloudWatchMetrics: [{ Namespace: 'Hookledger', Dimensions: [['Stack', 'Outcome']], Metrics: [{ Name: 'IntakeRequests', Unit: 'Count' }] }] },
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
