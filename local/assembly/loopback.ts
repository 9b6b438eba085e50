/**
 * The assembly's local endpoints (the IAM-checked proxies, the Secrets Manager and Lambda endpoints)
 * listen on a free loopback port, close once, open connections included, and answer in AWS's JSON
 * protocols.
 */
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackEndpoint {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  close(): Promise<void>;
}

export async function listenOnLoopback(server: Server): Promise<LoopbackEndpoint> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

/**
 * An answer in one of AWS's JSON protocols: the body as JSON with the service's own content type
 * (`application/x-amz-json-1.0` for SQS, `1.1` for Secrets Manager, plain JSON for Lambda's REST
 * API) and, for an error, the `x-amzn-errortype` header the SDKs read the error's name from.
 */
export function answerJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  contentType: string,
  errorType?: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(json),
    ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
    ...headers,
  });
  res.end(json);
}
