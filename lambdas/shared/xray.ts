/**
 * The X-Ray side of tracing: Powertools Tracer over the X-Ray SDK, loaded by tracing.ts with a
 * function's first invocation, and bundled only when the configuration's `tracing` is `'xray'`
 * (core/bundled-features.ts). In Lambda with active tracing, each invocation's facade segment is
 * Lambda's; the handler runs in a subsegment of it (`## <service>`, annotated ColdStart and Service),
 * each event it handles in a subsegment of that annotated with its ids, and the AWS SDK clients given
 * are traced. Outside Lambda (no AWS_EXECUTION_ENV: the local stack, tests) the Tracer disables itself
 * and every call here is a no-op.
 */
import { Tracer } from '@aws-lambda-powertools/tracer';
import type { TraceIds, XrayInvocations } from './tracing-types';

type Segment = NonNullable<ReturnType<Tracer['getSegment']>>;

function annotate(segment: Segment, ids: TraceIds): void {
  for (const [key, value] of Object.entries(ids)) if (typeof value === 'string') segment.addAnnotation(key, value);
}

export function xrayInvocations(service: string, clients: readonly object[]): XrayInvocations {
  const tracer = new Tracer({ serviceName: service });
  for (const client of clients) tracer.captureAWSv3Client(client);
  /** The running invocation's handler subsegment. */
  let current: Segment | undefined;
  return {
    header() {
      const root = tracer.getRootXrayTraceId();
      // An unsampled trace is never recorded: a header naming it would send an operator to nothing.
      if (!current || !root || !tracer.isTraceSampled()) return undefined;
      return `Root=${root};Parent=${current.id};Sampled=1`;
    },
    annotate(ids) {
      if (current) annotate(current, ids);
    },
    async run(work, events) {
      const facade = tracer.isTracingEnabled() ? tracer.getSegment() : undefined;
      if (!facade) return work();
      const handlerSegment = facade.addNewSubsegment(`## ${service}`);
      tracer.setSegment(handlerSegment);
      tracer.annotateColdStart();
      tracer.addServiceNameAnnotation();
      const perEvent = events.map((ids) => {
        const segment = handlerSegment.addNewSubsegment(`event ${ids.event_id ?? 'unknown'}`);
        annotate(segment, ids);
        return segment;
      });
      current = handlerSegment;
      try {
        return await work();
      } catch (error) {
        tracer.addErrorAsMetadata(error as Error);
        throw error;
      } finally {
        for (const segment of perEvent) segment.close();
        handlerSegment.close();
        tracer.setSegment(facade);
        current = undefined;
      }
    },
  };
}
