/**
 * One HTTP request exactly as given, with any Host, Origin or method (fetch sets Host itself and
 * sends an OPTIONS only as a browser would): what the tests of the local listeners' refusals send.
 */
import { type IncomingHttpHeaders, request } from 'node:http';

export interface RawAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export function rawRequest(
  url: string,
  options: { readonly method?: string; readonly headers?: Readonly<Record<string, string>>; readonly body?: string } = {},
): Promise<RawAnswer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const out = request(
      {
        host: target.hostname,
        port: target.port,
        method: options.method ?? 'GET',
        path: `${target.pathname}${target.search}`,
        headers: {
          ...(options.body !== undefined ? { 'content-length': String(Buffer.byteLength(options.body)) } : {}),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('error', reject);
        res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    out.once('error', reject);
    out.end(options.body);
  });
}

/** A page's form post: the Origin of the page that sent it, a form body, no credentials. */
export function formPost(url: string, fields: Readonly<Record<string, string>>, origin = 'http://evil.example'): Promise<RawAnswer> {
  return rawRequest(url, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}
