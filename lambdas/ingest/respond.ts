/** Intake's answers: the outcome (a closed set, fit for a metric dimension) and the HTTP response. */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ExtractedAttribution } from '../recording/parse';
import type { Recorded } from '../recording/record';

export interface IngestResult {
  /** `recorded`, `duplicate`, `duplicate_conflict`, `duplicate_body` or `challenge`. */
  readonly outcome: string;
  readonly eventId: string | undefined;
  readonly tenantId: string | undefined;
  readonly deliveries: number;
  readonly response: APIGatewayProxyStructuredResultV2;
}

/**
 * 202 with the event id and the number of deliveries for a recorded event; 200 with the status for a
 * duplicate. A duplicate under another event id than the request named (replay protection by body
 * gave it the first one's) is `duplicate_body`.
 */
export function respond(recorded: Recorded, requested: ExtractedAttribution): IngestResult {
  const { outcome, attribution, consumers } = recorded;
  const replayed = outcome === 'duplicate' && attribution.eventId !== requested.eventId;
  const response =
    outcome === 'recorded'
      ? json(202, { event_id: attribution.eventId, deliveries: consumers.length })
      : json(200, { status: outcome, event_id: attribution.eventId });
  return {
    outcome: replayed ? 'duplicate_body' : outcome,
    eventId: attribution.eventId,
    tenantId: attribution.tenantId,
    deliveries: consumers.length,
    response,
  };
}

/** A handshake answered: nothing stored, no event. */
export function challenge(response: APIGatewayProxyStructuredResultV2): IngestResult {
  return { outcome: 'challenge', eventId: undefined, tenantId: undefined, deliveries: 0, response };
}

export function json(statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}
