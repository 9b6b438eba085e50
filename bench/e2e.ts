/**
 * Section 4: end-to-end latency, from the start of the POST to the last consumer's acknowledgement
 * (the stack's onDelivery callback, called right after the consumer batch that wrote the ledger ack).
 */
import type { LocalStack } from '../local/stack';
import type { DeliveryTracker } from './meters';
import { paymentEvent, signRequest } from './payload';
import { percentile } from './stats';
import { post } from './units';

export interface EndToEndResult {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly samples: number;
  readonly spacingMs: number;
}

export async function endToEnd(
  stack: LocalStack,
  deliveries: DeliveryTracker,
  secret: string,
  runId: string,
  options: { samples: number; spacingMs: number; consumers: number },
): Promise<EndToEndResult> {
  await stack.drain();
  const latencies: number[] = [];
  const runs: Promise<void>[] = [];
  for (let i = 0; i < options.samples; i++) {
    const { eventId, body } = paymentEvent(i, runId);
    const request = signRequest(secret, eventId, body);
    const acked = deliveries.allProcessed(eventId, options.consumers);
    const sentAt = performance.now();
    runs.push(
      post(stack, request).then(async () => {
        latencies.push((await acked) - sentAt);
      }),
    );
    await new Promise((r) => setTimeout(r, options.spacingMs));
  }
  await Promise.all(runs);
  await stack.drain();
  return {
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: Math.max(...latencies),
    samples: latencies.length,
    spacingMs: options.spacingMs,
  };
}
