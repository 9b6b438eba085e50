/**
 * The intake load generator, run in its own process by bench/intake.ts so that it does not share an
 * event loop with the stack: `node --import tsx bench/load.ts <job.json>`. Every request gets the next
 * pre-signed body (each webhook distinct, so each is a real first delivery). Prints one JSON line.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { SignedRequest } from './payload';

interface Job {
  readonly url: string;
  readonly connections: number;
  readonly amount: number;
  readonly requests: SignedRequest[];
}

const job = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Job;
let next = 0;
const result = await autocannon({
  url: job.url,
  method: 'POST',
  connections: job.connections,
  amount: job.amount,
  timeout: 30,
  requests: [
    {
      setupRequest: (request) => {
        const signed = job.requests[next++ % job.requests.length]!;
        return { ...request, method: 'POST', headers: signed.headers, body: signed.body };
      },
    },
  ],
});
console.log(
  JSON.stringify({
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    requests: result.requests.total,
    seconds: result.duration,
    rps: result.requests.total / result.duration,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count])),
    bodiesUsed: next,
  }),
);
