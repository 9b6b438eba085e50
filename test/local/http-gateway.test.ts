import { request } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HookledgerError } from '../../core/errors';
import { GET_ROUTE_KEY, type HttpGateway, ROUTE_KEY, startHttpGateway } from '../../local/http-gateway';

let gateway: HttpGateway;
let events: APIGatewayProxyEventV2[];
let reply: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
const errors: unknown[] = [];

beforeAll(async () => {
  gateway = await startHttpGateway({
    host: '127.0.0.1',
    port: 0,
    handler: async (event) => {
      events.push(event);
      return reply(event);
    },
    onError: (error) => errors.push(error),
  });
});

afterAll(async () => {
  await gateway?.close();
});

beforeEach(() => {
  events = [];
  reply = async () => ({ statusCode: 202, headers: { 'content-type': 'application/json' }, body: '{"status":"accepted"}' });
});

interface Sent {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** node:http rather than fetch: it can repeat a header and send arbitrary bytes. */
function send(method: string, path: string, headers: Record<string, string | string[]>, body?: Buffer): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, gateway.url);
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('HTTP gateway', () => {
  describe('POST /hooks/{source}', () => {
    it('passes a binary body that is not UTF-8 as base64, with API Gateway 2.0 fields', async () => {
      const bytes = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe, 0xc3, 0x28]);
      const response = await send(
        'POST',
        '/hooks/platform?replay=1&replay=2&note=a%20b',
        {
          'Content-Type': 'application/octet-stream',
          'Webhook-Id': 'msg_evt_01J8K7M2Q4',
          'X-Tenant': ['tenant_204', 'tenant_205'],
          Cookie: 'a=1; b=2',
        },
        bytes,
      );

      expect(response.status).toBe(202);
      expect(JSON.parse(response.body.toString())).toEqual({ status: 'accepted' });
      const [event] = events;
      expect(event).toMatchObject({
        version: '2.0',
        routeKey: 'POST /hooks/{source}',
        rawPath: '/hooks/platform',
        rawQueryString: 'replay=1&replay=2&note=a%20b',
        queryStringParameters: { replay: '1,2', note: 'a b' },
        pathParameters: { source: 'platform' },
        cookies: ['a=1', 'b=2'],
        isBase64Encoded: true,
        requestContext: {
          http: { method: 'POST', path: '/hooks/platform', sourceIp: '127.0.0.1', protocol: 'HTTP/1.1' },
          requestId: expect.any(String),
          routeKey: 'POST /hooks/{source}',
          stage: '$default',
          timeEpoch: expect.any(Number),
        },
      });
      expect(Buffer.from(event?.body ?? '', 'base64')).toEqual(bytes);
      expect(event?.headers).toMatchObject({
        'content-type': 'application/octet-stream',
        'webhook-id': 'msg_evt_01J8K7M2Q4',
        'x-tenant': 'tenant_204,tenant_205',
        'content-length': String(bytes.length),
        'x-forwarded-for': '127.0.0.1',
        'x-forwarded-proto': 'http',
      });
      expect(event?.headers).not.toHaveProperty('cookie');
      expect(Object.keys(event?.headers ?? {}).every((name) => name === name.toLowerCase())).toBe(true);
    });

    it('passes a JSON body as text', async () => {
      const json = JSON.stringify({ id: 'evt_01J8K7M2Q4', type: 'payment.succeeded', tenant_id: 'tenant_204', amount: '€12' });
      await send('POST', '/hooks/platform', { 'content-type': 'application/json; charset=utf-8' }, Buffer.from(json));

      expect(events[0]).toMatchObject({ body: json, isBase64Encoded: false });
      expect(events[0]).not.toHaveProperty('queryStringParameters');
    });

    it('uses base64 for a text content type whose bytes are not valid UTF-8', async () => {
      const bytes = Buffer.from([0x74, 0x65, 0x6e, 0x61, 0x6e, 0x74, 0xc3]);
      await send('POST', '/hooks/platform', { 'content-type': 'text/plain' }, bytes);

      expect(events[0]?.isBase64Encoded).toBe(true);
      expect(Buffer.from(events[0]?.body ?? '', 'base64')).toEqual(bytes);
    });

    it('uses base64 for form-encoded bodies, as API Gateway HTTP APIs do', async () => {
      await send('POST', '/hooks/platform', { 'content-type': 'application/x-www-form-urlencoded' }, Buffer.from('payload=%7B%7D'));

      expect(events[0]).toMatchObject({ body: Buffer.from('payload=%7B%7D').toString('base64'), isBase64Encoded: true });
    });

    it("writes the handler's status, headers and base64 body back as bytes", async () => {
      const bytes = Buffer.from([0x00, 0xff, 0x10]);
      reply = async () => ({
        statusCode: 401,
        headers: { 'content-type': 'application/octet-stream', 'x-hookledger-reason': 'signature_mismatch' },
        body: bytes.toString('base64'),
        isBase64Encoded: true,
      });
      const response = await send('POST', '/hooks/platform', { 'content-type': 'application/json' }, Buffer.from('{}'));

      expect(response.status).toBe(401);
      expect(response.headers['x-hookledger-reason']).toBe('signature_mismatch');
      expect(response.body).toEqual(bytes);
    });

    it('answers 500 like API Gateway when the handler throws', async () => {
      reply = async () => {
        throw new Error('store unavailable');
      };
      const response = await send('POST', '/hooks/platform', { 'content-type': 'application/json' }, Buffer.from('{}'));

      expect(response.status).toBe(500);
      expect(JSON.parse(response.body.toString())).toEqual({ message: 'Internal Server Error' });
      expect(errors.at(-1)).toBeInstanceOf(Error);
    });
  });

  describe('other requests', () => {
    it('hands a GET on the webhook path to the handler as GET /hooks/{source} (the handshakes), query string included', async () => {
      const response = await send('GET', '/hooks/platform?challenge=dbx_7f3a', {});

      expect(response.status).toBe(202);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        routeKey: 'GET /hooks/{source}',
        rawQueryString: 'challenge=dbx_7f3a',
        pathParameters: { source: 'platform' },
        requestContext: { http: { method: 'GET', path: '/hooks/platform' }, routeKey: 'GET /hooks/{source}' },
      });
      expect(events[0]?.body).toBeUndefined();
    });

    it.each([
      ['PUT', '/hooks/platform'],
      ['DELETE', '/hooks/platform'],
      ['GET', '/hooks'],
      ['POST', '/hooks'],
      ['POST', '/hooks/platform/extra'],
      ['POST', '/webhooks/platform'],
    ])('answers %s %s with 404 not_found without calling the handler', async (method, path) => {
      const response = await send(method, path, {});

      expect(response.status).toBe(404);
      expect(JSON.parse(response.body.toString())).toMatchObject({ error: 'not_found' });
      expect(events).toEqual([]);
    });

    it('answers 413 for a body above 10 MB without calling the handler', async () => {
      const body = Buffer.alloc(10 * 1024 * 1024 + 1, 0x61);
      const response = await send('POST', '/hooks/platform', { 'content-type': 'application/octet-stream' }, body);

      expect(response.status).toBe(413);
      expect(JSON.parse(response.body.toString())).toMatchObject({ error: 'payload_too_large' });
      expect(events).toEqual([]);
    });

    it('serves only the routes it is given: a template with just POST /hooks/{source} answers GET /hooks/platform 404', async () => {
      const seen: string[] = [];
      const postOnly = await startHttpGateway({
        port: 0,
        routeKeys: ['POST /hooks/{source}'],
        handler: async (event) => {
          seen.push(event.routeKey);
          return { statusCode: 202 };
        },
      });
      try {
        const get = await fetch(new URL('/hooks/platform?hub.challenge=c_81', postOnly.url));
        expect(get.status).toBe(404);
        const post = await fetch(new URL('/hooks/platform', postOnly.url), { method: 'POST', body: '{}' });
        expect(post.status).toBe(202);
        expect(seen).toEqual(['POST /hooks/{source}']);
      } finally {
        await postOnly.close();
      }
    });

    it('refuses a route key it cannot serve (PUT /hooks/{source}) at start with an UnservedRouteError naming it and the two it serves', async () => {
      const started = startHttpGateway({ port: 0, routeKeys: ['PUT /hooks/{source}'], handler: async () => ({ statusCode: 200 }) });
      await expect(started).rejects.toBeInstanceOf(HookledgerError);
      await expect(started).rejects.toMatchObject({
        name: 'UnservedRouteError',
        routeKey: 'PUT /hooks/{source}',
        message: expect.stringContaining('route PUT /hooks/{source} is not served by the local gateway'),
      });
      await expect(started).rejects.toThrow(`RouteKey to ${ROUTE_KEY} or ${GET_ROUTE_KEY}`);
    });

    it('answers 413 when a chunked body grows past the limit', async () => {
      const small = await startHttpGateway({ port: 0, handler: async () => ({ statusCode: 200 }), maxBodyBytes: 1024 });
      try {
        const response = await new Promise<number>((resolve, reject) => {
          const req = request(
            new URL('/hooks/platform', small.url),
            { method: 'POST', headers: { 'transfer-encoding': 'chunked' } },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on('error', reject);
          req.write(Buffer.alloc(800));
          req.write(Buffer.alloc(800));
          req.end();
        });
        expect(response).toBe(413);
      } finally {
        await small.close();
      }
    });
  });
});
