/**
 * The X-Ray trace header (`Root=1-...;Parent=...;Sampled=1`) that intake writes on a receipt with
 * `tracing: 'xray'` (lambdas/shared/tracing.ts), read by the fan-out and `hookledger trace`.
 */

/** The `Root` of a trace header: the trace id X-Ray's console opens; undefined when the header has none. */
export function traceRoot(header: string): string | undefined {
  return /(?:^|;)\s*Root=([^;]+)/.exec(header)?.[1];
}

/**
 * How long after a trace began X-Ray still takes segments for it: it refuses those of a trace whose
 * id (its Root's time) is older. A re-queue of an older receipt starts a trace of its own instead of
 * joining one whose segments would be refused; it stays findable by `annotation.event_id`.
 */
export const TRACE_JOINABLE_MS = 7 * 86_400_000;

/** Whether the trace of `header` began less than TRACE_JOINABLE_MS before `at`; false for a header without a readable Root. */
export function traceStillTaken(header: string, at: number): boolean {
  const startedHex = /(?:^|;)\s*Root=1-([0-9a-fA-F]{8})-/.exec(header)?.[1];
  return startedHex !== undefined && at - Number.parseInt(startedHex, 16) * 1000 < TRACE_JOINABLE_MS;
}
