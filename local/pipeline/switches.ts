/**
 * Which consumers run and which are paused: `hookledger pause`, the admin endpoint, the Lambda
 * endpoint's UpdateEventSourceMapping and an HTTP consumer's circuit breaker all come here. It
 * exists before any function is built, so a breaker that opens at any moment (the start-up's
 * first batches included) has somewhere to go: a consumer paused before its poller exists starts
 * paused; one paused later has its poller paused.
 */
import type { SqsPoller } from '../sqs-poller';
import { UnknownConsumerError } from './errors';

export class ConsumerSwitches {
  private readonly pausedIds: Set<string>;
  private readonly pollers = new Map<string, SqsPoller>();

  constructor(
    private readonly consumers: readonly string[],
    pausedAtStart: readonly string[] = [],
  ) {
    for (const id of pausedAtStart) this.require(id);
    this.pausedIds = new Set(pausedAtStart);
  }

  get consumerIds(): readonly string[] {
    return this.consumers;
  }

  /** Resolves once the consumer's batches in flight have finished. */
  async pause(consumerId: string): Promise<void> {
    this.require(consumerId);
    this.pausedIds.add(consumerId);
    await this.pollers.get(consumerId)?.pause();
  }

  resume(consumerId: string): void {
    this.require(consumerId);
    this.pausedIds.delete(consumerId);
    this.pollers.get(consumerId)?.resume();
  }

  isPaused(consumerId: string): boolean {
    return this.pausedIds.has(consumerId);
  }

  paused(): string[] {
    return [...this.pausedIds].sort();
  }

  /** The running ones (not paused). */
  running(): string[] {
    return this.consumers.filter((id) => !this.pausedIds.has(id));
  }

  /** Gives the consumer its (new) poller and starts it unless the consumer is paused. */
  attach(consumerId: string, poller: SqsPoller): void {
    this.pollers.set(consumerId, poller);
    if (!this.pausedIds.has(consumerId)) poller.start();
  }

  /** Takes every poller back (they are single-use: stop them), leaving the paused set as it is. */
  detachAll(): SqsPoller[] {
    const all = [...this.pollers.values()];
    this.pollers.clear();
    return all;
  }

  private require(consumerId: string): void {
    if (!this.consumers.includes(consumerId)) throw new UnknownConsumerError(consumerId, this.consumers);
  }
}
