/**
 * Intake behind a Lambda function URL (`intake.endpoint: 'function-url'`): the event has no route
 * key and no path parameters, so the source comes from the raw path. The event below is the request
 * payload AWS documents for function URLs ("Invoking Lambda function URLs", request payload format),
 * with this test's path, headers and body, and without the IAM authorizer block (auth type NONE).
 */
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../adapters/clients';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import { ALL_SCHEMES } from '../../core/schemes';
import config from '../../hookledger.config';
import { createIngestHandler } from '../../lambdas/ingest/app';
import { httpEvent, NOW, platformEvent, signedHeaders, TEST_HASH_KEY, TEST_SECRET } from '../support/factories';
import { capturingLogger } from '../support/logs';

const ddbMock = mockClient(DynamoDBDocumentClient);
afterEach(() => ddbMock.reset());

function functionUrlEvent(rawPath: string, body: string, headers: Record<string, string>, method = 'POST'): LambdaFunctionURLEvent {
  const event = {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: '',
    headers: {
      ...headers,
      host: 'abcdefghij0123456789klmnopqrstuv.lambda-url.eu-west-1.on.aws',
      'x-forwarded-proto': 'https',
      'x-forwarded-port': '443',
      'x-forwarded-for': '203.0.113.7',
    },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abcdefghij0123456789klmnopqrstuv',
      domainName: 'abcdefghij0123456789klmnopqrstuv.lambda-url.eu-west-1.on.aws',
      domainPrefix: 'abcdefghij0123456789klmnopqrstuv',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'provider/1.0' },
      requestId: '8f3a6c1e-2b4d-4e5f-9a7b-0c1d2e3f4a5b',
      routeKey: '$default',
      stage: '$default',
      time: '29/Nov/2026:12:00:00 +0000',
      timeEpoch: NOW,
    },
    body,
    // What Lambda sends for a function URL: null, where an HTTP API route gives { source }.
    pathParameters: null,
    isBase64Encoded: false,
    stageVariables: null,
  };
  // The aws-lambda types declare these fields optional, not nullable; Lambda sends null.
  return event as unknown as LambdaFunctionURLEvent;
}

function setup() {
  const { logger } = capturingLogger();
  const outcomes: [string, string | undefined][] = [];
  const handler = createIngestHandler({
    schemes: ALL_SCHEMES,
    config,
    store: intakeStore(eventStores({ client: createDocumentClient({ region: 'us-east-1' }), tableName: 'events', clock: () => NOW })),
    secrets: {
      payloadHashKey: async () => TEST_HASH_KEY,
      get: async () => ({ current: TEST_SECRET }),
      refresh: async () => ({ current: TEST_SECRET }),
    },
    logger,
    clock: () => NOW,
    onOutcome: (outcome, sourceId) => outcomes.push([outcome, sourceId]),
  });
  return { handler, outcomes };
}

const putItems = () => ddbMock.commandCalls(PutCommand).map((c) => c.args[0].input.Item as Record<string, unknown>);

describe('intake behind a function URL', () => {
  it('answers a signed function-URL event for /hooks/platform 202 with the same receipt as the HTTP API event', async () => {
    ddbMock.on(PutCommand).resolves({});
    const body = JSON.stringify(platformEvent());
    const viaApi = await setup().handler(httpEvent('platform', body, signedHeaders(body)));
    const apiItems = putItems();
    ddbMock.reset();
    ddbMock.on(PutCommand).resolves({});

    const { handler, outcomes } = setup();
    const viaUrl = await handler(functionUrlEvent('/hooks/platform', body, signedHeaders(body)));

    expect(viaUrl.statusCode).toBe(202);
    expect(JSON.parse(viaUrl.body!)).toEqual({ event_id: 'evt_01J8K7M2Q4', deliveries: 3 });
    expect(viaUrl).toEqual(viaApi);
    expect(putItems()).toEqual(apiItems);
    expect(putItems()[1]).toMatchObject({ pk: 'evt#platform#evt_01J8K7M2Q4', tenantId: 'tenant_204' });
    expect(outcomes).toEqual([['recorded', 'platform']]);
  });

  it.each([
    ['/', ''],
    ['/hooks/', ''],
    ['/hooks/billing', 'billing'],
    ['/hooks/platform/extra', ''],
    ['/other/platform', ''],
  ])('refuses %s with 404 unknown_source and stores nothing', async (rawPath, reported) => {
    const body = JSON.stringify(platformEvent());
    const { handler, outcomes } = setup();
    const res = await handler(functionUrlEvent(rawPath, body, signedHeaders(body)));
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.body!).error).toBe('unknown_source');
    expect(ddbMock.commandCalls(PutCommand)).toHaveLength(0);
    expect(outcomes).toEqual([['unknown_source', reported]]);
  });

  it('refuses a PUT to /hooks/platform with 405 Allow: POST (a function URL passes every method)', async () => {
    const body = JSON.stringify(platformEvent());
    const { handler } = setup();
    const res = await handler(functionUrlEvent('/hooks/platform', body, signedHeaders(body), 'PUT'));
    expect(res.statusCode).toBe(405);
    expect(res.headers).toMatchObject({ allow: 'POST' });
    expect(ddbMock.commandCalls(PutCommand)).toHaveLength(0);
  });
});
