/**
 * The local stack with `intake: { endpoint: 'function-url' }`: its gateway stands in for intake's
 * Lambda function URL as deployed, not for the HTTP API. Every path and method reaches intake, with
 * the event a function URL delivers (payload format 2.0, route key `$default`, path parameters null:
 * intake reads the source from the raw path), so the 404 and 405 a client gets are intake's own.
 * One stack for the file; intake's handler is wrapped to keep each event it is handed.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import defaultConfig from '../../hookledger.config';
import type { IngestHandler } from '../../lambdas/ingest/app';
import type { LocalStack } from '../../local/stack';
import { platformEvent } from '../support/factories';
import { doneRows, send, startTestStack, unitsByTenant } from '../support/stack';
import { waitFor } from '../support/wait';

let stack: LocalStack;
/** Each event intake was handed, in order. */
let received: APIGatewayProxyEventV2[] = [];

beforeAll(async () => {
  stack = await startTestStack({ config: defineConfig({ ...defaultConfig, intake: { endpoint: 'function-url' } }) });
  const ingest = stack.handlers.ingest;
  // The stack looks intake's handler up per request, so the wrapper sees every event the gateway builds.
  (stack.handlers as { ingest: IngestHandler }).ingest = (event) => {
    received.push(event);
    return ingest(event);
  };
});
afterAll(() => stack?.stop());
beforeEach(() => {
  received = [];
});

async function request(method: string, path: string): Promise<{ status: number; allow: string | null; body: unknown }> {
  const res = await fetch(new URL(path, stack.url), { method, headers: { 'content-type': 'application/json' }, body: '{}' });
  return { status: res.status, allow: res.headers.get('allow'), body: await res.json() };
}

describe("the local stack with intake behind its function URL (intake.endpoint 'function-url')", () => {
  it('answers a signed POST of evt_01J8K7M2Q4 202 and delivers it to all three consumers for tenant_204', async () => {
    const res = await send(stack, platformEvent({ id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204', key_id: 'key_42' }));
    expect(res).toEqual({ status: 202, body: { event_id: 'evt_01J8K7M2Q4', deliveries: 3 } });
    await stack.drain();
    const rows = await waitFor('three done rows of evt_01J8K7M2Q4', async () => {
      const done = (await doneRows(stack)).filter((r) => r.eventId === 'evt_01J8K7M2Q4');
      return done.length === 3 ? done : undefined;
    });
    expect(rows.map((r) => r.consumerId).sort()).toEqual(['audit-writer', 'billing-meter', 'risk-evaluator']);
    expect(unitsByTenant(rows)).toEqual({ tenant_204: 7 });
  });

  it("hands intake the function URL's event: route key $default, path parameters null, the source only in rawPath", async () => {
    await send(stack, platformEvent({ id: 'evt_01J8K7M2Q5', tenant_id: 'tenant_204', key_id: 'key_42' }));
    expect(received).toHaveLength(1);
    const [event] = received;
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: '$default',
      rawPath: '/hooks/platform',
      pathParameters: null,
      stageVariables: null,
      requestContext: {
        routeKey: '$default',
        stage: '$default',
        accountId: 'anonymous',
        http: { method: 'POST', path: '/hooks/platform' },
      },
    });
    expect(event!.requestContext.apiId).toMatch(/^[a-z0-9]{32}$/);
  });

  it('passes POST /nope to intake, which answers 404 unknown_source', async () => {
    const res = await request('POST', '/nope');
    expect(res).toEqual({
      status: 404,
      allow: null,
      body: { error: 'unknown_source', message: 'no webhook source is registered at /hooks/' },
    });
    expect(received.map((e) => `${e.requestContext.http.method} ${e.rawPath} ${e.routeKey}`)).toEqual(['POST /nope $default']);
    expect(stack.intakeOutcomes()).toMatchObject({ unknown_source: 1 });
  });

  it('passes PUT /hooks/platform to intake, which answers 405 with Allow: POST', async () => {
    const res = await request('PUT', '/hooks/platform');
    expect(res).toEqual({
      status: 405,
      allow: 'POST',
      body: { error: 'method_not_allowed', message: 'source "platform" accepts POST only' },
    });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ routeKey: '$default', rawPath: '/hooks/platform', pathParameters: null });
    expect(received[0]!.requestContext.http.method).toBe('PUT');
  });
});
