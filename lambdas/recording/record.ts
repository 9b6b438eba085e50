/**
 * From verified bytes to the receipt: `readBody` (the source's format), `attribute` (signed parts
 * only, parse.ts), `checkKey` (the tenant key registry, when the source enforces it), `claimBody`
 * (replay protection by body) and `record` (one conditional write of the receipt and its payload).
 * Intake (lambdas/ingest/app.ts) runs them after verification; gap recovery
 * (lambdas/reconcile/gap-recovery.ts) runs them on the bodies a provider's API lists.
 */
import type { IntakeStore } from '../../adapters/event-stores';
import { deliverySet, payloadRetentionDays } from '../../core/config/routing';
import type { HookledgerConfig } from '../../core/config/schema';
import { type Attribution, DAY_MS, type KeyItem, type SecretVersion } from '../../core/model';
import { orderingKeysFor } from './ordering';
import { type ExtractedAttribution, extractAttribution, InputError, parseBody } from './parse';
import type { IngestRequest } from './request';

type RecordOutcome = Awaited<ReturnType<IntakeStore['recordEvent']>>;

/** The body in the source's format; a GET (only ever a handshake: checkShape refused the others) carries none. */
export function readBody(request: IngestRequest): Record<string, unknown> {
  return request.method === 'GET' ? {} : parseBody(request.rawBody, request.source.bodyFormat);
}

/**
 * The event id, type, tenant and key, read where the source says (signed parts only). `payloadHmac`
 * is the keyed hash of the bytes: an event id derived from the body (`bh_`) is it.
 */
export function attribute(request: IngestRequest, body: Record<string, unknown>, payloadHmac: string): ExtractedAttribution {
  return extractAttribution(request.source, body, request.headers, payloadHmac);
}

/** On a source enforcing the key registry: unknown keys and keys of another tenant are refused (403); a revoked key's event is still a fact. */
export async function checkKey(request: IngestRequest, requested: ExtractedAttribution, store: Pick<IntakeStore, 'getKey'>): Promise<void> {
  if (!request.source.enforceKeyRegistry) return;
  const key: KeyItem | undefined = await store.getKey(requested.keyId);
  if (!key) {
    throw new InputError('unknown_key', `key_id ${requested.keyId} is not registered; issue it first`, 403);
  }
  if (key.tenantId !== requested.tenantId) {
    throw new InputError('key_tenant_mismatch', `key_id ${requested.keyId} does not belong to tenant ${requested.tenantId}`, 403);
  }
}

/**
 * Replay protection by body: these bytes name the event they first came with, whatever the unsigned
 * headers of this request say. Sources protected by event id claim nothing.
 */
export async function claimBody(
  request: IngestRequest,
  requested: ExtractedAttribution,
  payloadHmac: string,
  store: Pick<IntakeStore, 'claimBody'>,
): Promise<Omit<Attribution, 'source'>> {
  if (request.source.replayProtection !== 'body') return requested;
  return store.claimBody({ source: request.source.id, ...requested, claimedAt: request.receivedAt }, payloadHmac);
}

export interface Recorded {
  readonly outcome: RecordOutcome;
  readonly attribution: Omit<Attribution, 'source'>;
  /** The delivery set: the consumers subscribed to the event type whose filter matches the event. */
  readonly consumers: string[];
}

/** The receipt and its payload, in one conditional write: `recorded`, or a duplicate of a recorded event id. */
export async function record(
  request: IngestRequest,
  event: {
    readonly attribution: Omit<Attribution, 'source'>;
    readonly body: Record<string, unknown>;
    readonly payloadHmac: string;
    readonly secretVersion: SecretVersion;
    /** Intake's X-Ray trace header, with `tracing: 'xray'` (lambdas/shared/tracing.ts). */
    readonly traceHeader?: string;
  },
  config: HookledgerConfig,
  store: Pick<IntakeStore, 'recordEvent'>,
): Promise<Recorded> {
  const { attribution, body, payloadHmac, secretVersion, traceHeader } = event;
  const now = request.receivedAt;
  // The filters are decided here, once: the receipt names exactly the consumers that receive the event.
  const consumers = deliverySet(config, {
    source: request.source.id,
    type: attribution.eventType,
    tenantId: attribution.tenantId,
    keyId: attribution.keyId,
    body,
  });
  const outcome = await store.recordEvent(
    {
      source: request.source.id,
      eventId: attribution.eventId,
      eventType: attribution.eventType,
      tenantId: attribution.tenantId,
      keyId: attribution.keyId,
      receivedAt: now,
      consumers,
      payloadHmac,
      payloadBytes: request.rawBody.length,
      secretVersion,
      payloadExpiresAt: now + payloadRetentionDays(config, request.source) * DAY_MS,
      ...withOrderingKeys(orderingKeysFor(config, consumers, attribution.tenantId, body)),
      ...(traceHeader ? { traceHeader } : {}),
    },
    request.rawBody,
  );
  return { outcome, attribution, consumers };
}

/** Only receipts with an ordered consumer carry the keys (no empty attribute on the others). */
function withOrderingKeys(keys: Record<string, string> | undefined): { orderingKeys?: Record<string, string> } {
  return keys ? { orderingKeys: keys } : {};
}
