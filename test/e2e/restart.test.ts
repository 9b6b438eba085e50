/**
 * Restarting a file-backed local stack (what `npm start` after Ctrl-C does) resumes the fan-out after
 * its saved stream checkpoint: nothing already delivered is delivered again, nothing new is missed;
 * and a body kept in the payload bucket is still there (local/durable-s3.ts).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConsumerHandle } from '../../lambdas/runtime/runtime';
import type { DeliveryProgress, LocalStack } from '../../local/stack';
import { platformEvent } from '../support/factories';
import { doneRows, send, startTestStack } from '../support/stack';

const dataDir = mkdtempSync(path.join(tmpdir(), 'hookledger-restart-'));
const secretsFile = path.join(dataDir, 'secrets.json');
let stack: LocalStack | undefined;
afterAll(() => stack?.stop());

describe('restarting a file-backed local stack', () => {
  it('keeps its receipts and rows, re-delivers nothing, and delivers what arrives after the restart', async () => {
    stack = await startTestStack({ dataDir, secretsFile });
    for (const id of ['evt_01J8K7T001', 'evt_01J8K7T002']) expect((await send(stack, platformEvent({ id }))).status).toBe(202);
    await stack.drain();
    expect(await doneRows(stack)).toHaveLength(6);
    await stack.stop();

    const deliveries: DeliveryProgress[] = [];
    stack = await startTestStack({ dataDir, secretsFile, onDelivery: (d) => deliveries.push(d) });
    await stack.drain();
    expect(deliveries).toEqual([]);

    // The sentinel: the stream is ordered, so once the event sent after the restart is delivered, any
    // record read again from before the checkpoint would have been delivered before it.
    expect((await send(stack, platformEvent({ id: 'evt_01J8K7T003', type: 'invoice.paid' }))).status).toBe(202);
    await stack.drain();
    expect(deliveries.map((d) => `${d.consumerId}:${d.eventId}:${d.outcome}`).sort()).toEqual([
      'audit-writer:evt_01J8K7T003:processed',
      'billing-meter:evt_01J8K7T003:processed',
    ]);
    const rows = await doneRows(stack);
    expect(rows).toHaveLength(8);
    expect(rows.every((r) => r.attempt === 1)).toBe(true);
  }, 90_000);

  it('re-queues at start what the last run left unfinished (the queues start empty): each delivered once', async () => {
    await stack?.stop();
    const dir = mkdtempSync(path.join(tmpdir(), 'hookledger-restart-repair-'));
    const files = { dataDir: dir, secretsFile: path.join(dir, 'secrets.json') };
    stack = await startTestStack({ ...files, paused: ['audit-writer'] });
    for (const id of ['evt_01J8K7T101', 'evt_01J8K7T102', 'evt_01J8K7T103']) {
      expect((await send(stack, platformEvent({ id, type: 'invoice.paid' }))).status).toBe(202);
    }
    await stack.drain();
    expect((await doneRows(stack)).map((r) => r.consumerId)).toEqual(['billing-meter', 'billing-meter', 'billing-meter']);
    expect(stack.startupRepair).toMatchObject({ repaired: 0, candidates: 0 });
    await stack.stop();

    stack = await startTestStack(files);
    expect(stack.startupRepair).toMatchObject({ repaired: 3, unrepaired: 0 });
    expect(stack.startupRepair?.deliveries.map((d) => d.ledgerKey).sort()).toEqual([
      'platform:evt_01J8K7T101#audit-writer',
      'platform:evt_01J8K7T102#audit-writer',
      'platform:evt_01J8K7T103#audit-writer',
    ]);
    await stack.drain();
    const rows = await doneRows(stack);
    expect(rows).toHaveLength(6);
    expect(rows.every((r) => r.attempt === 1 && r.units === 1)).toBe(true);
    await stack.stop();

    // Nothing unfinished: the next start re-queues nothing.
    stack = await startTestStack(files);
    expect(stack.startupRepair).toMatchObject({ repaired: 0, candidates: 0 });
  }, 120_000);

  it('keeps a body stored in the payload bucket: the delivery re-queued at start reads the whole 60 KB of evt_01J8K7T301', async () => {
    await stack?.stop();
    const dir = mkdtempSync(path.join(tmpdir(), 'hookledger-restart-bucket-'));
    const files = { dataDir: dir, secretsFile: path.join(dir, 'secrets.json') };
    // Hex of a hash chain: gzip keeps about half, well over the 7,000 stored bytes kept in the item.
    const attachment = Array.from({ length: 1875 }, (_, i) => createHash('sha256').update(`t301-${i}`).digest('hex')).join('');
    const seen: { eventId: string; attachment: number | undefined; digest: string | undefined }[] = [];
    const handle: ConsumerHandle = async (ctx) => {
      const data = ctx.payload.data as { attachment?: string } | undefined;
      seen.push({
        eventId: ctx.attribution.eventId,
        attachment: data?.attachment?.length,
        digest: data?.attachment && createHash('sha256').update(data.attachment).digest('hex'),
      });
      return { units: 2 };
    };
    stack = await startTestStack({ ...files, paused: ['risk-evaluator'], handles: { 'risk-evaluator': handle } });
    const event = platformEvent({
      id: 'evt_01J8K7T301',
      type: 'payment.succeeded',
      tenant_id: 'tenant_204',
      data: { amount: 4200, attachment } as never,
    });
    expect((await send(stack, event)).status).toBe(202);
    await stack.drain();
    expect(seen).toEqual([]);
    await stack.stop();

    stack = await startTestStack({ ...files, handles: { 'risk-evaluator': handle } });
    expect(stack.startupRepair).toMatchObject({ repaired: 1, unrepaired: 0 });
    await stack.drain();
    expect(seen).toEqual([
      { eventId: 'evt_01J8K7T301', attachment: 120_000, digest: createHash('sha256').update(attachment).digest('hex') },
    ]);
    const risk = (await doneRows(stack)).filter((r) => r.consumerId === 'risk-evaluator');
    expect(risk.map((r) => [r.eventId, r.tenantId, r.units, r.attempt])).toEqual([['evt_01J8K7T301', 'tenant_204', 2, 1]]);
  }, 120_000);
});
