/**
 * The operator console's server: node:http on 127.0.0.1 only, the page and its bundle (built at
 * start, console/bundle.ts) and the JSON API under /api (console/api.ts).
 *
 * Security model:
 *  - Loopback only: bound to 127.0.0.1, and a request whose Host is not 127.0.0.1:<port> or
 *    localhost:<port> is refused (a DNS-rebinding page names its own host).
 *  - A random session token per start (32 bytes), required on every request, as a cookie (HttpOnly,
 *    SameSite=Strict, Path=/) or, from scripts, `x-hookledger-token`. It is never printed: the printed
 *    URL carries a one-time code (`?code=`, 32 random bytes) that the first visit exchanges for the
 *    cookie, redirected to the same page without it. The code is spent then: the link in the
 *    terminal's scroll-back or the browser's history opens nothing again (403, a page that says so and
 *    how to get a new link: `hookledger console` serves one). No token, or a wrong one: 403, nothing read.
 *  - State-changing requests (POST) also need an Origin of this server and a JSON body (403, 415
 *    otherwise): a cross-site form or fetch cannot act, even in a browser that sends the cookie.
 *  - No secret value is ever read for a page; as a last guard every response is scrubbed of
 *    anything shaped like a signing secret (`whsec_...`).
 *  - Content-Security-Policy allows this origin's script and style only: no CDN, no inline script.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, maxHeaderSize, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type ApiDeps, handleApi } from './api';
import { buildBundle, type ConsoleBundle } from './bundle';

/** The cookie's name for a console on `port`: cookies are not scoped by port, so two consoles (the local
 * stack's and a `--stack` one) must not overwrite each other's. */
export const cookieName = (port: number) => `hookledger_console_${port}`;
export const TOKEN_HEADER = 'x-hookledger-token';
/** The printed link's query parameter: a one-time sign-in code, never the session token. */
export const CODE_PARAM = 'code';
/** Bytes of the session token and of each one-time code (base64url: 43 characters). */
const SECRET_BYTES = 32;
/** What a used or unknown link's page tells the operator to run for a new one. */
const NEW_LINK_COMMAND = 'npx hookledger console';
const MAX_BODY_BYTES = 64 * 1024;
/** A signing secret's shape (Standard Webhooks' `whsec_` prefix): never sent, whatever produced it. */
const SECRET_SHAPE = /whsec_[A-Za-z0-9+/=_-]*/g;

export interface ConsoleOptions extends ApiDeps {
  /** Default 0: a free port. */
  readonly port?: number;
  /** The session token (cookie and `x-hookledger-token`). Default: 32 random bytes, base64url. */
  readonly token?: string;
  /** A line about something withheld or failed (never a secret). Default: stderr. */
  readonly warn?: (line: string) => void;
}

export interface RunningConsole {
  /** `http://127.0.0.1:<port>/?code=<one-time code>`: the URL to open, once. */
  readonly url: string;
  readonly origin: string;
  readonly port: number;
  /** The session token the cookie carries (scripts send it as `x-hookledger-token`); never printed. */
  readonly token: string;
  /** A new one-time link to this console (for a caller holding it in-process, e.g. behind a local admin hook). */
  newLink(): string;
  /** How long building the page's bundle took at start, ms. */
  readonly bundleMs: number;
  close(): Promise<void>;
}

export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const token = options.token ?? randomBytes(SECRET_BYTES).toString('base64url');
  const warn = options.warn ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const bundle = await buildBundle();
  const codes = new SignInCodes();
  let port = 0;
  const server: Server = createServer((req, res) => {
    serve(req, res, { options, token, codes, port, bundle, warn }).catch((error: unknown) => {
      warn(`console: ${req.method} ${pathOf(req)} failed: ${error instanceof Error ? error.name : 'Error'}`);
      if (!res.headersSent) send(res, 500, { error: 'internal', message: 'the console failed to answer; see its terminal' });
      else res.end();
    });
  });
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const newLink = () => `${origin}/?${CODE_PARAM}=${codes.mint()}`;
  return {
    url: newLink(),
    origin,
    port,
    token,
    newLink,
    bundleMs: bundle.buildMs,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The one-time sign-in codes this console minted, as SHA-256 digests (a lookup by digest tells a
 * timing observer nothing about a code): unused until a visit spends one, then remembered as used so
 * that the page can say the link was used rather than that it is unknown.
 */
class SignInCodes {
  private readonly unused = new Set<string>();
  private readonly used = new Set<string>();

  mint(): string {
    const code = randomBytes(SECRET_BYTES).toString('base64url');
    this.unused.add(digest(code));
    return code;
  }

  /** `ok` the first time a code is presented, `used` every time after; `unknown` for one never minted here. */
  redeem(code: string): 'ok' | 'used' | 'unknown' {
    const key = digest(code);
    if (this.unused.delete(key)) {
      this.used.add(key);
      return 'ok';
    }
    return this.used.has(key) ? 'used' : 'unknown';
  }
}

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

interface ServeContext {
  readonly options: ConsoleOptions;
  readonly token: string;
  readonly codes: SignInCodes;
  readonly port: number;
  readonly bundle: ConsoleBundle;
  readonly warn: (line: string) => void;
}

/**
 * A request node:http refused before it reached `serve`. Its own answer to one whose address and
 * headers pass `maxHeaderSize` is a bare 431 the page would show as it is; this one says what to do.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) return void socket.destroy();
  const [status, reason, body] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          {
            error: 'request_too_long',
            message: `The request is too long for the console (its address and headers pass ${Math.round(maxHeaderSize / 1024)} KB): shorten the search or the id.`,
          },
        ]
      : [400, 'Bad Request', { error: 'bad_request', message: 'the console could not read this request' }];
  const text = JSON.stringify(body);
  const headers = {
    ...SECURITY_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    connection: 'close',
  };
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n${text}`,
  );
}

const pathOf = (req: IncomingMessage) => (req.url ?? '/').split('?')[0] ?? '/';

async function serve(req: IncomingMessage, res: ServerResponse, ctx: ServeContext): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const hosts = [`127.0.0.1:${ctx.port}`, `localhost:${ctx.port}`];
  if (!hosts.includes(req.headers.host ?? '')) {
    return send(res, 403, { error: 'forbidden_host', message: `the console answers on ${hosts[0]} only` });
  }
  const presented = headerToken(req) ?? cookieToken(req, cookieName(ctx.port));
  const signedIn = presented !== undefined && sameToken(presented, ctx.token);
  const method = req.method ?? 'GET';
  const code = url.searchParams.get(CODE_PARAM);
  if (code !== null && method === 'GET') return signIn(res, url, ctx, code, signedIn);
  if (!signedIn) {
    return send(res, 403, {
      error: 'forbidden',
      message: presented
        ? `wrong console token: open a link the console printed (…/?${CODE_PARAM}=…) to sign in again (the token changes with every start)`
        : `this console needs its token: open the link it printed (…/?${CODE_PARAM}=…, good for one visit), or run \`${NEW_LINK_COMMAND}\` for a new one`,
    });
  }

  if (method === 'POST') {
    const origins = hosts.map((h) => `http://${h}`);
    if (!origins.includes(req.headers.origin ?? '')) {
      return send(res, 403, {
        error: 'forbidden_origin',
        message: `a change needs the Origin ${origins[0]} (got ${req.headers.origin ?? 'none'})`,
      });
    }
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      return send(res, 415, { error: 'unsupported_media_type', message: 'send the request body as application/json' });
    }
  } else if (method !== 'GET') {
    res.setHeader('allow', 'GET, POST');
    return send(res, 405, { error: 'method_not_allowed', message: `${method} is not used here` });
  }

  if (url.pathname.startsWith('/api/')) {
    let body: Record<string, unknown> = {};
    if (method === 'POST') {
      const parsed = await readJson(req);
      if (!parsed.ok) return send(res, 400, { error: 'bad_request', message: parsed.message });
      body = parsed.value;
    }
    const answer = await handleApi(ctx.options, { method, path: url.pathname.slice('/api'.length), query: url.searchParams, body });
    if (answer.contentType) {
      res.writeHead(answer.status, {
        ...SECURITY_HEADERS,
        'content-type': answer.contentType,
        ...(answer.filename ? { 'content-disposition': `attachment; filename="${answer.filename}"` } : {}),
      });
      res.end(scrub(String(answer.body), ctx.warn));
      return;
    }
    return send(res, answer.status, answer.body, ctx.warn);
  }
  if (method !== 'GET') return send(res, 404, { error: 'not_found', message: `no route POST ${url.pathname}` });
  if (url.pathname === '/app.js') return asset(res, 'text/javascript; charset=utf-8', ctx.bundle.js);
  if (url.pathname === '/app.css') return asset(res, 'text/css; charset=utf-8', ctx.bundle.css);
  if (url.pathname === '/' || url.pathname === '/index.html') return asset(res, 'text/html; charset=utf-8', PAGE);
  return send(res, 404, { error: 'not_found', message: `no page ${url.pathname}` });
}

/**
 * A visit with a `?code=`: the first one spends the code for the session cookie, and every visit is
 * redirected to the same page without it, so the code leaves the address bar. A spent or unknown code
 * is refused with a page saying so, unless this browser is already signed in (its cookie): then the
 * link just opens the console.
 */
function signIn(res: ServerResponse, url: URL, ctx: ServeContext, code: string, signedIn: boolean): void {
  const outcome = ctx.codes.redeem(code);
  if (outcome !== 'ok' && !signedIn) {
    refusedLink(res, outcome);
    return;
  }
  url.searchParams.delete(CODE_PARAM);
  res.writeHead(303, {
    ...SECURITY_HEADERS,
    ...(outcome === 'ok' ? { 'set-cookie': `${cookieName(ctx.port)}=${ctx.token}; HttpOnly; SameSite=Strict; Path=/` } : {}),
    location: `${url.pathname}${url.search}`,
  });
  res.end();
}

/** The page a spent or unknown link opens: what happened and how to get a new link (it names nothing of the console). */
function refusedLink(res: ServerResponse, outcome: 'used' | 'unknown'): void {
  const [title, why] =
    outcome === 'used'
      ? [
          'This console link was already used',
          'A link the console prints signs one browser in, once: opened again, from the terminal, a bookmark or the browser’s history, it opens nothing.',
        ]
      : [
          'This link is not one this console printed',
          'Every start of the console prints links of its own; one from another start opens nothing.',
        ];
  res.writeHead(403, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>hookledger console: ${title.toLowerCase()}</title></head>
<body>
<h1>${title}</h1>
<p>${why}</p>
<p>If this browser signed in with it, go back to the console’s tab. For a new link, run <code>${NEW_LINK_COMMAND}</code>
(with the same <code>--stack</code>, if you used one): it serves the console with a link that works once.</p>
</body>
</html>
`);
}

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hookledger console</title>
<link rel="stylesheet" href="/app.css">
</head>
<body>
<div id="app"><p>Loading the console…</p></div>
<script type="module" src="/app.js"></script>
</body>
</html>
`;

function asset(res: ServerResponse, contentType: string, body: string): void {
  res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': contentType });
  res.end(body);
}

function send(res: ServerResponse, status: number, body: unknown, warn?: (line: string) => void): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8' });
  res.end(scrub(JSON.stringify(body), warn));
}

/** The last guard: anything shaped like a signing secret is withheld (and said so, without it). */
export function scrub(text: string, warn?: (line: string) => void): string {
  SECRET_SHAPE.lastIndex = 0;
  if (!SECRET_SHAPE.test(text)) return text;
  warn?.('console: withheld a value shaped like a signing secret (whsec_…) from a response');
  return text.replace(SECRET_SHAPE, '[withheld]');
}

function headerToken(req: IncomingMessage): string | undefined {
  const value = req.headers[TOKEN_HEADER];
  return typeof value === 'string' ? value : undefined;
}

function cookieToken(req: IncomingMessage, cookie: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === cookie) return rest.join('=');
  }
  return undefined;
}

function sameToken(presented: string, token: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function readJson(req: IncomingMessage): Promise<{ ok: true; value: Record<string, unknown> } | { ok: false; message: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return { ok: false, message: `the request body is over ${MAX_BODY_BYTES} bytes` };
    chunks.push(chunk as Buffer);
  }
  const raw = Buffer.concat(chunks).toString('utf8');
  if (raw.trim() === '') return { ok: true, value: {} };
  try {
    const value = JSON.parse(raw) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return { ok: false, message: 'the body must be a JSON object' };
    return { ok: true, value: value as Record<string, unknown> };
  } catch {
    return { ok: false, message: 'the body is not valid JSON' };
  }
}
