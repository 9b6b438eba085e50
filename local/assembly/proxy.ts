/**
 * A loopback proxy in front of one emulator: a request signed by a function's local access key
 * (verified, callers.ts) is evaluated against that function's role (iam.ts) before it is forwarded;
 * a denied one is answered as AWS answers it (AccessDeniedException for the JSON protocols,
 * AccessDenied XML for S3) and never reaches the emulator. Requests signed with the operator's key
 * (the stack's per-start key: the CLI, the local stack's own set-up) are forwarded unchecked; any
 * other caller is refused. What is forwarded is signed again with the operator's key, the only one
 * the emulators accept: a function cannot reach an emulator but through its role.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LOCAL_REGION } from '../clients';
import { type AwsProtocol, sendAwsRefusal } from '../listener-guard';
import { signRequest } from '../sigv4';
import { identifyCaller, type KnownCallers } from './callers';
import type { AccessRequest, Authorizer, LocalPrincipal } from './iam';
import { answerJson, listenOnLoopback } from './loopback';
import { dynamoRequests, s3Requests, sqsRequests, type TableKeys } from './requests';

export type CheckedService = 'dynamodb' | 'sqs' | 's3';

export interface CheckedProxyOptions extends KnownCallers {
  readonly service: CheckedService;
  /** `http://127.0.0.1:<port>` of the emulator. */
  readonly upstream: string;
  readonly authorizer: Authorizer;
  /** By table name (DynamoDB only). */
  readonly tables?: ReadonlyMap<string, TableKeys>;
  /**
   * SQS: the emulator's queue URL prefix. Queue URLs handed to handlers name the proxy (the SDK sends
   * to the queue URL's host); requests get the emulator's prefix back, responses the proxy's.
   */
  readonly queueUrlBase?: () => string;
}

export interface CheckedProxy {
  readonly endpoint: string;
  close(): Promise<void>;
}

/** What every request of one proxy needs: its options, the emulator's URL, and its own endpoint. */
interface Proxy {
  readonly options: CheckedProxyOptions;
  readonly upstream: URL;
  /** `http://127.0.0.1:<port>` of this proxy (known once it listens). */
  readonly self: () => string;
}

export async function startCheckedProxy(options: CheckedProxyOptions): Promise<CheckedProxy> {
  const server = createServer();
  const proxy: Proxy = {
    options,
    upstream: new URL(options.upstream),
    self: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    handle(proxy, req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`local IAM proxy: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  return listenOnLoopback(server);
}

/** Identify the caller, check a function's every action against its role, then forward. */
async function handle(proxy: Proxy, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { options } = proxy;
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const url = new URL(req.url ?? '/', 'http://proxy.local');
  const caller = identifyCaller(req, body, options);
  if (!caller.ok) return sendAwsRefusal(res, protocolOf(options.service, req), caller.refusal);
  const { principal } = caller;
  if (principal) {
    for (const request of requestsOf(options, req, url, body)) {
      const decision = await options.authorizer.authorize(principal, request);
      if (!decision.allowed) return deny(options.service, res, principal, request);
    }
  }
  const base = options.queueUrlBase?.();
  if (!base) return forward(proxy, req, body, res);
  const self = proxy.self();
  const swapped = Buffer.from(body.toString('utf8').split(encodeOrNot(self, body)).join(encodeOrNot(base, body)), 'utf8');
  await forward(proxy, req, swapped, res, (text) =>
    text.split(base).join(self).split(encodeURIComponent(base)).join(encodeURIComponent(self)),
  );
}

function protocolOf(service: CheckedService, req: IncomingMessage): AwsProtocol {
  if (service === 's3') return 's3';
  return service === 'sqs' && !req.headers['x-amz-target'] ? 'query' : 'json';
}

/** The query protocol sends the URL form-encoded. */
function encodeOrNot(url: string, body: Buffer): string {
  return body.includes(encodeURIComponent(url)) ? encodeURIComponent(url) : url;
}

/** The actions (with resource and condition keys) IAM evaluates for this request. */
function requestsOf(options: CheckedProxyOptions, req: IncomingMessage, url: URL, body: Buffer): AccessRequest[] {
  const target = String(req.headers['x-amz-target'] ?? '');
  if (options.service === 's3') return s3Requests(req.method ?? 'GET', url, req.headers['x-amz-tagging'] !== undefined);
  if (options.service === 'dynamodb') return dynamoRequests(target, parseJson(body), options.tables ?? new Map());
  // SQS: the JSON protocol (X-Amz-Target AmazonSQS.<Op>) or the query protocol (Action=<Op>).
  if (target) return sqsRequests(target.split('.')[1] ?? '', parseJson(body));
  const form = new URLSearchParams(body.toString('utf8'));
  return sqsRequests(form.get('Action') ?? url.searchParams.get('Action') ?? '', Object.fromEntries(form));
}

/** AWS's answer to a call the role does not allow, in the service's protocol. */
function deny(service: CheckedService, res: ServerResponse, principal: LocalPrincipal, request: AccessRequest): void {
  const message = `User: ${principal.roleArn.replace(':role/', ':assumed-role/')}/${principal.functionId} is not authorized to perform: ${request.action} on resource: ${request.resource} because no identity-based policy allows the ${request.action} action`;
  if (service === 's3') {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>${escapeXml(message)}</Message><RequestId>local</RequestId></Error>`;
    res.writeHead(403, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) });
    res.end(xml);
    return;
  }
  answerJson(
    res,
    400,
    { __type: 'com.amazon.coral.service#AccessDeniedException', message, Message: message },
    'application/x-amz-json-1.0',
    'AccessDeniedException',
    // SQS's JSON protocol also names the query protocol's code.
    service === 'sqs' ? { 'x-amzn-query-error': 'AccessDenied;Sender' } : {},
  );
}

/** Sends `body` to the emulator signed with the operator's key, and relays its answer (rewritten, when asked). */
function forward(proxy: Proxy, req: IncomingMessage, body: Buffer, res: ServerResponse, rewrite?: (text: string) => string): Promise<void> {
  const { options, upstream } = proxy;
  return new Promise((resolve, reject) => {
    const unsigned = { ...req.headers, host: upstream.host, 'content-length': String(body.length) };
    delete unsigned['transfer-encoding'];
    const headers = signRequest({ method: req.method ?? 'GET', target: req.url ?? '/', headers: unsigned, body }, options.operator, {
      region: LOCAL_REGION,
      service: options.service,
    });
    const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) =>
      relay(answer, res, rewrite).then(resolve, reject),
    );
    out.once('error', reject);
    out.end(body);
  });
}

/** The emulator's answer to the caller: piped as it is, or read whole, rewritten and sent with its new length. */
function relay(answer: IncomingMessage, res: ServerResponse, rewrite?: (text: string) => string): Promise<void> {
  return new Promise((resolve, reject) => {
    answer.once('error', reject);
    if (!rewrite) {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.once('end', resolve);
      return;
    }
    const chunks: Buffer[] = [];
    answer.on('data', (c: Buffer) => chunks.push(c));
    answer.once('end', () => {
      const text = Buffer.from(rewrite(Buffer.concat(chunks).toString('utf8')), 'utf8');
      const outHeaders = { ...answer.headers, 'content-length': String(text.length) };
      delete outHeaders['transfer-encoding'];
      res.writeHead(answer.statusCode ?? 502, outHeaders);
      res.end(text);
      resolve();
    });
  });
}

function parseJson(body: Buffer): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8') || '{}');
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
