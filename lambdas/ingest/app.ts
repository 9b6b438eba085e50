/**
 * Intake: verify, extract attribution, record once, answer. The handler composes the steps, each a
 * named function with its own tests: route → checkShape (request.ts) → the handshakes answered before
 * verification → readSecrets, verify (verify.ts) → readBody → the handshakes answered after it
 * (handshake.ts) → attribute → checkKey → claimBody → record (lambdas/recording/record.ts, the steps
 * gap recovery runs too) → respond (respond.ts).
 *
 * The provider is answered 202 only after the receipt (the event and its delivery set, one
 * conditional write) has committed. Unverified requests leave no trace: nothing is stored and the
 * only log line is the rejection reason.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { StorageUnavailableError } from '../../adapters/errors';
import { payloadHmac as keyedHash } from '../../adapters/payload-hash';
import { InputError } from '../recording/parse';
import { attribute, checkKey, claimBody, readBody, record } from '../recording/record';
import type { IngestDeps } from './deps';
import { answerHandshake } from './handshake';
import { checkShape, route, sourceIdOf } from './request';
import { challenge, type IngestResult, json, respond } from './respond';
import { readSecrets, verify } from './verify';

export type { IngestDeps };

export type IngestHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

export function createIngestHandler(deps: IngestDeps): IngestHandler {
  const clock = deps.clock ?? Date.now;
  const { config, logger } = deps;

  return async (event) => {
    const started = clock();
    const sourceId = sourceIdOf(event);
    try {
      const result = await ingest(event, started);
      deps.onOutcome?.(result.outcome, sourceId);
      if (result.eventId) deps.tracing?.annotate({ event_id: result.eventId, tenant_id: result.tenantId });
      // A recorded webhook's durable record is its receipt (`hookledger trace`): its line is DEBUG
      // (logs.applicationLevel), so at INFO logs carry what went wrong, and the duplicates.
      logger[result.outcome === 'recorded' ? 'debug' : 'info']('webhook accepted', {
        outcome: result.outcome,
        source: sourceId,
        event_id: result.eventId,
        tenant_id: result.tenantId,
        deliveries: result.deliveries,
        ms: clock() - started,
      });
      return result.response;
    } catch (error) {
      if (error instanceof InputError) {
        // The reason only: no header values, no body, no secret.
        deps.onOutcome?.(error.code, sourceId);
        logger.warn('webhook rejected', { source: sourceId.slice(0, 40), status: error.status, reason: error.code });
        const refusal = json(error.status, { error: error.code, message: error.message });
        return { ...refusal, headers: { ...refusal.headers, ...error.headers } };
      }
      if (error instanceof StorageUnavailableError) {
        deps.onOutcome?.('storage_unavailable', sourceId);
        logger.error('event store unavailable', { source: sourceId, error: error.message });
        return json(503, { error: 'storage_unavailable', message: 'the event could not be stored; retry later' });
      }
      deps.onOutcome?.('unavailable', sourceId);
      logger.error('intake failed', { source: sourceId, error: error instanceof Error ? error.name : 'unknown' });
      return json(503, { error: 'unavailable', message: 'the event could not be accepted; retry later' });
    }
  };

  async function ingest(event: APIGatewayProxyEventV2, now: number): Promise<IngestResult> {
    const request = route(event, config, now);
    checkShape(request, deps.schemes);
    // Folded in a bundle whose sources answer no handshake: handshake.ts is then left out of it
    // (core/bundled-features.ts); request.source.handshake is undefined for every source there.
    const unsigned = process.env.HOOKLEDGER_BUNDLED_HANDSHAKES !== 'false' ? answerHandshake(request, 'before-verification') : undefined;
    if (unsigned) return challenge(unsigned);
    // Read once: the verifier, a fetched key's credentials and the handshake's answer share them.
    const secrets = await readSecrets(deps.secrets, request);
    const verified = await verify(request, secrets, deps);
    const body = readBody(request);
    const signed =
      process.env.HOOKLEDGER_BUNDLED_HANDSHAKES !== 'false'
        ? answerHandshake(request, 'after-verification', { body, secret: verified.secret })
        : undefined;
    if (signed) return challenge(signed);
    // Computed before attribution: an event id derived from the body (`bh_`) is this keyed hash.
    const payloadHmac = keyedHash(await deps.secrets.payloadHashKey(), request.rawBody);
    const requested = attribute(request, body, payloadHmac);
    await checkKey(request, requested, deps.store);
    const attribution = await claimBody(request, requested, payloadHmac, deps.store);
    const traceHeader = deps.tracing?.header();
    const recorded = await record(
      request,
      { attribution, body, payloadHmac, secretVersion: verified.secretVersion, ...(traceHeader ? { traceHeader } : {}) },
      config,
      deps.store,
    );
    return respond(recorded, requested);
  }
}
