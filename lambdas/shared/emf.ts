/**
 * One CloudWatch embedded metric format (EMF) line per call: one metric, a fixed set of dimensions,
 * written to stdout, where Lambda's log stream carries it to CloudWatch. Byte for byte the line
 * Powertools Metrics prints for the same metric published on its own (key order included, the
 * Timestamp aside), and silenced by the same variables (`POWERTOOLS_METRICS_DISABLED`, else
 * `POWERTOOLS_DEV`); test/unit/emf.test.ts holds it to Powertools' own output.
 *
 * Why not Powertools Metrics itself: the single-line publishers (lambdas/shared/metrics.ts) use none
 * of what it adds (buffering, dimension sets, metadata, the cold-start metric), and it was a large
 * part of what intake loaded at cold start above the floor (docs/cost-and-scale.md, "What keeps cold
 * starts small").
 * The reconciler, which adds several metrics through a run and publishes them once, keeps it.
 */

/** The units the publishers use (Powertools' `MetricUnit.Count`). */
export type MetricUnitName = 'Count';

export interface MetricLine {
  readonly namespace: string;
  /** Dimension name to value, in the order they are listed; an empty or blank value is left out, as Powertools does. */
  readonly dimensions: Readonly<Record<string, string>>;
  readonly name: string;
  readonly unit: MetricUnitName;
  readonly value: number;
}

/** The line's JSON, without the newline. */
export function emfLine(line: MetricLine, timestamp: number = Date.now()): string {
  const dimensions: Record<string, string> = {};
  for (const [name, value] of Object.entries(line.dimensions)) if (name.trim() !== '' && value.trim() !== '') dimensions[name] = value;
  const names = Object.keys(dimensions);
  return JSON.stringify({
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        { Namespace: line.namespace, Dimensions: names.length > 0 ? [names] : [], Metrics: [{ Name: line.name, Unit: line.unit }] },
      ],
    },
    ...dimensions,
    [line.name]: line.value,
  });
}

const TRUTHY = new Set(['1', 'y', 'yes', 't', 'true', 'on']);

/** Powertools' rule: `POWERTOOLS_METRICS_DISABLED` when set, else on in dev mode (`POWERTOOLS_DEV`). */
export function metricsDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const disabled = env.POWERTOOLS_METRICS_DISABLED;
  if (disabled !== undefined) return TRUTHY.has(disabled.trim().toLowerCase());
  return TRUTHY.has((env.POWERTOOLS_DEV ?? '').trim().toLowerCase());
}

/** A writer of metric lines; the environment is read once, here. */
export function metricLineWriter(env: NodeJS.ProcessEnv = process.env): (line: MetricLine) => void {
  if (metricsDisabled(env)) return () => {};
  return (line) => {
    process.stdout.write(`${emfLine(line)}\n`);
  };
}
