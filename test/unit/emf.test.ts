/**
 * The EMF line writer (lambdas/shared/emf.ts) against Powertools Metrics, the library whose line it
 * reproduces: for any namespace, dimensions and count, the two lines are the same JSON, key order
 * included, once the timestamps are set equal; and both stay silent under the same variables.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { emfLine, type MetricLine, metricLineWriter, metricsDisabled } from '../../lambdas/shared/emf';

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

function stdoutLines(fn: () => void): string[] {
  const chunks: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  // Powertools in dev mode prints through the global console, which the test runner takes over.
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void chunks.push(`${args.join(' ')}\n`));
  try {
    fn();
  } finally {
    vi.restoreAllMocks();
  }
  return chunks
    .join('')
    .split('\n')
    .filter((l) => l !== '');
}

/** What Powertools prints for the line, published as the publishers did: default dimensions, one metric. */
function powertoolsLine(line: MetricLine, timestamp: number): string {
  const [first, ...rest] = Object.entries(line.dimensions);
  const metrics = new Metrics({ namespace: line.namespace, serviceName: 'ignored', logger: { warn: () => {} } as never });
  metrics.clearDefaultDimensions();
  if (first) metrics.setDefaultDimensions({ [first[0]]: first[1] });
  for (const [name, value] of rest) metrics.addDimension(name, value);
  metrics.setTimestamp(timestamp);
  metrics.addMetric(line.name, MetricUnit.Count, line.value);
  const [printed] = stdoutLines(() => metrics.publishStoredMetrics());
  return printed ?? '';
}

const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,30}$/);
const lineArb = fc
  .record({
    namespace: name,
    dimensions: fc.uniqueArray(fc.tuple(name, fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.constantFrom('', ' ', '\t '))), {
      minLength: 1,
      maxLength: 4,
      selector: ([k]) => k,
    }),
    name,
    value: fc.nat({ max: 1_000_000 }),
  })
  .filter((l) => !l.dimensions.some(([k]) => k === l.name));

describe('emfLine', () => {
  it('is the line Powertools Metrics prints for the same metric, key order included', () => {
    const timestamp = Date.parse('2026-12-01T16:00:00Z');
    fc.assert(
      fc.property(lineArb, (l) => {
        const line: MetricLine = { ...l, dimensions: Object.fromEntries(l.dimensions), unit: 'Count' };
        vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
        expect(emfLine(line, timestamp)).toBe(powertoolsLine(line, timestamp));
      }),
      { numRuns: 200 },
    );
  });

  it('prints IntakeRequests by Stack and Outcome as the dashboard reads it', () => {
    const line = emfLine(
      {
        namespace: 'Hookledger',
        dimensions: { Stack: 'Hookledger-prod', Outcome: 'recorded' },
        name: 'IntakeRequests',
        unit: 'Count',
        value: 1,
      },
      1_764_604_800_000,
    );
    expect(line).toBe(
      '{"_aws":{"Timestamp":1764604800000,"CloudWatchMetrics":[{"Namespace":"Hookledger","Dimensions":[["Stack","Outcome"]],' +
        '"Metrics":[{"Name":"IntakeRequests","Unit":"Count"}]}]},"Stack":"Hookledger-prod","Outcome":"recorded","IntakeRequests":1}',
    );
  });

  it.each(['', ' '])('leaves out a dimension whose value is %j, as Powertools does', (blank) => {
    const line = {
      namespace: 'Hookledger',
      dimensions: { Stack: 'Hookledger-prod', Outcome: blank },
      name: 'IntakeRequests',
      unit: 'Count',
      value: 1,
    } as const;
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    expect(emfLine(line, 5)).toBe(powertoolsLine(line, 5));
    expect(JSON.parse(emfLine(line, 5))).not.toHaveProperty('Outcome');
  });
});

describe('metricLineWriter', () => {
  const line: MetricLine = {
    namespace: 'Hookledger',
    dimensions: { Stack: 'Hookledger-dev' },
    name: 'ProviderGaps',
    unit: 'Count',
    value: 4,
  };

  it('writes one line per call to stdout, with the current time', () => {
    const before = Date.now();
    const printed = stdoutLines(() => {
      const write = metricLineWriter({});
      write(line);
      write({ ...line, value: 0 });
    });
    expect(printed).toHaveLength(2);
    const [first, second] = printed.map((l) => JSON.parse(l) as { _aws: { Timestamp: number }; ProviderGaps: number });
    expect(first!.ProviderGaps).toBe(4);
    expect(second!.ProviderGaps).toBe(0);
    expect(first!._aws.Timestamp).toBeGreaterThanOrEqual(before);
  });

  it.each([
    [{ POWERTOOLS_METRICS_DISABLED: 'true' }, true],
    [{ POWERTOOLS_METRICS_DISABLED: '1' }, true],
    [{ POWERTOOLS_METRICS_DISABLED: 'false', POWERTOOLS_DEV: 'true' }, false],
    [{ POWERTOOLS_DEV: 'yes' }, true],
    [{ POWERTOOLS_DEV: 'false' }, false],
    [{}, false],
  ])('with %o metrics are disabled: %s, as Powertools decides', (env, disabled) => {
    expect(metricsDisabled(env)).toBe(disabled);
    for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
    for (const k of ['POWERTOOLS_METRICS_DISABLED', 'POWERTOOLS_DEV']) if (!(k in env)) vi.stubEnv(k, undefined);
    const powertools = new Metrics({ namespace: 'Hookledger', logger: { warn: () => {} } as never });
    powertools.addMetric('ProviderGaps', MetricUnit.Count, 4);
    expect(stdoutLines(() => powertools.publishStoredMetrics())).toHaveLength(disabled ? 0 : 1);
    expect(stdoutLines(() => metricLineWriter(env)(line))).toHaveLength(disabled ? 0 : 1);
  });
});
