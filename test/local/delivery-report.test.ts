/** `npm start`'s delivery lines: what happened to each delivery, read from its ledger row. */
import { describe, expect, it } from 'vitest';
import type { LedgerRowReader } from '../../local/delivery-report';
import { formatDeliveryLine, reportDeliveries } from '../../local/delivery-report';
import { deliveryMessage, sqsRecord } from '../support/factories';

const rows: Record<string, Awaited<ReturnType<LedgerRowReader>>> = {
  'platform:evt_done#risk-evaluator': { state: 'done' },
  'platform:evt_poison#risk-evaluator': { state: 'quarantined', lastErrorCategory: 'validation' },
  'platform:evt_flaky#risk-evaluator': { state: 'retrying', lastErrorCategory: 'timeout' },
  'platform:evt_last#risk-evaluator': { state: 'quarantined', lastErrorCategory: 'timeout' },
};
const readRow: LedgerRowReader = async (source, eventId, consumerId) => rows[`${source}:${eventId}#${consumerId}`];

describe('reportDeliveries', () => {
  it('prints quarantined with its category for a delivery a permanent error sent to the DLQ, though SQS saw it processed', async () => {
    const printed: string[] = [];
    const records = [
      sqsRecord(deliveryMessage({ eventId: 'evt_done', consumerId: 'risk-evaluator' })),
      sqsRecord(deliveryMessage({ eventId: 'evt_poison', consumerId: 'risk-evaluator' })),
      sqsRecord(deliveryMessage({ eventId: 'evt_flaky', consumerId: 'risk-evaluator', tenantId: 'tenant_311' }), { receiveCount: 2 }),
      sqsRecord(deliveryMessage({ eventId: 'evt_last', consumerId: 'risk-evaluator' }), { receiveCount: 4 }),
    ];
    // The runtime's answer: the permanent failure was moved to the DLQ by the runtime, so only the
    // retried ones are reported failed.
    const inner = async () => ({ batchItemFailures: [{ itemIdentifier: 'm-evt_flaky' }, { itemIdentifier: 'm-evt_last' }] });
    const wrapped = reportDeliveries({ readRow, print: (l) => printed.push(l) })('risk-evaluator', inner);

    const result = await wrapped({ Records: records });

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-evt_flaky' }, { itemIdentifier: 'm-evt_last' }] });
    expect(printed).toEqual([
      '  ok   risk-evaluator   evt_done  tenant tenant_204  receive #1',
      '  DLQ  risk-evaluator   evt_poison  tenant tenant_204  receive #1  quarantined (validation) -> DLQ of risk-evaluator',
      '  FAIL risk-evaluator   evt_flaky  tenant tenant_311  receive #2  retrying (timeout)',
      '  DLQ  risk-evaluator   evt_last  tenant tenant_204  receive #4  quarantined (timeout) -> DLQ of risk-evaluator',
    ]);
  });

  it('says only what the batch response says when the row cannot be read, and rethrows a failed batch', async () => {
    const printed: string[] = [];
    const failing = async (): Promise<never> => {
      throw new Error('storage down');
    };
    const wrapped = reportDeliveries({
      readRow: async () => {
        throw new Error('not up yet');
      },
      print: (l) => printed.push(l),
    })('audit-writer', failing);
    await expect(wrapped({ Records: [sqsRecord(deliveryMessage({ eventId: 'evt_1', consumerId: 'audit-writer' }))] })).rejects.toThrow(
      'storage down',
    );
    expect(printed).toEqual(['  FAIL audit-writer     evt_1  tenant tenant_204  receive #1  retrying']);
  });
});

describe('formatDeliveryLine', () => {
  it('prints a quarantine without a known category as plain quarantined', () => {
    expect(formatDeliveryLine({ consumerId: 'c', eventId: 'e', tenantId: 't', receiveCount: 5, verdict: 'quarantined' })).toBe(
      '  DLQ  c                e  tenant t  receive #5  quarantined -> DLQ of c',
    );
  });
});
