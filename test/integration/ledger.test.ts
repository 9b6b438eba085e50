import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../adapters/ledger';
import { LedgerErasure } from '../../adapters/ledger-erasure';
import { createTable, startTestDynamo } from '../support/dynamo';
import { deliveryMessage, NOW } from '../support/factories';

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let ledger: Ledger;
const units: number[] = [];

beforeAll(async () => {
  dynamo = await startTestDynamo();
  await createTable(dynamo.client, 'ledger');
  ledger = new Ledger({ client: dynamo.doc, tableName: 'ledger', onCapacity: (_op, w) => units.push(w) });
});
afterAll(() => dynamo?.stop());

const LEASE = 60_000;
const A = 'arn:aws:iam::1:role/worker-a';
const B = 'arn:aws:iam::1:role/worker-b';

describe('ledger on DynamoDB Local', () => {
  it('first claim leases attempt 1, records the read, and the ack writes one usage row', async () => {
    const message = deliveryMessage({ eventId: 'evt_01J8K7M2Q4' });
    expect(await ledger.claim({ message, now: NOW, leaseMs: LEASE, principal: A })).toEqual({ kind: 'claimed', attempt: 1, replay: false });
    expect(
      await ledger.acknowledge({
        message,
        attempt: 1,
        replay: false,
        units: 5,
        principal: A,
        policyVersion: 'units-2026-11',
        now: NOW + 10,
      }),
    ).toBe(true);
    const row = await ledger.get('platform', 'evt_01J8K7M2Q4', 'billing-meter');
    expect(row).toMatchObject({
      pk: 'platform:evt_01J8K7M2Q4#billing-meter',
      state: 'done',
      units: 5,
      tenantId: 'tenant_204',
      keyId: 'key_42',
      ackAttempt: 1,
      principal: A,
      policyVersion: 'units-2026-11',
    });
    expect(row?.reads).toEqual([{ principal: A, at: NOW }]);
    expect(row?.leaseUntil).toBeUndefined();
  });

  it('a second attempt that finds the row done finishes cleanly with no new units', async () => {
    const message = deliveryMessage({ eventId: 'evt_01J8K7M2Q4' });
    expect(await ledger.claim({ message, now: NOW + 1000, leaseMs: LEASE, principal: A })).toEqual({ kind: 'done' });
    expect((await ledger.get('platform', 'evt_01J8K7M2Q4', 'billing-meter'))?.units).toBe(5);
  });

  it('refuses a claim under a live lease and fences the late worker after a takeover', async () => {
    const message = deliveryMessage({ eventId: 'evt_01J8K7M2S6' });
    expect(await ledger.claim({ message, now: NOW, leaseMs: LEASE, principal: A })).toMatchObject({ kind: 'claimed', attempt: 1 });
    expect(await ledger.claim({ message, now: NOW + 5_000, leaseMs: LEASE, principal: B })).toEqual({
      kind: 'busy',
      leaseUntil: NOW + LEASE,
    });
    // A's lease expires; B takes over with attempt 2.
    expect(await ledger.claim({ message, now: NOW + LEASE + 1, leaseMs: LEASE, principal: B })).toMatchObject({
      kind: 'claimed',
      attempt: 2,
    });
    // A finishes late: fenced off, nothing written.
    expect(
      await ledger.acknowledge({ message, attempt: 1, replay: false, units: 5, principal: A, policyVersion: 'v1', now: NOW + LEASE + 2 }),
    ).toBe(false);
    expect(
      await ledger.acknowledge({ message, attempt: 2, replay: false, units: 5, principal: B, policyVersion: 'v1', now: NOW + LEASE + 3 }),
    ).toBe(true);
    const row = await ledger.get('platform', 'evt_01J8K7M2S6', 'billing-meter');
    expect(row).toMatchObject({ state: 'done', units: 5, ackAttempt: 2, principal: B });
    expect(row?.reads.map((r) => r.principal)).toEqual([A, B]);
  });

  it('keeps the failure history and lets a quarantined delivery be claimed again after redrive', async () => {
    const message = deliveryMessage({ eventId: 'evt_01J8K7M2T7', consumerId: 'risk-evaluator' });
    for (let attempt = 1; attempt <= 2; attempt++) {
      expect(await ledger.claim({ message, now: NOW + attempt, leaseMs: LEASE, principal: A })).toMatchObject({ attempt });
      expect(
        await ledger.recordFailure({
          message,
          attempt,
          replay: false,
          category: 'TypeError',
          errorMessage: `boom ${attempt}`,
          quarantine: attempt === 2,
          now: NOW + attempt,
        }),
      ).toBe(true);
    }
    let row = await ledger.get('platform', 'evt_01J8K7M2T7', 'risk-evaluator');
    expect(row).toMatchObject({ state: 'quarantined', lastErrorCategory: 'TypeError' });
    expect(row?.errors?.map((e) => e.message)).toEqual(['boom 1', 'boom 2']);
    expect(await ledger.claim({ message, now: NOW + 100, leaseMs: LEASE, principal: A })).toMatchObject({ kind: 'claimed', attempt: 3 });
    expect(
      await ledger.acknowledge({ message, attempt: 3, replay: false, units: 1, principal: A, policyVersion: 'v1', now: NOW + 101 }),
    ).toBe(true);
    row = await ledger.get('platform', 'evt_01J8K7M2T7', 'risk-evaluator');
    expect(row).toMatchObject({ state: 'done', units: 1 });
    expect(row?.errors).toHaveLength(2);
  });

  it('a replay of a done delivery re-runs once under a replay lease and never changes its units', async () => {
    const message = deliveryMessage({ eventId: 'evt_01J8K7M2Q4', replayId: 'rpl_01' });
    const claim = await ledger.claim({ message, now: NOW + 2000, leaseMs: LEASE, principal: A });
    expect(claim).toEqual({ kind: 'claimed', attempt: 2, replay: true });
    expect(
      await ledger.acknowledge({
        message,
        attempt: 2,
        replay: true,
        units: 99,
        principal: A,
        policyVersion: 'units-2027-01',
        now: NOW + 2001,
      }),
    ).toBe(true);
    // The same replay delivered twice does nothing more.
    expect(await ledger.claim({ message, now: NOW + 3000, leaseMs: LEASE, principal: A })).toEqual({ kind: 'done' });
    const row = await ledger.get('platform', 'evt_01J8K7M2Q4', 'billing-meter');
    expect(row).toMatchObject({ state: 'done', units: 5, policyVersion: 'units-2026-11' });
    expect(row?.replays).toEqual([{ replayId: 'rpl_01', at: NOW + 2001, policyVersion: 'units-2027-01', attempt: 2, outcome: 'ok' }]);
  });

  it('costs one write unit per claim and per acknowledgement for a small row', async () => {
    units.length = 0;
    const message = deliveryMessage({ eventId: 'evt_01J8K7M2U8' });
    await ledger.claim({ message, now: NOW, leaseMs: LEASE, principal: A });
    await ledger.acknowledge({ message, attempt: 1, replay: false, units: 1, principal: A, policyVersion: 'v1', now: NOW });
    expect(units).toEqual([1, 1]);
  });

  it('keeps a row bounded at the largest retry budget: 1000 failed attempts keep 50 reads and 50 errors, the rest counted', async () => {
    const message = deliveryMessage({ eventId: 'evt_01J8K7CAP1', consumerId: 'risk-evaluator' });
    const longMessage = 'RangeError: risk model cannot score evt_01J8K7CAP1 '.padEnd(300, '.');
    for (let attempt = 1; attempt <= 1000; attempt++) {
      const at = NOW + attempt * 10;
      expect(await ledger.claim({ message, now: at, leaseMs: 1, principal: A })).toEqual({ kind: 'claimed', attempt, replay: false });
      const failed = {
        message,
        attempt,
        replay: false,
        category: 'RangeError',
        errorMessage: longMessage,
        quarantine: attempt === 1000,
        now: at + 1,
      };
      expect(await ledger.recordFailure(failed)).toBe(true);
    }
    const row = await ledger.get('platform', 'evt_01J8K7CAP1', 'risk-evaluator');
    expect(row).toMatchObject({
      state: 'quarantined',
      attempt: 1000,
      readsDropped: 950,
      errorsDropped: 950,
      lastErrorCategory: 'RangeError',
    });
    expect(row?.reads).toHaveLength(50);
    expect(row?.errors).toHaveLength(50);
    expect(row?.errors?.[49]).toMatchObject({ attempt: 50 });
    // Far below DynamoDB's 400 KB item limit.
    expect(Buffer.byteLength(JSON.stringify(row))).toBeLessThan(40_000);
    // A fenced failure is still refused once the log is full (the cap never lets a late worker write).
    expect(
      await ledger.recordFailure({
        message,
        attempt: 999,
        replay: false,
        category: 'late',
        errorMessage: 'late',
        quarantine: false,
        now: NOW,
      }),
    ).toBe(false);
  }, 120_000);
});

describe('erasure on the ledger (DynamoDB Local)', () => {
  const erasure = { at: NOW + 500, erasureId: 'era_01J8K7ERA1', operator: 'e2e-operator' };
  const erasing = () => new LedgerErasure({ client: dynamo.doc, tableName: 'ledger' });
  const delivery = (eventId: string, consumerId: string) => ({
    source: 'platform',
    eventId,
    consumerId,
    eventType: 'payment.succeeded',
    tenantId: 'tenant_204',
    keyId: 'key_42',
    receivedAt: NOW,
  });
  /** Failed attempts quoting the body, as a team's handler may; the last one quarantines unless `thenDone`. */
  async function failTwice(eventId: string, thenDone: boolean): Promise<void> {
    const message = deliveryMessage({ eventId, consumerId: 'risk-evaluator' });
    for (let attempt = 1; attempt <= 2; attempt++) {
      await ledger.claim({ message, now: NOW + attempt, leaseMs: LEASE, principal: A });
      await ledger.recordFailure({
        message,
        attempt,
        replay: false,
        category: 'invalid_payload',
        errorMessage: `card 4242 of Zoë Quist declined (${attempt})`,
        quarantine: !thenDone && attempt === 2,
        now: NOW + attempt,
      });
    }
    if (thenDone) {
      await ledger.claim({ message, now: NOW + 3, leaseMs: LEASE, principal: A });
      await ledger.acknowledge({ message, attempt: 3, replay: false, units: 1, principal: A, policyVersion: 'v1', now: NOW + 3 });
    }
  }

  it("replaces a quarantined delivery's error messages with `erased`, keeping category, attempt and time, and its own entry", async () => {
    await failTwice('evt_01J8K7ERQ1', false);
    expect(await erasing().eraseDelivery(delivery('evt_01J8K7ERQ1', 'risk-evaluator'), erasure)).toEqual({
      mark: 'quarantined',
      scrubbed: 2,
    });
    const row = await ledger.get('platform', 'evt_01J8K7ERQ1', 'risk-evaluator');
    expect(row).toMatchObject({ state: 'quarantined', lastErrorCategory: 'payload_erased', erasedAt: NOW + 500 });
    expect(row?.errors).toEqual([
      { attempt: 1, category: 'invalid_payload', message: 'erased', at: NOW + 1 },
      { attempt: 2, category: 'invalid_payload', message: 'erased', at: NOW + 2 },
      { attempt: 0, category: 'payload_erased', message: 'payload erased by e2e-operator (era_01J8K7ERA1)', at: NOW + 500 },
    ]);
    // Again: nothing left to scrub, already erased.
    expect(await erasing().eraseDelivery(delivery('evt_01J8K7ERQ1', 'risk-evaluator'), erasure)).toEqual({ mark: 'already', scrubbed: 0 });
  });

  it("scrubs a done delivery's failed attempts and leaves its state, units and access log as they are", async () => {
    await failTwice('evt_01J8K7ERD1', true);
    expect(await erasing().eraseDelivery(delivery('evt_01J8K7ERD1', 'risk-evaluator'), erasure)).toEqual({ mark: 'done', scrubbed: 2 });
    const row = await ledger.get('platform', 'evt_01J8K7ERD1', 'risk-evaluator');
    expect(row).toMatchObject({ state: 'done', units: 1, ackAttempt: 3 });
    expect(row?.erasedAt).toBeUndefined();
    expect(row?.reads).toHaveLength(3);
    expect(row?.errors?.map((e) => [e.attempt, e.category, e.message, e.at])).toEqual([
      [1, 'invalid_payload', 'erased', NOW + 1],
      [2, 'invalid_payload', 'erased', NOW + 2],
    ]);
  });

  it('reads the log again when an error was appended since it was read, and scrubs that one too', async () => {
    await failTwice('evt_01J8K7ERR1', true);
    const stale = (await ledger.get('platform', 'evt_01J8K7ERR1', 'risk-evaluator'))?.errors?.slice(0, 1);
    expect(await erasing().scrubErrors(delivery('evt_01J8K7ERR1', 'risk-evaluator'), stale)).toBe(2);
    const row = await ledger.get('platform', 'evt_01J8K7ERR1', 'risk-evaluator');
    expect(row?.errors?.map((e) => e.message)).toEqual(['erased', 'erased']);
    // A delivery with no row has nothing to scrub, and none is created.
    expect(await erasing().scrubErrors(delivery('evt_01J8K7ERNO', 'risk-evaluator'))).toBe(0);
    expect(await ledger.get('platform', 'evt_01J8K7ERNO', 'risk-evaluator')).toBeUndefined();
  });
});
