/**
 * Tracing of the functions with AWS X-Ray, when the configuration's `tracing` is `'xray'`.
 *
 * Off (the default) costs nothing: the X-Ray side (xray.ts: Powertools Tracer over the X-Ray SDK) is
 * reached by one `import()` behind the bundle's tracing flag (core/bundled-features.ts), which a bundle
 * built for tracing off folds away with everything behind it; `handlerTracing` then gives nothing and
 * each entry exports its handler as it is.
 *
 * On: X-Ray follows neither the DynamoDB stream nor an SQS queue from one function to the next, so
 * the context is carried. Intake writes its invocation's trace header on the receipt (`traceHeader`,
 * when X-Ray samples the invocation); the fan-out puts it on each message it sends as the SQS system
 * attribute AWSTraceHeader, by which Lambda links each consumer's trace to intake's. Each hop annotates
 * its trace with the ids it is searched by: `event_id`, `tenant_id`, `consumer_id`, and on the
 * fan-out's events `intake_trace_id` (the receipt's trace): X-Ray finds one webhook's traces with
 * `annotation.event_id = "evt_..."`. Re-sends keep the webhook's trace: a re-queue item (replay,
 * backfill, repair) copies the receipt's header for the fan-out to send, a quarantine's DLQ copy and a
 * redrive keep the header their message came with (core/trace-header.ts says for how long a trace
 * still takes segments).
 */
import type { Context, DynamoDBRecord, SQSRecord } from 'aws-lambda';
import { FeatureNotBundledError } from '../../core/bundled-features';
import type { HookledgerConfig } from '../../core/config/schema';
import { traceRoot } from '../../core/trace-header';

export { traceRoot };

import type { InvocationTracing, TraceIds, XrayInvocations } from './tracing-types';

export type { InvocationTracing, TraceIds, XrayInvocations };

export type TracedHandler<E, R> = (event: E, context?: Context) => Promise<R>;

/** One function's tracing: the X-Ray side loaded with the first invocation, the SDK clients given captured then. */
export class HandlerTracing implements InvocationTracing {
  private xray: XrayInvocations | undefined;
  private loading: Promise<XrayInvocations> | undefined;

  constructor(
    private readonly service: string,
    private readonly clients: readonly object[],
  ) {}

  header(): string | undefined {
    return this.xray?.header();
  }

  annotate(ids: TraceIds): void {
    this.xray?.annotate(ids);
  }

  /** `handler` with each invocation traced; `idsOf` names the events of an invocation (a batch's records). */
  wrap<E, R>(handler: TracedHandler<E, R>, idsOf?: (event: E) => readonly TraceIds[]): TracedHandler<E, R> {
    return async (event, context) => {
      this.loading ??= loadXray(this.service, this.clients);
      this.xray ??= await this.loading;
      return this.xray.run(() => handler(event, context), idsOf?.(event) ?? []);
    };
  }
}

async function loadXray(service: string, clients: readonly object[]): Promise<XrayInvocations> {
  // Written out here so that a bundle built for tracing off drops the import and all it reaches.
  const xray = process.env.HOOKLEDGER_BUNDLED_TRACING !== 'false' ? await import('./xray') : undefined;
  if (!xray) throw new FeatureNotBundledError('tracing', "tracing: 'xray'");
  return xray.xrayInvocations(service, clients);
}

/**
 * The tracing of a function named `service` (its POWERTOOLS_SERVICE_NAME), its AWS SDK clients traced
 * too; undefined when the configuration's `tracing` is off. Where no X-Ray daemon is (the local stack,
 * tests) the Tracer disables itself and the handler runs as it would untraced.
 */
export function handlerTracing(
  config: Pick<HookledgerConfig, 'tracing'>,
  service: string,
  clients: readonly object[],
): HandlerTracing | undefined {
  return process.env.HOOKLEDGER_BUNDLED_TRACING !== 'false' && config.tracing === 'xray' ? new HandlerTracing(service, clients) : undefined;
}

/** Where an invocation's events are read from for their annotations: a stream batch's records, an SQS batch's messages. */
export type TracedRecords = 'stream records' | 'queue messages';

/**
 * `handler` traced by `tracing`, each of `records` annotated; `handler` itself when there is no
 * tracing. The record readers are named, not passed, so that a bundle built for tracing off drops
 * them with the rest.
 */
export function traced<E, R>(
  tracing: HandlerTracing | undefined,
  handler: TracedHandler<E, R>,
  records?: TracedRecords,
): TracedHandler<E, R> {
  return process.env.HOOKLEDGER_BUNDLED_TRACING !== 'false' && tracing ? tracing.wrap(handler, records && idsOfRecords(records)) : handler;
}

function idsOfRecords(records: TracedRecords): (event: unknown) => TraceIds[] {
  return (event) =>
    ((event as { Records?: unknown[] }).Records ?? []).map((r) =>
      records === 'stream records' ? streamTraceIds(r as DynamoDBRecord) : sqsTraceIds(r as SQSRecord),
    );
}

/** A stream record's ids (a receipt's or a re-queue's image), and the trace of the intake that wrote the receipt. */
export function streamTraceIds(record: DynamoDBRecord): TraceIds {
  const image = record.dynamodb?.NewImage;
  const s = (name: string) => image?.[name]?.S;
  const header = s('traceHeader');
  const root = header ? traceRoot(header) : undefined;
  return withValues({ event_id: s('eventId'), tenant_id: s('tenantId'), consumer_id: s('consumerId'), intake_trace_id: root });
}

/** A delivery message's ids; none for a body that is not one (the runtime quarantines it). */
export function sqsTraceIds(record: SQSRecord): TraceIds {
  let message: { eventId?: unknown; tenantId?: unknown; consumerId?: unknown };
  try {
    message = JSON.parse(record.body) as typeof message;
  } catch {
    return {};
  }
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return withValues({ event_id: text(message?.eventId), tenant_id: text(message?.tenantId), consumer_id: text(message?.consumerId) });
}

function withValues(ids: { readonly [K in keyof TraceIds]?: string | undefined }): TraceIds {
  return Object.fromEntries(Object.entries(ids).filter(([, v]) => v !== undefined && v !== '')) as TraceIds;
}
