/**
 * A stand-in for what is in front of intake. By default the API Gateway HTTP API: two routes on one
 * path, `POST /hooks/{source}` (webhooks) and `GET /hooks/{source}` (the GET handshakes of Meta,
 * Dropbox and Okta; intake answers 405 for every other source), each turned into a
 * payload-format-2.0 event for the handler, and the handler's result written back. With
 * `functionUrl`, intake's Lambda function URL (`intake.endpoint: 'function-url'`, ./function-url.ts):
 * no routes, every path and method handed over with the function URL's event, so the 404s and 405s
 * are the handler's own.
 *
 * Kept from API Gateway: header names lower-cased with repeated values joined by ','; cookies moved
 * to `cookies`; X-Forwarded-* added; the body as text only for text and JSON content types and
 * otherwise base64 (`isBase64Encoded: true`), always base64 when the bytes are not valid UTF-8;
 * 404 for any other route, 413 above 10 MB (6 MB of event behind a function URL), 500 when the
 * handler throws.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { HookledgerError } from '../core/errors';
import { asFunctionUrlEvent, FUNCTION_URL_MAX_PAYLOAD } from './function-url';
import { describe } from './support';

export type HttpHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

interface GatewayOptions {
  /** Loopback only. Default '127.0.0.1'. */
  readonly host?: '127.0.0.1';
  /** 0 lets the OS choose. */
  readonly port: number;
  readonly handler: HttpHandler;
  /**
   * Default 10 MiB, API Gateway's payload limit; with `functionUrl`, 6 MiB (FUNCTION_URL_MAX_PAYLOAD),
   * Lambda's, which the event handed over is held to as well.
   */
  readonly maxBodyBytes?: number;
  /** Called when the handler throws (the client gets a 500). Default console.error of the message. */
  readonly onError?: (error: unknown) => void;
}

/** In front of the HTTP API's routes (the default), or of a function URL. */
type FrontOptions =
  | {
      /**
       * The routes served, as API Gateway route keys (the assembly's AWS::ApiGatewayV2::Route); any
       * other method answers 404. Default: both, ROUTE_KEY and GET_ROUTE_KEY.
       */
      readonly routeKeys?: readonly string[];
      readonly functionUrl?: undefined;
    }
  | {
      /** Intake's function URL, whose id its events carry as `requestContext.apiId`. */
      readonly functionUrl: { readonly urlId: string };
      readonly routeKeys?: undefined;
    };

export type HttpGatewayOptions = GatewayOptions & FrontOptions;

export interface HttpGateway {
  /** `http://127.0.0.1:<port>`; webhooks go to `${url}/hooks/<source>`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export const ROUTE_KEY = 'POST /hooks/{source}';
/** The GET handshakes' route (lib/constructs/ingest-api.ts routes the same). */
export const GET_ROUTE_KEY = 'GET /hooks/{source}';
const ROUTE = /^\/hooks\/([^/]+)$/;
/** API Gateway's payload limit: above every source's `maxBodyBytes` (MAX_BODY_BYTES_CEILING, 4 MiB), so intake answers those 413s itself, naming the limit. */
export const DEFAULT_MAX_BODY = 10 * 1024 * 1024;

/**
 * A route key the gateway was asked to serve and cannot: it turns only intake's two routes into
 * events. Raised at start, before anything listens.
 */
export class UnservedRouteError extends HookledgerError {
  override readonly name = 'UnservedRouteError';
  constructor(readonly routeKey: string) {
    super(
      `route ${routeKey} is not served by the local gateway, which serves ${ROUTE_KEY} and ${GET_ROUTE_KEY} only; ` +
        `change the route's RouteKey to ${ROUTE_KEY} or ${GET_ROUTE_KEY}, or leave it to API Gateway on AWS`,
    );
  }
}

/** The HTTP methods of the route keys, each one the gateway serves. */
function servedMethods(routeKeys: readonly string[]): Set<string> {
  return new Set(
    routeKeys.map((key) => {
      if (key !== ROUTE_KEY && key !== GET_ROUTE_KEY) throw new UnservedRouteError(key);
      return key.split(' ')[0] as string;
    }),
  );
}

/**
 * What serving a request needs: the handler, what is in front of it (the methods routed on the
 * webhook path, or the function URL's id), the body limit, where failures go.
 */
interface Routes {
  readonly handler: HttpHandler;
  readonly front: { readonly methods: ReadonlySet<string> } | { readonly urlId: string };
  readonly maxBodyBytes: number;
  readonly onError: (error: unknown) => void;
}

export async function startHttpGateway(options: HttpGatewayOptions): Promise<HttpGateway> {
  const host = options.host ?? '127.0.0.1';
  const { functionUrl } = options;
  const routes: Routes = {
    handler: options.handler,
    front: functionUrl ? { urlId: functionUrl.urlId } : { methods: servedMethods(options.routeKeys ?? [ROUTE_KEY, GET_ROUTE_KEY]) },
    maxBodyBytes: options.maxBodyBytes ?? (functionUrl ? FUNCTION_URL_MAX_PAYLOAD : DEFAULT_MAX_BODY),
    onError: options.onError ?? ((error: unknown) => console.error('[http-gateway] handler failed:', describe(error))),
  };
  const server = createServer((req, res) => {
    serve(routes, req, res).catch((error: unknown) => {
      routes.onError(error);
      if (!res.headersSent) sendJson(res, 500, { message: 'Internal Server Error' });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      (closed ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      })),
  };
}

/** Route, bound the body, call the handler with the 2.0 event, write its result (500 when it throws). */
async function serve(routes: Routes, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = requestUrl(req);
  const route = routeOf(routes, req.method ?? '', url);
  if (!route) {
    req.resume();
    sendJson(res, 404, { error: 'not_found', message: 'Not Found' });
    return;
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  const body = declared > routes.maxBodyBytes ? undefined : await readBody(req, routes.maxBodyBytes);
  const event = body === undefined ? undefined : eventOf(routes, toEvent(req, url, route, body));
  if (event === undefined) {
    tooLarge(req, res);
    return;
  }
  let result: APIGatewayProxyStructuredResultV2;
  try {
    result = await routes.handler(event);
  } catch (error) {
    routes.onError(error);
    sendJson(res, 500, { message: 'Internal Server Error' });
    return;
  }
  writeResult(res, result);
}

/**
 * The request target as sent: its path is `rawPath` whatever it holds (`//x/hooks/a` is that path,
 * not host x's `/hooks/a`); an absolute-form target is read as a URL.
 */
function requestUrl(req: IncomingMessage): URL {
  const target = req.url ?? '/';
  return new URL(target.startsWith('/') ? `http://gateway.local${target}` : target, 'http://gateway.local');
}

/** The route key and path parameters a request is handed over with. */
interface Route {
  readonly routeKey: string;
  readonly pathParameters?: { readonly source: string };
}

/** The HTTP API's route the request matches (undefined: none, 404); behind a function URL, every request's `$default`. */
function routeOf(routes: Routes, method: string, url: URL): Route | undefined {
  if ('urlId' in routes.front) return { routeKey: '$default' };
  const match = ROUTE.exec(url.pathname);
  if (!match || !routes.front.methods.has(method)) return undefined;
  return { routeKey: method === 'GET' ? GET_ROUTE_KEY : ROUTE_KEY, pathParameters: { source: decodePathSegment(match[1] as string) } };
}

/**
 * The event the handler is handed: the HTTP API's as built, or the function URL's, which Lambda holds
 * to its request payload limit (undefined above it: 413). The HTTP API's limit is on the body alone.
 */
function eventOf(routes: Routes, event: APIGatewayProxyEventV2): APIGatewayProxyEventV2 | undefined {
  if (!('urlId' in routes.front)) return event;
  const urlEvent = asFunctionUrlEvent(event, routes.front.urlId);
  if (Buffer.byteLength(JSON.stringify(urlEvent)) > routes.maxBodyBytes) return undefined;
  // Intake's handler is typed on the aws-lambda declaration, which has no null path parameters.
  return urlEvent as unknown as APIGatewayProxyEventV2;
}

/** Reads the body; undefined once it passes the limit. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.once('error', reject);
  });
}

function tooLarge(req: IncomingMessage, res: ServerResponse): void {
  // Answer at once, discard the rest of the upload (cutting it off makes clients see a reset
  // instead of the 413) and close the connection afterwards.
  res.setHeader('connection', 'close');
  sendJson(res, 413, { error: 'payload_too_large', message: 'Request Entity Too Large' });
  req.resume();
}

function toEvent(req: IncomingMessage, url: URL, route: Route, body: Buffer): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] as string).toLowerCase();
    const value = req.rawHeaders[i + 1] as string;
    if (name === 'cookie') {
      cookies.push(
        ...value
          .split(';')
          .map((c) => c.trim())
          .filter((c) => c !== ''),
      );
      continue;
    }
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  const sourceIp = req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1';
  headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${headers['x-forwarded-for']}, ${sourceIp}` : sourceIp;
  headers['x-forwarded-proto'] = 'http';
  headers['x-forwarded-port'] = String(req.socket.localPort ?? '');
  const requestId = randomBytes(10).toString('base64');
  headers['x-amzn-trace-id'] ??= `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;

  const rawQueryString = url.search.startsWith('?') ? url.search.slice(1) : '';
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) query[key] = query[key] === undefined ? value : `${query[key]},${value}`;

  const method = req.method ?? 'GET';
  const { routeKey } = route;
  const now = new Date();
  const domainName = headers.host ?? '127.0.0.1';
  const encoded = encodeBody(body, headers['content-type']);
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString,
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName,
      domainPrefix: domainName.split('.')[0] ?? domainName,
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey,
      stage: '$default',
      time: formatClf(now),
      timeEpoch: now.getTime(),
    },
    ...(route.pathParameters ? { pathParameters: route.pathParameters } : {}),
    ...encoded,
  };
}

const TEXT_TYPES = /^(text\/[^;]+|application\/([a-z0-9.+-]+\+)?(json|xml|javascript))\s*(;|$)/i;

function encodeBody(body: Buffer, contentType: string | undefined): { body?: string; isBase64Encoded: boolean } {
  if (body.length === 0) return { isBase64Encoded: false };
  const text = contentType !== undefined && TEXT_TYPES.test(contentType.trim());
  if (text && isValidUtf8(body)) return { body: body.toString('utf8'), isBase64Encoded: false };
  return { body: body.toString('base64'), isBase64Encoded: true };
}

function isValidUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function writeResult(res: ServerResponse, result: APIGatewayProxyStructuredResultV2): void {
  res.statusCode = result.statusCode ?? 200;
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, String(value));
  if (result.cookies && result.cookies.length > 0) res.setHeader('set-cookie', result.cookies);
  if (result.body === undefined) {
    res.end();
    return;
  }
  const bytes = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body, 'utf8');
  if (!res.hasHeader('content-type')) res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', bytes.length);
  res.end(bytes);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length });
  res.end(bytes);
}

/** API Gateway's `requestContext.time`: `29/Nov/2026:22:16:10 +0000`. */
function formatClf(date: Date): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${months[date.getUTCMonth()]}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(
    date.getUTCMinutes(),
  )}:${pad(date.getUTCSeconds())} +0000`;
}
