/**
 * Fair delivery: every send of a delivery to a consumer's standard queue carries the event's tenant
 * as its MessageGroupId (the SQS fair-queue tenant key); an ordered consumer's FIFO queue keeps its
 * ordering key. Re-queues (replay, repair, backfill) reach the queue through the fan-out's send; a
 * redrive moved by hand builds its own entries.
 */
import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { requeueItem } from '../../adapters/requeue';
import { fairSendParameters, fifoSendParameters, messageGroupOf, queueSendParameters } from '../../core/config/consumers';
import type { DeliveryMessage } from '../../core/model';
import { redriveEntry } from '../../ops/redrive';

const STANDARD = 'http://127.0.0.1:4566/000000000000/hookledger-audit-writer';
const FIFO = 'http://127.0.0.1:4566/000000000000/hookledger-ledger-sync.fifo';

function delivery(overrides: Partial<DeliveryMessage> = {}): DeliveryMessage {
  return {
    v: 2,
    source: 'platform',
    eventId: 'evt_01J8K7M2Q4',
    eventType: 'invoice.paid',
    tenantId: 'tenant_204',
    keyId: 'key_42',
    consumerId: 'audit-writer',
    receivedAt: 1_767_000_000_000,
    ...overrides,
  } as DeliveryMessage;
}

describe('the group of a send to a consumer queue', () => {
  it('is the tenant on a standard queue', () => {
    expect(queueSendParameters(STANDARD, delivery())).toEqual({ MessageGroupId: 'tenant_204' });
    expect(queueSendParameters(STANDARD, delivery({ tenantId: 'tenant_311' }))).toEqual({ MessageGroupId: 'tenant_311' });
  });

  it('keeps the ordering key and deduplication id on a FIFO queue', () => {
    const ordered = delivery({ consumerId: 'ledger-sync', orderingKey: 'acct_7' });
    expect(queueSendParameters(FIFO, ordered)).toEqual(fifoSendParameters(FIFO, ordered));
    expect(queueSendParameters(FIFO, ordered)).toMatchObject({ MessageGroupId: 'acct_7' });
  });

  it('maps a tenant id SQS would refuse to h- + its SHA-256, the same group every time', () => {
    const long = `tenant_${'9'.repeat(200)}`;
    expect(fairSendParameters({ tenantId: long }).MessageGroupId).toMatch(/^h-[0-9a-f]{64}$/);
    expect(fairSendParameters({ tenantId: long })).toEqual(fairSendParameters({ tenantId: long }));
    expect(fairSendParameters({ tenantId: 'Zürich GmbH' }).MessageGroupId).toBe(messageGroupOf('Zürich GmbH'));
    expect(fairSendParameters({ tenantId: 'tenant 204' }).MessageGroupId).toMatch(/^h-[0-9a-f]{64}$/);
    expect(fairSendParameters({ tenantId: 't'.repeat(128) }).MessageGroupId).toBe('t'.repeat(128));
  });

  it('a replay, repair or backfill re-queue keeps the tenant the fan-out groups it by', () => {
    const receipt = {
      source: 'platform',
      eventId: 'evt_01J8K7M2Q4',
      eventType: 'invoice.paid',
      tenantId: 'tenant_311',
      keyId: 'key_77',
      receivedAt: 1_767_000_000_000,
      payloadExpiresAt: 1_769_592_000_000,
    };
    for (const operation of ['rpl_01J8K7', { repairId: 'rpr_01J8K7' }] as const) {
      const item = requeueItem(receipt, 'audit-writer', operation, 1_767_000_100_000);
      expect(queueSendParameters(STANDARD, delivery({ tenantId: item.tenantId }))).toEqual({ MessageGroupId: 'tenant_311' });
    }
  });
});

describe('a redrive moved by hand', () => {
  const dlqMessage = (body: object, groupId?: string): Message => ({
    MessageId: 'm-1',
    ReceiptHandle: 'r-1',
    Body: JSON.stringify(body),
    ...(groupId ? { Attributes: { MessageGroupId: groupId } } : {}),
  });

  it('sends a standard-queue message back grouped by its tenant', () => {
    expect(redriveEntry(STANDARD, dlqMessage(delivery({ tenantId: 'tenant_204' })), 0)).toEqual({
      Id: '0',
      MessageBody: JSON.stringify(delivery({ tenantId: 'tenant_204' })),
      MessageGroupId: 'tenant_204',
    });
  });

  it('sends a body it cannot read back without a group rather than not at all', () => {
    expect(redriveEntry(STANDARD, { MessageId: 'm-2', Body: 'not json' }, 3)).toEqual({ Id: '3', MessageBody: 'not json' });
  });

  it('puts an ordered consumer message back into its FIFO group, deduplicated per moved message', () => {
    expect(redriveEntry(FIFO, dlqMessage(delivery({ orderingKey: 'acct_7' }), 'acct_7'), 1)).toMatchObject({
      Id: '1',
      MessageGroupId: 'acct_7',
      MessageDeduplicationId: 'redrive-m-1',
    });
  });
});
