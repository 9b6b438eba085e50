/**
 * The local gateway standing in for intake's Lambda function URL (`functionUrl`): no routes, every
 * path and method handed to the handler with the function URL's event (payload format 2.0, route key
 * `$default`, path and stage parameters null, the URL id as `apiId`), and a function URL's 6 MB
 * request payload limit in place of the HTTP API's 10 MB: Lambda counts the event it is handed, so a
 * binary body counts base64-encoded.
 */
import { request } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES_CEILING } from '../../core/blobs';
import { FUNCTION_URL_MAX_PAYLOAD } from '../../local/function-url';
import { type HttpGateway, startHttpGateway } from '../../local/http-gateway';

const URL_ID = 'k3q7yx2m4n8p1r5t6v9w0zab1c2d3e4f';
let gateway: HttpGateway;
let events: APIGatewayProxyEventV2[];
let reply: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

beforeAll(async () => {
  gateway = await startHttpGateway({
    port: 0,
    functionUrl: { urlId: URL_ID },
    handler: async (event) => {
      events.push(event);
      return reply(event);
    },
  });
});
afterAll(async () => {
  await gateway?.close();
});
beforeEach(() => {
  events = [];
  reply = async (event) => ({ statusCode: 418, headers: { 'x-seen': event.rawPath }, body: '{}' });
});

/** node:http rather than fetch: it sends a path as written (`//elsewhere/...`) and any method. */
function send(method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(gateway.url);
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the local gateway in front of a function URL', () => {
  it.each([
    ['PUT', '/hooks/platform'],
    ['DELETE', '/hooks/platform'],
    ['POST', '/nope'],
    ['GET', '/'],
    ['POST', '/hooks/platform/extra'],
    ['OPTIONS', '/hooks/platform'],
  ])("hands %s %s to the handler and writes back the handler's answer", async (method, path) => {
    const response = await send(method, path, {});

    expect(response.status).toBe(418);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ rawPath: path, requestContext: { http: { method, path } } });
  });

  it("builds the function URL's event: $default, path parameters and stage variables null, an anonymous caller, the URL id", async () => {
    await send('POST', '/hooks/platform?replay=1', { 'content-type': 'application/json' }, Buffer.from('{"id":"evt_01J8K7M2Q4"}'));

    expect(events[0]).toEqual(
      expect.objectContaining({
        version: '2.0',
        routeKey: '$default',
        rawPath: '/hooks/platform',
        rawQueryString: 'replay=1',
        queryStringParameters: { replay: '1' },
        pathParameters: null,
        stageVariables: null,
        body: '{"id":"evt_01J8K7M2Q4"}',
        isBase64Encoded: false,
      }),
    );
    expect(events[0]?.requestContext).toMatchObject({
      accountId: 'anonymous',
      apiId: URL_ID,
      routeKey: '$default',
      stage: '$default',
      http: { method: 'POST', path: '/hooks/platform', sourceIp: '127.0.0.1' },
    });
  });

  it('keeps the path as the client sent it: //elsewhere/hooks/platform is not read as /hooks/platform', async () => {
    await send('POST', '//elsewhere/hooks/platform', {});

    expect(events[0]?.rawPath).toBe('//elsewhere/hooks/platform');
  });

  it('answers 413 for a body above the 6 MB payload limit without calling the handler', async () => {
    const body = Buffer.alloc(FUNCTION_URL_MAX_PAYLOAD + 1, 0x61);
    const response = await send('POST', '/hooks/platform', { 'content-type': 'application/json' }, body);

    expect(FUNCTION_URL_MAX_PAYLOAD).toBe(6 * 1024 * 1024);
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toMatchObject({ error: 'payload_too_large' });
    expect(events).toEqual([]);
  });

  it('answers 413 for a binary body under 6 MB whose base64 event is over it, without calling the handler', async () => {
    const body = Buffer.alloc(5 * 1024 * 1024, 0xff);
    const response = await send('POST', '/hooks/platform', { 'content-type': 'application/octet-stream' }, body);

    expect(response.status).toBe(413);
    expect(events).toEqual([]);
  });

  it("hands the handler a binary body at every source's ceiling (4 MiB), so intake answers within-limit sizes itself", async () => {
    const body = Buffer.alloc(MAX_BODY_BYTES_CEILING + 1, 0xff);
    const response = await send('POST', '/hooks/platform', { 'content-type': 'application/octet-stream' }, body);

    expect(response.status).toBe(418);
    expect(events).toHaveLength(1);
    expect(events[0]?.isBase64Encoded).toBe(true);
  });
});
