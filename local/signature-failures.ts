/**
 * The running intake's verification failures per source, counted per minute on the stack's clock:
 * what `hookledger alarms` and the console's Health view hold against `alarms.signatureFailures`
 * locally (the admin endpoint's `GET /intake` serves them), as each source's SignatureFailures alarm
 * does on AWS. Only the last MAX_SIGNATURE_FAILURE_WINDOW_MINUTES minutes are kept, at most one
 * count per source and minute, and only configured sources fail verification (an unknown source is
 * refused before it), so memory stays bounded whatever arrives.
 */
import {
  MAX_SIGNATURE_FAILURE_WINDOW_MINUTES,
  SIGNATURE_FAILURE_BUCKET_MS,
  type SignatureFailureCounts,
  type SignatureFailureMinute,
} from '../core/metrics';

const minuteOf = (at: number): number => Math.floor(at / SIGNATURE_FAILURE_BUCKET_MS) * SIGNATURE_FAILURE_BUCKET_MS;

export class SignatureFailureLog {
  /** Per source, failures by the start of their minute. */
  private readonly bySource = new Map<string, Map<number, number>>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** `count` verification failures of `sourceId`, now. */
  add(sourceId: string, count = 1): void {
    const minute = minuteOf(this.clock());
    const minutes = this.bySource.get(sourceId) ?? new Map<number, number>();
    minutes.set(minute, (minutes.get(minute) ?? 0) + count);
    this.bySource.set(sourceId, minutes);
    this.forgetBefore(this.oldestKept(minute));
  }

  /** The minutes kept, per source, and the stack's clock now. */
  counts(): SignatureFailureCounts {
    const at = this.clock();
    this.forgetBefore(this.oldestKept(minuteOf(at)));
    const bySource: Record<string, SignatureFailureMinute[]> = {};
    for (const [source, minutes] of this.bySource) {
      bySource[source] = [...minutes].sort(([a], [b]) => a - b).map(([from, count]) => ({ from, count }));
    }
    return { at, bySource };
  }

  private oldestKept(minute: number): number {
    return minute - (MAX_SIGNATURE_FAILURE_WINDOW_MINUTES - 1) * SIGNATURE_FAILURE_BUCKET_MS;
  }

  private forgetBefore(oldest: number): void {
    for (const [source, minutes] of this.bySource) {
      for (const from of minutes.keys()) if (from < oldest) minutes.delete(from);
      if (minutes.size === 0) this.bySource.delete(source);
    }
  }
}
