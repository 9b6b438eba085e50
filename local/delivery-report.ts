/**
 * `npm start`'s line per delivery, saying what happened to it: `ok`, `FAIL ... retrying (category)`,
 * or `DLQ ... quarantined (category)` when a permanent error (or the last allowed receive) sent it to
 * the consumer's DLQ. The batch response alone cannot tell: a permanent error is reported to SQS as
 * processed (the runtime moved the message to the DLQ itself), so the line reads the delivery's
 * ledger row, which the runtime wrote before answering. Both modes print them: plain `npm start`
 * by wrapping each consumer's handler, assembly mode from each invocation's outcome.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { LedgerItem } from '../core/model';
import type { ConsumerLambdaHandler } from '../lambdas/runtime/runtime';

export type DeliveryVerdict = 'ok' | 'retrying' | 'quarantined';

export interface DeliveryLine {
  readonly consumerId: string;
  readonly eventId: string;
  readonly tenantId: string;
  readonly receiveCount: number;
  readonly verdict: DeliveryVerdict;
  /** The error category of a failed or quarantined delivery (from the ledger row). */
  readonly category?: string;
}

/** Reads one ledger row; undefined when there is none (yet) or it cannot be read. */
export type LedgerRowReader = (
  source: string,
  eventId: string,
  consumerId: string,
) => Promise<Pick<LedgerItem, 'state' | 'lastErrorCategory'> | undefined>;

export function formatDeliveryLine(line: DeliveryLine): string {
  const label = { ok: 'ok  ', retrying: 'FAIL', quarantined: 'DLQ ' }[line.verdict];
  const what =
    line.verdict === 'ok'
      ? ''
      : `  ${line.verdict}${line.category ? ` (${line.category})` : ''}${line.verdict === 'quarantined' ? ` -> DLQ of ${line.consumerId}` : ''}`;
  return `  ${label} ${line.consumerId.padEnd(16)} ${line.eventId}  tenant ${line.tenantId}  receive #${line.receiveCount}${what}`;
}

export interface DeliveryReportDeps {
  readonly readRow: LedgerRowReader;
  readonly print: (line: string) => void;
}

/**
 * Wraps a consumer's handler (LocalStackOptions.wrapConsumer) so that after each batch one line per
 * record is printed. `readRow` may return undefined (e.g. before the stack is up): the line then
 * says only what the batch response says.
 */
export function reportDeliveries(deps: DeliveryReportDeps): (consumerId: string, handler: ConsumerLambdaHandler) => ConsumerLambdaHandler {
  return (consumerId, handler) => async (event, context) => {
    let result: SQSBatchResponse | undefined;
    let thrown: unknown;
    try {
      result = await handler(event, context);
    } catch (error) {
      thrown = error;
    }
    await reportBatch(deps, consumerId, event, { failedAll: thrown !== undefined, result });
    if (thrown !== undefined) throw thrown;
    return result!;
  };
}

/**
 * The same lines in assembly mode, where each consumer's bundle runs in a process of its own: the
 * assembly stack's `onInvoke`, told of each invocation once it returned. A consumer's batch is known
 * by its records' queue (`consumerOfQueue`: the consumer whose queue has that ARN); other invocations
 * (intake, fan-out, reconciler) print nothing.
 */
export function reportInvocations(
  deps: DeliveryReportDeps & { readonly consumerOfQueue: (queueArn: string) => string | undefined },
): (functionId: string, event: unknown, outcome: { ok: boolean; result?: unknown }) => void {
  return (_functionId, event, outcome) => {
    const records = (event as Partial<SQSEvent> | undefined)?.Records;
    const queueArn = Array.isArray(records) ? (records[0] as Partial<SQSRecord> | undefined)?.eventSourceARN : undefined;
    const consumerId = queueArn ? deps.consumerOfQueue(queueArn) : undefined;
    if (!consumerId) return;
    const result = outcome.ok ? (outcome.result as SQSBatchResponse | undefined) : undefined;
    void reportBatch(deps, consumerId, event as SQSEvent, { failedAll: !outcome.ok, result }).catch(() => undefined);
  };
}

/** One line per record of a consumer's batch, once its invocation returned (`result`) or threw (`failedAll`). */
async function reportBatch(
  deps: DeliveryReportDeps,
  consumerId: string,
  event: SQSEvent,
  outcome: { readonly failedAll: boolean; readonly result: SQSBatchResponse | undefined },
): Promise<void> {
  const failed = new Set((outcome.result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
  for (const record of event.Records) {
    let body: { source?: string; eventId?: string; tenantId?: string } = {};
    try {
      body = JSON.parse(record.body) as typeof body;
    } catch {
      // A malformed message is reported by the runtime itself.
    }
    const row = body.source && body.eventId ? await deps.readRow(body.source, body.eventId, consumerId).catch(() => undefined) : undefined;
    const recordFailed = outcome.failedAll || failed.has(record.messageId);
    const verdict: DeliveryVerdict = row?.state === 'quarantined' ? 'quarantined' : recordFailed ? 'retrying' : 'ok';
    deps.print(
      formatDeliveryLine({
        consumerId,
        eventId: body.eventId ?? '?',
        tenantId: body.tenantId ?? '?',
        receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1),
        verdict,
        category: verdict === 'ok' ? undefined : row?.lastErrorCategory,
      }),
    );
  }
}
