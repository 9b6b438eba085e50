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
export const ARRIVAL_SEED = 42;

export interface PacedRun {
  readonly webhooks: number;
  readonly seconds: number;
  /** Webhooks per second as intake answered them (Answers). */
  readonly rate: number;
  /** Per webhook, ms from its send to its last consumer's acknowledgement. */
  readonly latenciesMs: readonly number[];
}

/**
 * When intake answered, first and last: intake answers once the event is written, so the webhooks
 * reached the stream at (count − 1) over the time between, whatever the rate asked for (a seeded draw
 * of a few hundred gaps is off it by some percent) and however late a loaded machine sent or took them.
 */
export class Answers {
  private first = Number.POSITIVE_INFINITY;
  private last = Number.NEGATIVE_INFINITY;
  private count = 0;

  answered(at: number): void {
    this.first = Math.min(this.first, at);
    this.last = Math.max(this.last, at);
    this.count += 1;
  }

  /** Webhooks per second as they reached the stream. */
  rate(): number {
    return ((this.count - 1) * 1000) / Math.max(1, this.last - this.first);
  }
}

/**
 * One webhook, answered 202. A connection the gateway closed as the request went out (a kept-alive
 * socket timing out on a loaded machine) is sent again once; a 200 then is the same webhook recorded.
 */
export async function postSigned(stack: LocalStack, request: SignedRequest, answers?: Answers): Promise<void> {
  const send = () => fetch(stack.webhookUrl(SOURCE), { method: 'POST', headers: request.headers, body: request.body });
  const res = await send().catch(() => send());
  const text = await res.text();
  if (res.status !== 202 && res.status !== 200) throw new BenchRunError(`webhook ${request.eventId} answered ${res.status}: ${text}`);
  answers?.answered(performance.now());
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
  const answers = new Answers();
  const next = seededUniform(ARRIVAL_SEED);
  const t0 = performance.now();
  let dueMs = 0;
  for (const request of requests) {
    dueMs += (-Math.log(1 - next()) * 1000) / rate;
    const wait = t0 + dueMs - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    acked.push(deliveries.allProcessed(request.eventId, consumers, ACK_TIMEOUT_MS));
    sentAt.push(performance.now());
    posts.push(postSigned(stack, request, answers));
  }
  await Promise.all(posts);
  const seconds = (performance.now() - t0) / 1000;
  const ackedAt = await Promise.all(acked);
  const count = requests.length;
  return {
    webhooks: count,
    seconds,
    rate: answers.rate(),
    latenciesMs: ackedAt.map((at, i) => at - sentAt[i]!),
  };
}
