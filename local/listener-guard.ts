/**
 * What every local listener that holds data or changes state checks before anything else (the admin
 * endpoint, fauxqs's SQS, SNS and S3, the assembly's IAM proxies and its Secrets Manager and Lambda
 * endpoints; DynamoDB Local makes the same checks in LoopbackDynamoDBLocal.java), and its refusals in
 * each protocol's own shape:
 *
 *  - Host is the listener's own loopback name, 127.0.0.1:<port> or localhost:<port>: a page that
 *    rebinds its host name to 127.0.0.1 still sends its own name (as console/server.ts checks).
 *  - No Origin header, and no CORS preflight: browsers send an Origin with every cross-origin request
 *    (and every POST); this machine's tools (the SDK, the CLI, curl) send none.
 *  - A credential a page cannot have: a SigV4 signature by a key the listener accepts, verified
 *    (local/sigv4.ts; a form post or a fetch without CORS cannot set Authorization), or for the
 *    admin endpoint its bearer token. Both come from the per-start credential (local/credentials.ts).
 *
 * The webhook gateway (local/http-gateway.ts) is not guarded: providers post to it, and intake
 * verifies each request's signature itself.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type HeaderMap, headerValue, type SignatureFailure, verifySignature, type WireRequest } from './sigv4';

export type RefusalReason = 'foreign_host' | 'origin' | SignatureFailure;

export interface Refusal {
  readonly reason: RefusalReason;
  /** Says what to do; never a secret (a foreign Host or Origin is quoted, escaped where it is rendered). */
  readonly message: string;
}

/** The names a listener on `port` answers to. */
export function loopbackHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}

/** A request from a browser page or for another host name: refused whatever it carries. */
export function browserRefusal(method: string, headers: HeaderMap, port: number): Refusal | undefined {
  const hosts = loopbackHosts(port);
  const host = headerValue(headers, 'host') ?? '';
  if (!hosts.includes(host.toLowerCase())) {
    return { reason: 'foreign_host', message: `this local listener answers to ${hosts.join(' or ')} only, not to Host "${host}"` };
  }
  const origin = headerValue(headers, 'origin');
  if (origin !== undefined || method === 'OPTIONS') {
    return {
      reason: 'origin',
      message: `requests from a web page (Origin "${origin ?? 'none'}"${method === 'OPTIONS' ? ', a CORS preflight' : ''}) are refused: the local stack answers this machine's tools only`,
    };
  }
  return undefined;
}

export type CallerCheck = { readonly ok: true; readonly accessKeyId: string } | { readonly ok: false; readonly refusal: Refusal };

/**
 * The browser checks, then the request's SigV4 signature by a key this listener accepts (`secretOf`
 * gives a key's secret, undefined for any other key).
 */
export function checkSignedCaller(
  request: WireRequest,
  port: number,
  secretOf: (accessKeyId: string) => string | undefined,
  now = Date.now(),
): CallerCheck {
  const browser = browserRefusal(request.method, request.headers, port);
  if (browser) return { ok: false, refusal: browser };
  const verdict = verifySignature(request, secretOf, now);
  if (verdict.ok) return { ok: true, accessKeyId: verdict.accessKeyId };
  return { ok: false, refusal: { reason: verdict.reason, message: SIGNATURE_MESSAGES[verdict.reason](verdict.accessKeyId) } };
}

const SIGNATURE_MESSAGES: Record<SignatureFailure, (accessKeyId?: string) => string> = {
  missing: () =>
    "Request is missing Authentication Token: sign it with the local stack's per-start key (the CLI reads it from the credentials file beside .hookledger/state.json)",
  malformed: () =>
    'the Authorization header is not a SigV4 header signature (AWS4-HMAC-SHA256 Credential=…, SignedHeaders=… with host, Signature=…) with its X-Amz-Date',
  unknown_key: (id) =>
    `The security token included in the request is invalid: access key ${id ?? '?'} is not one this local stack accepts (its key changes with every start)`,
  expired: () => "Signature expired: X-Amz-Date is more than 15 minutes from this machine's clock",
  bad_signature: () =>
    'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
};

/** How a protocol's clients read an error: JSON (`__type`), the query protocol's XML, S3's XML, or Lambda's REST JSON. */
export type AwsProtocol = 'json' | 'query' | 's3' | 'rest-json';

/** Each refusal's code in each protocol, as AWS names it (the SDK makes the error's `name` of it). */
const CODES: Record<RefusalReason, { readonly json: string; readonly query: string; readonly s3: string }> = {
  foreign_host: { json: 'AccessDeniedException', query: 'AccessDenied', s3: 'AccessDenied' },
  origin: { json: 'AccessDeniedException', query: 'AccessDenied', s3: 'AccessDenied' },
  missing: { json: 'MissingAuthenticationTokenException', query: 'MissingAuthenticationToken', s3: 'AccessDenied' },
  malformed: { json: 'IncompleteSignatureException', query: 'IncompleteSignature', s3: 'AuthorizationHeaderMalformed' },
  unknown_key: { json: 'UnrecognizedClientException', query: 'InvalidClientTokenId', s3: 'InvalidAccessKeyId' },
  expired: { json: 'InvalidSignatureException', query: 'RequestExpired', s3: 'RequestTimeTooSkewed' },
  bad_signature: { json: 'InvalidSignatureException', query: 'SignatureDoesNotMatch', s3: 'SignatureDoesNotMatch' },
};

export interface AwsAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** A refusal as the protocol's error (403). */
export function awsRefusal(protocol: AwsProtocol, refusal: Refusal): AwsAnswer {
  const codes = CODES[refusal.reason];
  if (protocol === 's3') {
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${codes.s3}</Code><Message>${escapeXml(refusal.message)}</Message><RequestId>local</RequestId></Error>`;
    return { status: 403, headers: { 'content-type': 'application/xml' }, body };
  }
  if (protocol === 'query') {
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n<ErrorResponse><Error><Type>Sender</Type><Code>${codes.query}</Code><Message>${escapeXml(refusal.message)}</Message></Error><RequestId>local</RequestId></ErrorResponse>`;
    return { status: 403, headers: { 'content-type': 'text/xml' }, body };
  }
  if (protocol === 'rest-json') {
    return {
      status: 403,
      headers: { 'content-type': 'application/json', 'x-amzn-errortype': codes.json },
      body: JSON.stringify({ Type: 'User', message: refusal.message }),
    };
  }
  return {
    status: 403,
    // SQS's JSON protocol names its query protocol's code too (the SDK makes the error of that); others ignore it.
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amzn-errortype': codes.json,
      'x-amzn-query-error': `${codes.query};Sender`,
    },
    body: JSON.stringify({ __type: `com.amazon.coral.service#${codes.json}`, message: refusal.message }),
  };
}

export function sendAwsRefusal(res: ServerResponse, protocol: AwsProtocol, refusal: Refusal): void {
  const answer = awsRefusal(protocol, refusal);
  res.writeHead(answer.status, { ...answer.headers, 'content-length': String(Buffer.byteLength(answer.body)) });
  res.end(answer.body);
}

/** The port a request arrived on: the one its Host must name. */
export function localPortOf(req: IncomingMessage): number {
  return req.socket.localPort ?? 0;
}

/** `Authorization: Bearer <token>` equal to `token` (compared in constant time). */
export function hasBearerToken(headers: HeaderMap, token: string): boolean {
  const presented = /^Bearer (\S+)$/.exec(headerValue(headers, 'authorization') ?? '')?.[1];
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
