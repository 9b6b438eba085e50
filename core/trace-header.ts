/**
 * The X-Ray trace header (`Root=1-...;Parent=...;Sampled=1`) that intake writes on a receipt with
 * `tracing: 'xray'` (lambdas/shared/tracing.ts), read by the fan-out and `hookledger trace`.
 */

/** The `Root` of a trace header: the trace id X-Ray's console opens; undefined when the header has none. */
export function traceRoot(header: string): string | undefined {
  return /(?:^|;)\s*Root=([^;]+)/.exec(header)?.[1];
}
