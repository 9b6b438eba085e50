/**
 * The adapters' operator paths on DynamoDB Local: the EventStore table's requeues, audit log, key
 * registry, delivery-set and trace reads, the Ledger's replay notes, and the shared scanner's filters.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditItem } from '../../adapters/audit';
import { eventStores } from '../../adapters/event-stores';
import { Ledger } from '../../adapters/ledger';
import { requeueItem } from '../../adapters/requeue';
import {
  eventStoreItemsByKey,
  ledgerItemsByKey,
  scanDeliveryStates,
  scanKeys,
  scanReceiptSummaries,
  scanReceipts,
  scanUsageRows,
} from '../../adapters/table-scan';
import { type EventItem, eventKey, type KeyItem, keyRegistryKey, ledgerKey, parseLedgerKey } from '../../core/model';
import { createTable, startTestDynamo } from '../support/dynamo';
import { deliveryMessage, NOW } from '../support/factories';

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let tableNo = 0;

beforeAll(async () => {
  dynamo = await startTestDynamo();
});
afterAll(() => dynamo?.stop());

async function freshTables() {
  const n = ++tableNo;
  const tables = { events: `ops-events-${n}`, ledger: `ops-ledger-${n}` };
  await Promise.all([createTable(dynamo.client, tables.events, true), createTable(dynamo.client, tables.ledger)]);
  const store = eventStores({ client: dynamo.doc, tableName: tables.events, clock: () => NOW });
  const ledger = new Ledger({ client: dynamo.doc, tableName: tables.ledger });
  return { tables, deps: { ddb: dynamo.doc, tables }, store, ledger };
}

function receiptFields(eventId: string, overrides: Partial<EventItem> = {}): Omit<EventItem, 'pk' | 'kind'> {
  return {
    source: 'platform',
    eventId,
    eventType: 'invoice.paid',
    tenantId: 'tenant_204',
    keyId: 'key_42',
    receivedAt: NOW,
    consumers: ['billing-meter'],
    payloadHmac: `hmac-${eventId}`,
    payloadBytes: 2,
    secretVersion: 'current',
    payloadExpiresAt: NOW + 86_400_000,
    ...overrides,
  };
}

async function rawItem(table: string, pk: string) {
  return (await dynamo.doc.send(new GetCommand({ TableName: table, Key: { pk } }))).Item;
}

describe('EventStore table operator paths', () => {
  describe('putRequeue', () => {
    it('writes the requeue item once; a retried write of the same item is a no-op, not a second item', async () => {
      const { tables, store } = await freshTables();
      const receipt = { ...receiptFields('evt_rq_1'), pk: eventKey('platform', 'evt_rq_1'), kind: 'event' as const };
      const item = requeueItem(receipt, 'billing-meter', 'rpl_1', NOW);
      await store.requeues.putRequeue(item);
      await store.requeues.putRequeue({ ...item, createdAt: NOW + 1 });
      expect(await rawItem(tables.events, item.pk)).toMatchObject({ kind: 'requeue', replayId: 'rpl_1', createdAt: NOW });
    });
  });

  describe('putAudit', () => {
    it('writes the audit item under auditKey and refuses to overwrite it', async () => {
      const { tables, store } = await freshTables();
      const item = auditItem({ action: 'replay', auditId: 'aud_1', at: NOW, operator: 'ops' }, { count: 3 });
      await store.audit.putAudit(item);
      expect(await rawItem(tables.events, item.pk)).toEqual({ ...item });
      await expect(store.audit.putAudit({ ...item, count: 4 })).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
      expect((await rawItem(tables.events, item.pk))?.count).toBe(3);
    });
  });

  describe('key registry', () => {
    const key = (keyId: string): KeyItem => ({
      pk: keyRegistryKey(keyId),
      kind: 'key',
      keyId,
      tenantId: 'tenant_204',
      status: 'active',
      createdAt: NOW,
    });

    it('creates a key once and reports an existing id without touching it', async () => {
      const { store } = await freshTables();
      expect(await store.keys.createKey(key('key_a'))).toBe(true);
      expect(await store.keys.createKey({ ...key('key_a'), tenantId: 'tenant_other' })).toBe(false);
      expect(await store.keys.getKey('key_a')).toMatchObject({ tenantId: 'tenant_204', status: 'active' });
    });

    it('revokes an existing key and returns it; an unknown id returns undefined and writes nothing', async () => {
      const { tables, store } = await freshTables();
      await store.keys.createKey(key('key_b'));
      expect(await store.keys.revokeKey('key_b', NOW + 5)).toMatchObject({
        alreadyRevoked: false,
        key: { keyId: 'key_b', status: 'revoked', revokedAt: NOW + 5 },
      });
      expect(await store.keys.revokeKey('key_b', NOW + 7)).toMatchObject({ alreadyRevoked: true, key: { revokedAt: NOW + 5 } });
      expect(await store.keys.revokeKey('key_missing', NOW + 6)).toBeUndefined();
      expect(await rawItem(tables.events, keyRegistryKey('key_missing'))).toBeUndefined();
    });

    it('scanKeys lists the registry, optionally one tenant', async () => {
      const { deps, store } = await freshTables();
      await store.keys.createKey(key('key_c'));
      await store.keys.createKey({ ...key('key_d'), tenantId: 'tenant_9' });
      await store.receipts.recordEvent(receiptFields('evt_k_1'), Buffer.from('{}'));
      expect((await scanKeys(deps)).map((k) => k.keyId).sort()).toEqual(['key_c', 'key_d']);
      expect((await scanKeys(deps, { tenant: 'tenant_9' })).map((k) => k.keyId)).toEqual(['key_d']);
    });
  });

  describe('addToDeliverySet', () => {
    it('adds a consumer to a receipt once; a second add and a missing receipt return false', async () => {
      const { tables, store } = await freshTables();
      await store.receipts.recordEvent(receiptFields('evt_bf_1'), Buffer.from('{}'));
      expect(await store.receiptAdmin.addToDeliverySet('platform', 'evt_bf_1', 'audit-writer')).toBe(true);
      expect(await store.receiptAdmin.addToDeliverySet('platform', 'evt_bf_1', 'audit-writer')).toBe(false);
      expect(await store.receiptAdmin.addToDeliverySet('platform', 'evt_none', 'audit-writer')).toBe(false);
      expect((await rawItem(tables.events, eventKey('platform', 'evt_bf_1')))?.consumers).toEqual(['billing-meter', 'audit-writer']);
      expect(await rawItem(tables.events, eventKey('platform', 'evt_none'))).toBeUndefined();
    });
  });

  describe('trace reads', () => {
    it('findReceipts returns the receipt of each source that has the id', async () => {
      const { store } = await freshTables();
      await store.receipts.recordEvent(receiptFields('evt_f_1'), Buffer.from('{}'));
      await store.receipts.recordEvent(receiptFields('evt_f_1', { source: 'other' }), Buffer.from('{}'));
      expect((await store.receiptAdmin.findReceipts('evt_f_1', ['platform'])).map((r) => r.source)).toEqual(['platform']);
      expect((await store.receiptAdmin.findReceipts('evt_f_1', ['platform', 'other', 'third'])).map((r) => r.source)).toEqual([
        'platform',
        'other',
      ]);
      expect(await store.receiptAdmin.findReceipts('evt_absent', ['platform'])).toEqual([]);
    });

    it('hasPayload is true while the payload is stored and within retention', async () => {
      const { store } = await freshTables();
      await store.receipts.recordEvent(receiptFields('evt_p_1'), Buffer.from('{}'));
      await store.receipts.recordEvent(receiptFields('evt_p_2', { payloadExpiresAt: NOW - 1000 }), Buffer.from('{}'));
      expect(await store.payloads.hasPayload('platform', 'evt_p_1', 'hmac-evt_p_1')).toBe(true);
      expect(await store.payloads.hasPayload('platform', 'evt_p_2', 'hmac-evt_p_2')).toBe(false);
      expect(await store.payloads.hasPayload('platform', 'evt_p_1', 'hmac-other')).toBe(false);
    });

    it('getConflict returns the conflict audit of an event id that was reused with other bytes', async () => {
      const { store } = await freshTables();
      await store.receipts.recordEvent(receiptFields('evt_c_1'), Buffer.from('{}'));
      expect(await store.receiptAdmin.getConflict('platform', 'evt_c_1')).toBeUndefined();
      expect(
        await store.receipts.recordEvent(
          receiptFields('evt_c_1', { payloadHmac: 'hmac-other', receivedAt: NOW + 1 }),
          Buffer.from('{"x":1}'),
        ),
      ).toBe('duplicate_conflict');
      expect(await store.receiptAdmin.getConflict('platform', 'evt_c_1')).toMatchObject({
        count: 1,
        entries: [{ at: NOW + 1, payloadHmac: 'hmac-other' }],
      });
    });
  });
});

describe('Ledger.noteReplayRequest', () => {
  it('appends to replayRequests of an existing item and changes nothing else', async () => {
    const { ledger } = await freshTables();
    const message = deliveryMessage({ eventId: 'evt_n_1' });
    await ledger.claim({ message, now: NOW, leaseMs: 60_000, principal: 'p' });
    await ledger.acknowledge({ message, attempt: 1, replay: false, units: 5, principal: 'p', policyVersion: 'v1', now: NOW + 1 });
    const before = await ledger.get('platform', 'evt_n_1', message.consumerId);
    expect(await ledger.noteReplayRequest(message, { replayId: 'rpl_1', at: NOW + 2, operator: 'ops' })).toBe(true);
    expect(await ledger.noteReplayRequest(message, { replayId: 'rpl_2', at: NOW + 3, operator: 'ops' })).toBe(true);
    const after = await ledger.get('platform', 'evt_n_1', message.consumerId);
    expect(after?.replayRequests).toEqual([
      { replayId: 'rpl_1', at: NOW + 2, operator: 'ops' },
      { replayId: 'rpl_2', at: NOW + 3, operator: 'ops' },
    ]);
    const { replayRequests: _notes, ...rest } = after!;
    expect(rest).toEqual(before);
  });

  it('creates no item for a delivery that was never claimed', async () => {
    const { ledger } = await freshTables();
    const ids = { source: 'platform', eventId: 'evt_n_2', consumerId: 'billing-meter' };
    expect(await ledger.noteReplayRequest(ids, { replayId: 'rpl_1', at: NOW, operator: 'ops' })).toBe(false);
    expect(await ledger.get('platform', 'evt_n_2', 'billing-meter')).toBeUndefined();
  });
});

describe('table-scan', () => {
  it('scans receipts by window and attribution, status projections and usage rows by ackAt', async () => {
    const { deps, store, ledger } = await freshTables();
    await store.receipts.recordEvent(receiptFields('evt_s_1'), Buffer.from('{}'));
    await store.receipts.recordEvent(
      receiptFields('evt_s_2', { receivedAt: NOW + 60_000, tenantId: 'tenant_9', eventType: 'invoice.voided' }),
      Buffer.from('{}'),
    );
    const message = deliveryMessage({ eventId: 'evt_s_1' });
    await ledger.claim({ message, now: NOW, leaseMs: 60_000, principal: 'p' });
    await ledger.acknowledge({ message, attempt: 1, replay: false, units: 7, principal: 'p', policyVersion: 'v1', now: NOW + 10 });

    expect((await scanReceipts(deps, { window: { from: NOW, to: NOW + 1 } })).map((r) => r.eventId)).toEqual(['evt_s_1']);
    expect((await scanReceipts(deps, { tenant: 'tenant_9' })).map((r) => r.eventId)).toEqual(['evt_s_2']);
    expect(
      (await scanReceipts(deps, { type: 'invoice.paid', consumer: 'billing-meter', source: 'platform' })).map((r) => r.eventId),
    ).toEqual(['evt_s_1']);
    const summaries = await scanReceiptSummaries(deps);
    expect(summaries).toHaveLength(2);
    expect(Object.keys(summaries[0]!).sort()).toEqual(['consumers', 'eventId', 'eventType', 'pk', 'receivedAt', 'secretVersion', 'source']);
    expect(await scanDeliveryStates(deps)).toEqual([
      {
        pk: ledgerKey('platform', 'evt_s_1', message.consumerId),
        consumerId: message.consumerId,
        state: 'done',
        receivedAt: message.receivedAt,
      },
    ]);
    expect(await scanUsageRows(deps, { window: { from: NOW, to: NOW + 11 } })).toEqual([
      { tenantId: message.tenantId, consumerId: message.consumerId, units: 7 },
    ]);
    expect(await scanUsageRows(deps, { window: { from: NOW, to: NOW + 10 } })).toEqual([]);
    expect(await scanUsageRows(deps, { window: { from: NOW, to: NOW + 11 }, tenant: 'tenant_9' })).toEqual([]);
  });

  it('reads items by key from either table, projected when asked', async () => {
    const { deps, store, ledger } = await freshTables();
    await store.receipts.recordEvent(receiptFields('evt_b_1'), Buffer.from('{}'));
    const message = deliveryMessage({ eventId: 'evt_b_1' });
    await ledger.claim({ message, now: NOW, leaseMs: 60_000, principal: 'p' });
    const receipts = await eventStoreItemsByKey(deps, [eventKey('platform', 'evt_b_1'), eventKey('platform', 'evt_missing')]);
    expect([...receipts.keys()]).toEqual([eventKey('platform', 'evt_b_1')]);
    const pk = ledgerKey('platform', 'evt_b_1', message.consumerId);
    const rows = await ledgerItemsByKey(deps, [pk], { projection: 'pk, #state', names: { '#state': 'state' } });
    expect(rows.get(pk)).toEqual({ pk, state: 'leased' });
  });
});

describe('parseLedgerKey', () => {
  it('splits a ledger key back into its parts and refuses malformed keys', () => {
    expect(parseLedgerKey(ledgerKey('platform', 'evt:1#x', 'billing-meter'))).toEqual({
      source: 'platform',
      eventId: 'evt:1#x',
      consumerId: 'billing-meter',
    });
    for (const bad of ['', 'platform', ':evt#c', 'platform:#c', 'platform:evt#']) expect(parseLedgerKey(bad)).toBeUndefined();
  });
});
