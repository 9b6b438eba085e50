/**
 * `filter test` and `transform test`: a consumer's filter or transform tried on one stored event,
 * read back as intake read it (the payload, in its source's body format, core/body.ts), with the same
 * functions intake and the worker run (core/filter.ts, core/transform.ts). Nothing is written.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { narrowPayload } from '../adapters/dotted-path';
import { PayloadBucketMissingError } from '../adapters/payloads';
import { readBody } from '../core/body';
import { findConsumer, findSource, matchesEventType } from '../core/config/routing';
import type { ConsumerConfig } from '../core/config/schema';
import { explainMatch, type FilterEvent } from '../core/filter';
import type { EventItem } from '../core/model';
import { PROJECT_ROOT } from '../core/paths';
import { checkTransformRequest, type Transform } from '../core/transform';
import { type ConfigDeps, eventStoresOf, type StoreDeps } from './deps';
import { NotFoundError, OperationFailedError, UsageError } from './errors';
import { findReceipt } from './receipts';

export interface FilterTestResult {
  readonly consumer: string;
  readonly source: string;
  readonly eventId: string;
  readonly eventType: string;
  /** Whether the consumer subscribes to the event's type (`subscribes`). */
  readonly subscribed: boolean;
  /** Whether the consumer has a filter. */
  readonly filtered: boolean;
  /** Subscribed, and the filter (if any) matched: the consumer would be in the delivery set now. */
  readonly matched: boolean;
  /** The part of the pattern that decided a no match (a dotted field, or `$or`); `subscribes` when the type did. */
  readonly decidedBy?: string;
  readonly reason: string;
  /** Whether the receipt's delivery set names the consumer (what intake decided when it arrived). */
  readonly inDeliverySet: boolean;
}

export function requireConfigured(deps: ConfigDeps, consumerId: string): ConsumerConfig {
  const consumer = findConsumer(deps.config, consumerId);
  if (!consumer) {
    throw new UsageError(`unknown consumer "${consumerId}" (configured: ${deps.config.consumers.map((c) => c.id).join(', ')})`);
  }
  return consumer;
}

/** The event as a filter sees it: the envelope captured at intake and the stored body, read in its source's format. */
export async function filterEventOf(deps: StoreDeps & ConfigDeps, receipt: EventItem): Promise<FilterEvent | undefined> {
  const raw = await storedBody(deps, receipt);
  if (!raw) return undefined;
  const format = findSource(deps.config, receipt.source)?.bodyFormat ?? 'json';
  return { source: receipt.source, type: receipt.eventType, tenantId: receipt.tenantId, keyId: receipt.keyId, body: readBody(raw, format) };
}

/** A body kept in the payload bucket (a large one) is not read by the CLI. */
export class BodyInBucketError extends UsageError {}

async function storedBody(deps: StoreDeps, receipt: EventItem): Promise<Buffer | undefined> {
  try {
    return await eventStoresOf(deps).payloads.getPayload(receipt.source, receipt.eventId, receipt.payloadHmac);
  } catch (error) {
    if (error instanceof PayloadBucketMissingError) {
      throw new BodyInBucketError(
        `the body of ${receipt.eventId} is in the payload bucket (${receipt.payloadBytes} bytes), which this target names no bucket for: its filter cannot be tested here`,
      );
    }
    throw error;
  }
}

export async function filterTest(
  deps: StoreDeps & ConfigDeps,
  request: { consumer: string; eventId: string; source?: string },
): Promise<FilterTestResult> {
  const consumer = requireConfigured(deps, request.consumer);
  const receipt = await findReceipt(deps, request.eventId, request.source);
  const head = {
    consumer: consumer.id,
    source: receipt.source,
    eventId: receipt.eventId,
    eventType: receipt.eventType,
    filtered: consumer.filter !== undefined,
    inDeliverySet: (receipt.consumers ?? []).includes(consumer.id),
  };
  const subscribed = consumer.subscribes.some((p) => matchesEventType(p, receipt.eventType));
  if (!subscribed) {
    return {
      ...head,
      subscribed,
      matched: false,
      decidedBy: 'subscribes',
      reason: `type ${receipt.eventType} matches none of ${JSON.stringify(consumer.subscribes)}`,
    };
  }
  if (!consumer.filter) return { ...head, subscribed, matched: true, reason: 'no filter: every event of the subscribed types' };
  const event = await filterEventOf(deps, receipt);
  if (!event) throw new NotFoundError(`the payload of ${receipt.eventId} is past retention: its body can no longer be matched`);
  const explained = explainMatch(consumer.filter, event);
  return {
    ...head,
    subscribed,
    matched: explained.matched,
    ...(explained.path ? { decidedBy: explained.path } : {}),
    reason: explained.reason,
  };
}

export interface TransformTestResult {
  readonly consumer: string;
  readonly eventId: string;
  readonly transform: string;
  /** The narrowed view the transform was given. */
  readonly payload: Record<string, unknown>;
  /** What would be sent (before signing): the body as JSON and the transform's headers. */
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string>>;
}

export async function transformTest(
  deps: StoreDeps & ConfigDeps & { root?: string },
  request: { consumer: string; eventId: string; source?: string },
): Promise<TransformTestResult> {
  const consumer = requireConfigured(deps, request.consumer);
  if (consumer.kind !== 'http' || !consumer.transform) {
    throw new UsageError(`consumer ${consumer.id} has no transform (only kind: 'http' consumers take one)`);
  }
  const receipt = await findReceipt(deps, request.eventId, request.source);
  const event = await filterEventOf(deps, receipt);
  if (!event) throw new NotFoundError(`the payload of ${receipt.eventId} is past retention: there is nothing to transform`);
  const payload = narrowPayload(event.body as Record<string, unknown>, consumer.fields);
  const module = (await import(pathToFileURL(path.join(deps.root ?? PROJECT_ROOT, consumer.transform)).href)) as { transform?: Transform };
  if (typeof module.transform !== 'function') throw new UsageError(`${consumer.transform} must export a function named "transform"`);
  let out: unknown;
  try {
    out = await module.transform({
      eventId: receipt.eventId,
      eventType: receipt.eventType,
      tenantId: receipt.tenantId,
      keyId: receipt.keyId,
      payload,
    });
  } catch (error) {
    throw new OperationFailedError(
      `transform threw: ${error instanceof Error ? error.message : String(error)} (the delivery would be quarantined)`,
    );
  }
  // The worker's own check (lambdas/runtime/http.ts): what it prints is the checked copy the worker would send.
  const checked = checkTransformRequest(out);
  if (!checked.ok) throw new OperationFailedError(`${checked.problem} (the delivery would be quarantined)`);
  const { body, headers } = checked.request;
  return { consumer: consumer.id, eventId: receipt.eventId, transform: consumer.transform, payload, body, headers };
}
