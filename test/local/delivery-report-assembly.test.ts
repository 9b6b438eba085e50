/**
 * Assembly mode's delivery lines: the same lines as plain `npm start`, from the assembly stack's
 * `onInvoke` (each consumer bundle's invocation, once it returned), the consumer known by its queue.
 */
import { describe, expect, it } from 'vitest';
import type { LedgerRowReader } from '../../local/delivery-report';
import { reportInvocations } from '../../local/delivery-report';
import { deliveryMessage, sqsRecord } from '../support/factories';
import { waitFor } from '../support/wait';

const QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:risk-evaluator';
const rows: Record<string, Awaited<ReturnType<LedgerRowReader>>> = {
  'platform:evt_01J8K7M2Q4#risk-evaluator': { state: 'done' },
  'platform:evt_01J8K7M2Q5#risk-evaluator': { state: 'quarantined', lastErrorCategory: 'validation' },
};
const readRow: LedgerRowReader = async (source, eventId, consumerId) => rows[`${source}:${eventId}#${consumerId}`];

function reporter() {
  const printed: string[] = [];
  const onInvoke = reportInvocations({
    readRow,
    print: (line) => printed.push(line),
    consumerOfQueue: (arn) => (arn === QUEUE_ARN ? 'risk-evaluator' : undefined),
  });
  return { printed, onInvoke };
}

describe('reportInvocations (assembly mode)', () => {
  it("prints a line per record of a consumer's batch, from its batch response and ledger rows", async () => {
    const { printed, onInvoke } = reporter();
    const event = {
      Records: [
        sqsRecord(deliveryMessage({ eventId: 'evt_01J8K7M2Q4', consumerId: 'risk-evaluator' })),
        sqsRecord(deliveryMessage({ eventId: 'evt_01J8K7M2Q5', consumerId: 'risk-evaluator' })),
      ],
    };
    onInvoke('ConsumersriskevaluatorWorker1A2B3C4D', event, { ok: true, result: { batchItemFailures: [] } });
    await waitFor('two lines', () => (printed.length === 2 ? true : undefined));
    expect(printed).toEqual([
      '  ok   risk-evaluator   evt_01J8K7M2Q4  tenant tenant_204  receive #1',
      '  DLQ  risk-evaluator   evt_01J8K7M2Q5  tenant tenant_204  receive #1  quarantined (validation) -> DLQ of risk-evaluator',
    ]);
  });

  it('prints every record of a batch whose invocation failed as retrying', async () => {
    const { printed, onInvoke } = reporter();
    const event = {
      Records: [sqsRecord(deliveryMessage({ eventId: 'evt_01J8K7M2Q6', consumerId: 'risk-evaluator' }), { receiveCount: 2 })],
    };
    onInvoke('ConsumersriskevaluatorWorker1A2B3C4D', event, { ok: false });
    await waitFor('one line', () => (printed.length === 1 ? true : undefined));
    expect(printed).toEqual(['  FAIL risk-evaluator   evt_01J8K7M2Q6  tenant tenant_204  receive #2  retrying']);
  });

  it('prints nothing for an invocation not from a consumer queue (the gateway, the stream)', async () => {
    const { printed, onInvoke } = reporter();
    onInvoke('IngestFunction', { rawPath: '/hooks/platform' }, { ok: true, result: { statusCode: 202 } });
    onInvoke(
      'FanOutHandlerFunction',
      { Records: [{ eventSource: 'aws:dynamodb', eventSourceARN: 'arn:aws:dynamodb:stream' }] },
      { ok: true },
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(printed).toEqual([]);
  });
});
