/** The contract between the tracing wrapper (tracing.ts) and its X-Ray side (xray.ts), types only. */

/** What a trace is annotated with (X-Ray annotation keys: indexed, searchable). */
export interface TraceIds {
  readonly event_id?: string;
  readonly tenant_id?: string;
  readonly consumer_id?: string;
  /** The trace of the intake invocation that wrote the receipt. */
  readonly intake_trace_id?: string;
}

/** What a handler's logic is given when it is traced. */
export interface InvocationTracing {
  /** This invocation's X-Ray trace header, to carry across the next hop; undefined when X-Ray does not sample it. */
  header(): string | undefined;
  /** Annotates this invocation's trace. */
  annotate(ids: TraceIds): void;
}

/** The X-Ray side (xray.ts), present only in a bundle built for tracing. */
export interface XrayInvocations extends InvocationTracing {
  /** Runs one invocation in a subsegment of its own, with one subsegment per event it handles, annotated with its ids. */
  run<R>(work: () => Promise<R>, events: readonly TraceIds[]): Promise<R>;
}
