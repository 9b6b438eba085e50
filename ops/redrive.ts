/**
 * Redrive: move a consumer's DLQ messages back to its queue.
 *
 * On AWS (and emulators that have it) this is SQS's own message move task, as the console's "start
 * DLQ redrive" does. DestinationArn is always given: messages the runtime sent to the DLQ itself
 * (PermanentError) have no source queue, and a task without a destination fails on them with
 * CouldNotDetermineMessageSource. Where the action does not exist (fauxqs), the same work is done
 * here: receive from the DLQ, send to the queue, delete from the DLQ, up to the number of messages
 * the DLQ held at the start (anything failing again meanwhile is left for the next redrive).
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { FIFO_SUFFIX, fairSendParameters, UNKEYED_GROUP } from '../core/config/consumers';
import type { ConfigDeps, Progress, QueuePair } from './deps';
import { OperationFailedError, UsageError } from './errors';
import { depth } from './status';

export interface RedriveDeps extends ConfigDeps {
  readonly sqs: SQSClient;
  readonly queues: Readonly<Record<string, QueuePair>>;
}

export interface RedriveRequest {
  readonly consumer: string;
  /** Move-task rate cap (messages/s); AWS allows up to 500. Default: SQS's own (system optimised). */
  readonly maxPerSecond?: number;
  /** How often the move task is polled, ms. Default 1000. */
  readonly pollMs?: number;
  /** Give up polling after this long, ms (the task keeps running on AWS). Default 15 minutes. */
  readonly timeoutMs?: number;
  readonly onProgress?: Progress;
}

export interface RedriveResult {
  readonly consumer: string;
  readonly method: 'move-task' | 'receive-send-delete';
  readonly moved: number;
  /** What the DLQ held when the redrive started. */
  readonly toMove: number;
  /** The move task's final status (move-task only). */
  readonly status?: string;
}

/** What a redrive would move now: the DLQ's messages, and those in flight (received, not yet deleted). Moves nothing. */
export interface RedrivePreview {
  readonly consumer: string;
  readonly toMove: number;
  readonly inFlight: number;
}

export async function redrivePreview(deps: Pick<RedriveDeps, 'sqs' | 'queues'>, consumer: string): Promise<RedrivePreview> {
  const dlq = await depth(deps.sqs, queuePairOf(deps, consumer).dlqUrl);
  return { consumer, toMove: dlq.visible, inFlight: dlq.inFlight };
}

function queuePairOf(deps: Pick<RedriveDeps, 'queues'>, consumer: string): QueuePair {
  const pair = deps.queues[consumer];
  if (!pair) {
    throw new UsageError(`no queue for consumer "${consumer}"; consumers with queues: ${Object.keys(deps.queues).join(', ') || 'none'}`);
  }
  return pair;
}

export async function redrive(deps: RedriveDeps, request: RedriveRequest): Promise<RedriveResult> {
  const pair = queuePairOf(deps, request.consumer);
  const [dlq, queue] = await Promise.all([attributes(deps.sqs, pair.dlqUrl), attributes(deps.sqs, pair.url)]);
  const toMove = Number(dlq.ApproximateNumberOfMessages ?? 0);
  let taskHandle: string | undefined;
  try {
    const started = await deps.sqs.send(
      new StartMessageMoveTaskCommand({
        SourceArn: dlq.QueueArn,
        DestinationArn: queue.QueueArn,
        ...(request.maxPerSecond !== undefined ? { MaxNumberOfMessagesPerSecond: request.maxPerSecond } : {}),
      }),
    );
    taskHandle = started.TaskHandle;
  } catch (error) {
    if (!isUnsupportedAction(error)) {
      throw new OperationFailedError(
        `could not start the DLQ move task for ${request.consumer}: ${describe(error)} ` +
          '(SQS runs one move task per queue at a time: if one is running, wait for it or cancel it in the SQS console)',
        { cause: error },
      );
    }
    return { consumer: request.consumer, ...(await moveByHand(deps.sqs, pair, toMove, request.onProgress)), toMove };
  }
  return { consumer: request.consumer, ...(await waitForTask(deps.sqs, dlq.QueueArn!, taskHandle, request)), toMove };
}

async function waitForTask(
  sqs: SQSClient,
  sourceArn: string,
  taskHandle: string | undefined,
  request: RedriveRequest,
): Promise<{ method: 'move-task'; moved: number; status: string }> {
  const pollMs = request.pollMs ?? 1000;
  const deadline = Date.now() + (request.timeoutMs ?? 15 * 60_000);
  for (;;) {
    const out = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: sourceArn, MaxResults: 10 }));
    // Most recent first; a finished task no longer carries its handle, so take the newest then.
    const task = out.Results?.find((t) => taskHandle !== undefined && t.TaskHandle === taskHandle) ?? out.Results?.[0];
    const moved = task?.ApproximateNumberOfMessagesMoved ?? 0;
    request.onProgress?.(moved, task?.ApproximateNumberOfMessagesToMove);
    const status = task?.Status ?? 'UNKNOWN';
    if (status === 'COMPLETED') return { method: 'move-task', moved, status };
    if (status === 'FAILED' || status === 'CANCELLED') {
      throw new OperationFailedError(
        `the DLQ move task ended ${status} after moving ${moved} message(s)` +
          (task?.FailureReason ? `: ${task.FailureReason}` : '') +
          '; run redrive again to move the rest',
      );
    }
    if (Date.now() > deadline) {
      throw new OperationFailedError(
        `the DLQ move task is still ${status} (${moved} moved so far); it keeps running on its own, check it with \`hookledger status\``,
      );
    }
    await sleep(pollMs);
  }
}

async function moveByHand(
  sqs: SQSClient,
  pair: QueuePair,
  toMove: number,
  onProgress?: Progress,
): Promise<{ method: 'receive-send-delete'; moved: number }> {
  let moved = 0;
  let emptyReceives = 0;
  while (moved < toMove && emptyReceives < 2) {
    const received = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: pair.dlqUrl,
        MaxNumberOfMessages: Math.min(10, toMove - moved),
        VisibilityTimeout: 60,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['MessageGroupId', 'AWSTraceHeader'],
      }),
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) {
      emptyReceives++;
      continue;
    }
    emptyReceives = 0;
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: pair.url,
        Entries: messages.map((m, i) => redriveEntry(pair.url, m, i)),
      }),
    );
    // Delete only what reached the queue: a message that was not sent stays in the DLQ.
    const ok = new Set((sent.Successful ?? []).map((s) => Number(s.Id)));
    const toDelete = messages.filter((_, i) => ok.has(i));
    if (toDelete.length > 0) {
      const deleted = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: pair.dlqUrl,
          Entries: toDelete.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
      if ((deleted.Failed ?? []).length > 0) {
        throw new OperationFailedError(
          `${deleted.Failed!.length} message(s) were copied to the queue but not deleted from the DLQ; they will be delivered twice (harmless: claims are idempotent)`,
        );
      }
    }
    moved += toDelete.length;
    onProgress?.(moved, toMove);
    if ((sent.Failed ?? []).length > 0) {
      throw new OperationFailedError(
        `${sent.Failed!.length} message(s) could not be sent to the queue (${sent.Failed![0]?.Code}); they stay in the DLQ, run redrive again`,
      );
    }
  }
  return { method: 'receive-send-delete', moved };
}

/**
 * One DLQ message sent back to its consumer's queue: an ordered consumer's FIFO queue takes it back
 * into its group, deduplicated per moved message; a standard queue takes it grouped by its event's
 * tenant (fair queues), read from the body, which is a delivery message. Its trace header goes with it.
 */
export function redriveEntry(queueUrl: string, m: Message, index: number): SendMessageBatchRequestEntry {
  return {
    Id: String(index),
    MessageBody: m.Body ?? '',
    ...(queueUrl.endsWith(FIFO_SUFFIX)
      ? { MessageGroupId: m.Attributes?.MessageGroupId ?? UNKEYED_GROUP, MessageDeduplicationId: `redrive-${m.MessageId}` }
      : tenantGroupOfBody(m.Body)),
    ...(m.MessageAttributes && Object.keys(m.MessageAttributes).length > 0
      ? { MessageAttributes: copyAttributes(m.MessageAttributes) }
      : {}),
    // The webhook's trace (tracing: 'xray') its DLQ copy carries goes back with it.
    ...(m.Attributes?.AWSTraceHeader
      ? { MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: m.Attributes.AWSTraceHeader } } }
      : {}),
  };
}

/** A body that is not a delivery message with a tenant is sent back without a group (its own tenant to a fair queue) rather than not at all. */
function tenantGroupOfBody(body: string | undefined): { MessageGroupId: string } | Record<string, never> {
  try {
    const tenantId = (JSON.parse(body ?? '') as { tenantId?: unknown } | null)?.tenantId;
    return typeof tenantId === 'string' ? fairSendParameters({ tenantId }) : {};
  } catch {
    return {};
  }
}

function copyAttributes(attributes: Record<string, MessageAttributeValue>): Record<string, MessageAttributeValue> {
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes)) {
    out[name] = {
      DataType: value.DataType,
      ...(value.StringValue !== undefined ? { StringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined ? { BinaryValue: value.BinaryValue } : {}),
    };
  }
  return out;
}

async function attributes(sqs: SQSClient, queueUrl: string) {
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn', 'ApproximateNumberOfMessages'] }),
  );
  const attrs = out.Attributes ?? {};
  if (!attrs.QueueArn) throw new OperationFailedError(`queue ${queueUrl} did not report its ARN`);
  return attrs;
}

/**
 * The endpoint does not implement the move-task API at all (fauxqs answers `InvalidAction: Unknown
 * action`). Narrow on purpose: AWS's own refusals (UnsupportedOperation for a queue that is not a
 * DLQ, a task already running) must surface, not fall back to a hand-made copy.
 */
function isUnsupportedAction(error: unknown): boolean {
  const e = error as { name?: string; message?: string };
  return e?.name === 'InvalidAction' || e?.name === 'UnknownOperationException' || /^unknown action/i.test(e?.message ?? '');
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
