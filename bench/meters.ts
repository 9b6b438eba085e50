/**
 * What the bench counts, and how:
 *  - DynamoDB units: the adapters' `onCapacity` hook (ReturnConsumedCapacity TOTAL on every call).
 *  - SQS requests: every SQSClient in the process (the stack's, and the pollers' own client) by
 *    wrapping SQSClient.prototype.send, by command name; a ReceiveMessage is "empty" or not by its result.
 *  - Lambda invocations: ingest = HTTP requests sent through the gateway (API Gateway invokes once per
 *    request); fan-out and consumers = calls of the handler functions the pollers invoke (wrapped, see
 *    `countInvocations`).
 *  - Deliveries: the stack's `onDelivery` callback, to know when all consumers have acknowledged.
 *  - Log bytes: the handlers' own loggers (Powertools, INFO, as deployed) write their JSON lines to
 *    the process's stdout/stderr; `LogMeter` counts the bytes of those lines and keeps them off the
 *    terminal. Lambda's platform lines and the API access log are not written locally (ops/cost-model.ts
 *    prices them from bench/prices.json).
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { FanoutHandler } from '../lambdas/fanout/app';
import type { ConsumerLambdaHandler } from '../lambdas/runtime/runtime';
import { createLogger } from '../lambdas/shared/logger';
import type { DeliveryProgress, LocalStack } from '../local/stack';
import { BenchRunError } from './errors';

/** The meters a bench run installs on the local stack (installedMeters), read by each section. */
export interface Meters {
  readonly capacity: CapacityMeter;
  readonly sqs: SqsMeter;
  readonly invocations: InvocationMeter;
  readonly deliveries: DeliveryTracker;
  readonly logs: LogMeter;
}

export class CapacityMeter {
  writeUnits = 0;
  readUnits = 0;
  readonly byOperation = new Map<string, { calls: number; writeUnits: number; readUnits: number }>();

  readonly observe = (operation: string, writeUnits: number, readUnits: number): void => {
    this.writeUnits += writeUnits;
    this.readUnits += readUnits;
    const op = this.byOperation.get(operation) ?? { calls: 0, writeUnits: 0, readUnits: 0 };
    op.calls += 1;
    op.writeUnits += writeUnits;
    op.readUnits += readUnits;
    this.byOperation.set(operation, op);
  };

  reset(): void {
    this.writeUnits = 0;
    this.readUnits = 0;
    this.byOperation.clear();
  }
}

/** SQS request names billed per webhook (everything a message's life costs). */
const BILLED = new Set([
  'SendMessageCommand',
  'SendMessageBatchCommand',
  'ReceiveMessageCommand',
  'DeleteMessageCommand',
  'DeleteMessageBatchCommand',
  'ChangeMessageVisibilityCommand',
  'ChangeMessageVisibilityBatchCommand',
]);

/** S3 requests by command (PutObject, GetObject), from every S3 client in this process: the payload bucket's. */
export class S3Meter {
  readonly byCommand = new Map<string, number>();

  /** Wraps S3Client.prototype.send once. */
  install(): void {
    const original = S3Client.prototype.send as (this: S3Client, command: unknown, ...rest: unknown[]) => Promise<unknown>;
    const meter = this;
    (S3Client.prototype as unknown as { send: typeof original }).send = function (this: S3Client, command: unknown, ...rest: unknown[]) {
      const name = (command as object).constructor.name.replace(/Command$/, '');
      meter.byCommand.set(name, (meter.byCommand.get(name) ?? 0) + 1);
      return original.call(this, command, ...rest);
    };
  }

  count(name: 'PutObject' | 'GetObject'): number {
    return this.byCommand.get(name) ?? 0;
  }

  reset(): void {
    this.byCommand.clear();
  }
}

export class SqsMeter {
  readonly byCommand = new Map<string, number>();
  emptyReceives = 0;
  messagesSent = 0;
  messagesReceived = 0;

  /** Wraps SQSClient.prototype.send once; counts every SQS client in this process. */
  install(): void {
    const original = SQSClient.prototype.send as (this: SQSClient, command: unknown, ...rest: unknown[]) => Promise<unknown>;
    const meter = this;
    (SQSClient.prototype as unknown as { send: typeof original }).send = function (this: SQSClient, command: unknown, ...rest: unknown[]) {
      const name = (command as object).constructor.name;
      const input = (command as { input?: { Entries?: unknown[] } }).input;
      const result = original.call(this, command, ...rest);
      if (typeof (result as Promise<unknown> | undefined)?.then !== 'function') return result;
      return result.then((out) => {
        if (name === 'ReceiveMessageCommand') {
          const n = (out as { Messages?: unknown[] }).Messages?.length ?? 0;
          if (n === 0) {
            meter.emptyReceives += 1;
            return out;
          }
          meter.messagesReceived += n;
        }
        if (name === 'SendMessageBatchCommand') meter.messagesSent += input?.Entries?.length ?? 0;
        if (name === 'SendMessageCommand') meter.messagesSent += 1;
        // Only what a message's life costs; the bench's own GetQueueAttributes (drain) is not counted.
        if (BILLED.has(name)) meter.byCommand.set(name, (meter.byCommand.get(name) ?? 0) + 1);
        return out;
      });
    };
  }

  /** Billed requests that carried messages (empty receives excluded: see the note in the report). */
  billedRequests(): number {
    let total = 0;
    for (const n of this.byCommand.values()) total += n;
    return total;
  }

  count(name: string): number {
    return this.byCommand.get(name) ?? 0;
  }

  reset(): void {
    this.byCommand.clear();
    this.emptyReceives = 0;
    this.messagesSent = 0;
    this.messagesReceived = 0;
  }
}

export class InvocationMeter {
  fanout = 0;
  fanoutRecords = 0;
  readonly consumers = new Map<string, { invocations: number; records: number }>();

  consumerInvocations(): number {
    let total = 0;
    for (const c of this.consumers.values()) total += c.invocations;
    return total;
  }

  reset(): void {
    this.fanout = 0;
    this.fanoutRecords = 0;
    this.consumers.clear();
  }
}

/**
 * Replaces the stack's fan-out and consumer handlers with counting wrappers. The pollers take their
 * handler from `stack.handlers` when they are created, which local/stack.ts does at startPipeline
 * after a stopPipeline: call this with the pipeline stopped, then start it.
 */
export function countInvocations(stack: LocalStack, meter: InvocationMeter): void {
  const handlers = stack.handlers as unknown as { fanout: FanoutHandler; consumers: Record<string, ConsumerLambdaHandler> };
  const fanout = handlers.fanout;
  handlers.fanout = (event) => {
    meter.fanout += 1;
    meter.fanoutRecords += event.Records.length;
    return fanout(event);
  };
  for (const [id, handler] of Object.entries(handlers.consumers)) {
    handlers.consumers[id] = (event, context) => {
      const c = meter.consumers.get(id) ?? { invocations: 0, records: 0 };
      c.invocations += 1;
      c.records += event.Records.length;
      meter.consumers.set(id, c);
      return handler(event, context);
    };
  }
}

/** Resolves when every expected consumer has reported `processed` for an event (register before sending). */
export class DeliveryTracker {
  private readonly pending = new Map<string, { seen: Set<string>; expected: number; resolve: (at: number) => void }>();
  failures = 0;

  readonly onDelivery = (d: DeliveryProgress): void => {
    if (d.outcome !== 'processed') {
      this.failures += 1;
      return;
    }
    const waiter = this.pending.get(d.eventId);
    if (!waiter) return;
    waiter.seen.add(d.consumerId);
    if (waiter.seen.size >= waiter.expected) {
      this.pending.delete(d.eventId);
      waiter.resolve(performance.now());
    }
  };

  /** Resolves with performance.now() at the last expected acknowledgement. */
  allProcessed(eventId: string, expected: number, timeoutMs = 30_000): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(eventId);
        reject(new BenchRunError(`event ${eventId} not acknowledged by ${expected} consumers within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(eventId, {
        seen: new Set(),
        expected,
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
      });
    });
  }
}

/**
 * The bytes the handlers log, as CloudWatch Logs would ingest them: every line a Powertools logger
 * writes (JSON starting with `{"level":`) is counted and swallowed; anything else passes through.
 * Loggers made by `logger` log at INFO (the deployed application log level) while recording and are
 * silent otherwise, so the phases that time intake pay nothing for logging they do not measure.
 */
export class LogMeter {
  bytes = 0;
  lines = 0;
  private readonly loggers: ReturnType<typeof createLogger>[] = [];
  private recording = false;
  private restore: (() => void) | undefined;

  readonly logger = (service: string): ReturnType<typeof createLogger> => {
    const logger = createLogger(service);
    logger.setLogLevel(this.recording ? 'INFO' : 'SILENT');
    this.loggers.push(logger);
    return logger;
  };

  install(): void {
    if (this.restore) return;
    const streams = [process.stdout, process.stderr] as const;
    const originals = streams.map((stream) => stream.write.bind(stream));
    streams.forEach((stream, i) => {
      const original = originals[i]!;
      stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
        if (!text.startsWith('{"level":')) return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
        this.bytes += Buffer.byteLength(text.replace(/\n$/, ''));
        this.lines += 1;
        const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
        callback?.();
        return true;
      }) as typeof stream.write;
    });
    this.restore = () => {
      streams.forEach((stream, i) => {
        stream.write = originals[i] as typeof stream.write;
      });
    };
  }

  uninstall(): void {
    this.restore?.();
    this.restore = undefined;
  }

  record(on: boolean): void {
    this.recording = on;
    for (const logger of this.loggers) logger.setLogLevel(on ? 'INFO' : 'SILENT');
  }

  reset(): void {
    this.bytes = 0;
    this.lines = 0;
  }
}

/**
 * Every meter of a bench run over the pipeline, the SQS and log meters already installed (they wrap
 * SQSClient.prototype.send and the process's stdout), and the S3 meter installed beside them.
 */
export function installedMeters(): { meters: Meters; s3: S3Meter } {
  const meters: Meters = {
    capacity: new CapacityMeter(),
    sqs: new SqsMeter(),
    invocations: new InvocationMeter(),
    deliveries: new DeliveryTracker(),
    logs: new LogMeter(),
  };
  meters.sqs.install();
  meters.logs.install();
  const s3 = new S3Meter();
  s3.install();
  return { meters, s3 };
}
