/** One row of `hookledger doctor`, types only: doctor.ts and the checks it calls (capacity, provider drift) share it. */

/** `warning`: worth reading, but no reason to fail (doctor's exit code counts problems only). */
export type CheckStatus = 'ok' | 'problem' | 'warning' | 'info';

export interface Check {
  /** `sample:<source>`, `bootstrap`, `concurrency`, `stack`, `secret:<source>`, `alarms`, `consumer:<id>`. */
  readonly id: string;
  readonly status: CheckStatus;
  readonly message: string;
  /** For a problem: what to run or change. */
  readonly fix?: string;
}
