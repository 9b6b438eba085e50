/**
 * The local stack's loopback admin endpoint: `GET /consumers`, `GET /intake` (outcome counts, and
 * verification failures per source and minute) and `POST /consumers/<id>/pause|resume`, which the
 * CLI's pause control calls for a local target.
 * Every request needs the per-start admin token (`Authorization: Bearer …`, local/credentials.ts;
 * the CLI reads it from the credentials file beside the state file) and this listener's own Host,
 * and none may carry an Origin (local/listener-guard.ts): a web page cannot pause a consumer.
 */
import { createServer, type Server } from 'node:http';
import type { SignatureFailureCounts } from '../core/metrics';
import { browserRefusal, hasBearerToken, localPortOf } from './listener-guard';

/** What the admin endpoint can see and do (the running stack provides it). */
export interface AdminControl {
  pause(id: string): Promise<void>;
  resume(id: string): void;
  paused(): string[];
  intakeOutcomes(): Record<string, number>;
  /** Intake's verification failures per source and minute: the local SignatureFailures rules read them. */
  signatureFailures(): SignatureFailureCounts;
  consumers: string[];
}

/** Loopback admin endpoint the CLI uses to pause and resume one consumer's processing. */
export async function startAdminServer(
  control: AdminControl,
  options: { readonly token: string },
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    const refusal = browserRefusal(req.method ?? 'GET', req.headers, localPortOf(req));
    if (refusal) return send(403, { error: refusal.reason === 'origin' ? 'forbidden_origin' : 'forbidden_host', message: refusal.message });
    if (!hasBearerToken(req.headers, options.token)) {
      return send(401, {
        error: 'unauthorized',
        message:
          "send the local stack's admin token as `Authorization: Bearer <token>` (it is in the credentials file beside the state file, and changes with every start)",
      });
    }
    const match = /^\/consumers\/([a-z0-9-]+)\/(pause|resume)$/.exec(req.url ?? '');
    if (req.method === 'GET' && req.url === '/consumers') return send(200, { consumers: control.consumers, paused: control.paused() });
    if (req.method === 'GET' && req.url === '/intake') {
      return send(200, { outcomes: control.intakeOutcomes(), signatureFailures: control.signatureFailures() });
    }
    if (req.method !== 'POST' || !match)
      return send(404, { error: 'not_found', message: 'use GET /consumers, GET /intake or POST /consumers/<id>/pause|resume' });
    const [, id, action] = match as unknown as [string, string, 'pause' | 'resume'];
    if (!control.consumers.includes(id)) return send(404, { error: 'unknown_consumer', message: `no consumer "${id}"` });
    const done = () => send(200, { consumer: id, paused: control.paused().includes(id) });
    if (action === 'pause') control.pause(id).then(done, (e: Error) => send(500, { error: 'pause_failed', message: e.message }));
    else {
      control.resume(id);
      done();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { server, url: `http://127.0.0.1:${port}` };
}
