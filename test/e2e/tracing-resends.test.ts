/**
 * The webhook's trace across a replay on the local stack (`tracing: 'xray'`; no X-Ray here, so the
 * functions run untraced, but the header travels as on AWS): a replay's re-queue carries the trace
 * header the receipt holds through the table's stream, and the fan-out sends it to the consumer's
 * queue as the message's AWSTraceHeader. The emulated queues keep no system attributes, so what the
 * consumer's side does with it (its DLQ copy) is shown by test/unit/tracing-resends.test.ts.
 */
import type { SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { eventKey } from '../../core/model';
import defaultConfig from '../../hookledger.config';
import type { LocalStack } from '../../local/stack';
import { replay } from '../../ops/replay';
import { platformEvent } from '../support/factories';
import { send, startTestStack } from '../support/stack';

const EVENT = 'evt_01J8K7M2Q4';
/** A header whose trace began now: X-Ray takes segments for it (an older one is not carried, adapters/requeue.ts). */
const HEADER = `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1`;

interface Sent {
  readonly eventId: string;
  readonly replayId: string | undefined;
  readonly traceHeader: string | undefined;
}

let stack: LocalStack;
/** Every message the fan-out sent, with the AWSTraceHeader it was given. */
const sent: Sent[] = [];
const config = defineConfig({
  ...defaultConfig,
  tracing: 'xray',
  consumers: defaultConfig.consumers.filter((c) => c.id === 'billing-meter'),
});

beforeAll(async () => {
  stack = await startTestStack({ config });
  stack.handlers.sqs.middlewareStack.add(
    (next) => async (args) => {
      for (const entry of (args.input as { Entries?: SendMessageBatchRequestEntry[] }).Entries ?? []) {
        const body = JSON.parse(entry.MessageBody ?? '{}') as { eventId?: string; replayId?: string };
        sent.push({
          eventId: body.eventId ?? '',
          replayId: body.replayId,
          traceHeader: entry.MessageSystemAttributes?.AWSTraceHeader?.StringValue,
        });
      }
      return next(args);
    },
    { step: 'initialize', name: 'traceHeaderCapture' },
  );
  expect((await send(stack, platformEvent({ id: EVENT, tenant_id: 'tenant_204' }))).status).toBe(202);
  await stack.drain({ timeoutMs: 60_000 });
});
afterAll(() => stack?.stop());

describe('a replay of evt_01J8K7M2Q4 to billing-meter on the local stack', () => {
  it("is sent with the trace header its receipt holds; the webhook's first delivery, from a receipt without one, went without", async () => {
    expect(sent).toEqual([{ eventId: EVENT, replayId: undefined, traceHeader: undefined }]);
    await stack.handlers.ddb.send(
      new UpdateCommand({
        TableName: stack.resources.tables.events,
        Key: { pk: eventKey('platform', EVENT) },
        UpdateExpression: 'SET traceHeader = :h',
        ExpressionAttributeValues: { ':h': HEADER },
      }),
    );
    const result = await replay(
      { ddb: stack.handlers.ddb, tables: stack.resources.tables, config, operator: 'e2e' },
      { consumer: 'billing-meter', event: { eventId: EVENT } },
    );
    expect(result).toMatchObject({ requeued: 1 });
    await stack.drain({ timeoutMs: 60_000 });
    expect(sent.filter((s) => s.replayId === result.replayId)).toEqual([
      { eventId: EVENT, replayId: result.replayId, traceHeader: HEADER },
    ]);
  });
});
