/**
 * Sending webhooks at a steady mean rate to a local stack, each arrival independent of the others
 * (exponential gaps from a seeded generator, so every run sends at the same moments): what the cost
 * model assumes of traffic from many tenants. Used by the sections that price a steady rate
 * (bench/low-cost.ts).
 */
import type { LocalStack } from '../local/stack';
import { BenchRunError } from './errors';
import type { DeliveryTracker } from './meters';
import type { SignedRequest } from './payload';
import { seededUniform } from './stats';
import { SOURCE } from './units';

/** From a webhook's send to its last consumer's acknowledgement, at most (a shared, loaded machine is slow). */
export const ACK_TIMEOUT_MS = 180_000;

/** The arrival times' seed. */
const ARRIVAL_SEED = 42;

export interface PacedRun {
  readonly webhooks: number;
  readonly seconds: number;
  /** Webhooks per second between the first send and the last 202. */
  readonly rate: number;
  /** Per webhook, ms from its send to its last consumer's acknowledgement. */
  readonly latenciesMs: readonly number[];
}

/**
 * One webhook, answered 202. A connection the gateway closed as the request went out (a kept-alive
 * socket timing out on a loaded machine) is sent again once; a 200 then is the same webhook recorded.
 */
export async function postSigned(stack: LocalStack, request: SignedRequest): Promise<void> {
  const send = () => fetch(stack.webhookUrl(SOURCE), { method: 'POST', headers: request.headers, body: request.body });
  const res = await send().catch(() => send());
  const text = await res.text();
  if (res.status !== 202 && res.status !== 200) throw new BenchRunError(`webhook ${request.eventId} answered ${res.status}: ${text}`);
}

/**
 * `requests` at a mean `rate` per second; resolves once `consumers` consumers acknowledged each
 * (tracked by `deliveries`, the stack's onDelivery).
 */
export async function sendPaced(
  stack: LocalStack,
  deliveries: DeliveryTracker,
  consumers: number,
  requests: readonly SignedRequest[],
  rate: number,
): Promise<PacedRun> {
  const acked: Promise<number>[] = [];
  const sentAt: number[] = [];
  const posts: Promise<void>[] = [];
  const next = seededUniform(ARRIVAL_SEED);
  const t0 = performance.now();
  let dueMs = 0;
  for (const request of requests) {
    dueMs += (-Math.log(1 - next()) * 1000) / rate;
    const wait = t0 + dueMs - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    acked.push(deliveries.allProcessed(request.eventId, consumers, ACK_TIMEOUT_MS));
    sentAt.push(performance.now());
    posts.push(postSigned(stack, request));
  }
  await Promise.all(posts);
  const seconds = (performance.now() - t0) / 1000;
  const ackedAt = await Promise.all(acked);
  const count = requests.length;
  return {
    webhooks: count,
    seconds,
    // The last send's own interval counts: count arrivals over count intervals.
    rate: count / Math.max(seconds, count / rate),
    latenciesMs: ackedAt.map((at, i) => at - sentAt[i]!),
  };
}
