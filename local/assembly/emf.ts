/**
 * The functions' EMF lines read as CloudWatch reads them: a JSON line with `_aws.CloudWatchMetrics`
 * names its metrics and dimensions, and carries each one's value and each dimension's value at the
 * top level. The assembly stack counts intake's `IntakeRequests` by `Outcome` from the ingest
 * bundle's own lines, so `hookledger status` shows what the dashboard's intake widget would, and its
 * `SignatureFailures` by `Source`, so `hookledger alarms` holds them against each source's rule.
 */
import { DIMENSION, INTAKE_METRIC, SIGNATURE_FAILURE_METRIC, type SignatureFailureCounts } from '../../core/metrics';
import { SignatureFailureLog } from '../signature-failures';

interface EmfDocument {
  readonly _aws?: { readonly CloudWatchMetrics?: readonly { readonly Metrics?: readonly { readonly Name?: string }[] }[] };
  readonly [field: string]: unknown;
}

/** The value of `metric` in this line and the line's fields, or undefined when the line is not EMF holding it. */
export function emfValue(line: string, metric: string): { value: number; fields: Readonly<Record<string, unknown>> } | undefined {
  if (!line.startsWith('{') || !line.includes('"_aws"')) return undefined;
  let doc: EmfDocument;
  try {
    doc = JSON.parse(line) as EmfDocument;
  } catch {
    return undefined;
  }
  const declared = (doc._aws?.CloudWatchMetrics ?? []).some((d) => (d.Metrics ?? []).some((m) => m.Name === metric));
  const value = doc[metric];
  if (!declared || typeof value !== 'number') return undefined;
  return { value, fields: doc };
}

export interface IntakeCounter {
  add(line: string): void;
  outcomes(): Record<string, number>;
  signatureFailures(): SignatureFailureCounts;
}

/**
 * Intake's requests by outcome, summed over the lines given to `add`, and its verification failures
 * per source (`SignatureFailures` lines) in the minute they are read, for the per-source rule.
 */
export function intakeOutcomeCounter(clock: () => number = Date.now): IntakeCounter {
  const counts = new Map<string, number>();
  const failures = new SignatureFailureLog(clock);
  return {
    add(line) {
      const found = emfValue(line, INTAKE_METRIC);
      const outcome = found?.fields[DIMENSION.outcome];
      if (found && typeof outcome === 'string') counts.set(outcome, (counts.get(outcome) ?? 0) + found.value);
      const failed = found ? undefined : emfValue(line, SIGNATURE_FAILURE_METRIC);
      const source = failed?.fields[DIMENSION.source];
      if (failed && typeof source === 'string') failures.add(source, failed.value);
    },
    outcomes: () => Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b))),
    signatureFailures: () => failures.counts(),
  };
}
