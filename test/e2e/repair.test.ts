/**
 * `reconcile --repair` on planted losses, through the real fan-out and consumers of the local stack:
 * a deleted queue message, a stream batch the fan-out gave up on (on-failure queue), a purged queue,
 * a worker that died holding its lease, a paused consumer, and a repair of a delivery whose message
 * was not lost after all. Each ends with the delivery done once: one ledger row, attempt as expected,
 * units charged once.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { DeleteMessageCommand, type Message, PurgeQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoStreamBatches } from '../../adapters/stream-batch';
import { main } from '../../bin/cli';
import type { DeliveryMessage, LedgerItem } from '../../core/model';
import config from '../../hookledger.config';
import type { FanoutHandler } from '../../lambdas/fanout/app';
import { reconcile } from '../../lambdas/reconcile/reconcile';
import { type RepairDeps, repair } from '../../lambdas/reconcile/repair';
import { localStreamsClient } from '../../local/clients';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { status } from '../../ops/status';
import { takeAll } from '../reliability/support';
import { platformEvent, signedHeaders } from '../support/factories';
import { ledgerRows, queueDepth, send, startTestStack } from '../support/stack';

let stack: LocalStack;
let t0: number;
let statePath: string;
/** Added to the stack's clock: a negative offset makes intake record receipts in the past. */
let clockOffset = 0;
const clock = () => Date.now() + clockOffset;
const DAY = 86_400_000;

beforeAll(async () => {
  // The fan-out failure below is planted: keep the stream poller's warnings about it off the console.
  stack = await startTestStack({ pollerLogger: () => ({ warn: () => undefined, error: () => undefined }), clock });
  t0 = Date.now() - 1000;
  statePath = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-repair-')), 'state.json');
  await writeState(statePath, stackState(stack, null));
});
afterAll(() => stack?.stop());

/** Without `streams`: a caller that cannot read the EventStore stream back (or past its 24 h). */
const deps = (options: { streams?: boolean } = {}): RepairDeps => ({
  ddb: stack.handlers.ddb,
  tables: stack.resources.tables,
  operator: 'e2e',
  fanoutFailures: {
    sqs: stack.handlers.sqs,
    queueUrl: stack.resources.fanoutFailureQueue.url,
    ...(options.streams === false ? {} : { streams: dynamoStreamBatches(localStreamsClient(stack.endpoints.dynamodb)) }),
  },
});
const window = () => ({ from: t0, to: Date.now() + 1, graceMs: 0 });
const queueOf = (consumer: string) => stack.resources.queues[consumer]!.url;

async function rowsOf(eventId: string): Promise<LedgerItem[]> {
  return (await ledgerRows(stack)).filter((r) => r.eventId === eventId).sort((a, b) => a.consumerId.localeCompare(b.consumerId));
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Sends while `consumer` is paused and takes its message away (lost), then resumes it. */
async function sendAndLose(consumer: string, events: { id: string; type: string }[], lose: 'delete' | 'purge'): Promise<DeliveryMessage[]> {
  await stack.pause(consumer);
  for (const e of events) expect((await send(stack, platformEvent({ id: e.id, type: e.type }))).status).toBe(202);
  await waitFor(
    `${events.length} messages on ${consumer}'s queue`,
    async () => (await queueDepth(stack, queueOf(consumer))) === events.length,
  );
  let lost: DeliveryMessage[] = [];
  if (lose === 'delete') lost = await takeAll(stack.handlers.sqs, queueOf(consumer));
  else {
    await stack.handlers.sqs.send(new PurgeQueueCommand({ QueueUrl: queueOf(consumer) }));
    await waitFor(`${consumer}'s queue purged`, async () => (await queueDepth(stack, queueOf(consumer))) === 0);
  }
  stack.resume(consumer);
  await stack.drain();
  return lost;
}

async function auditOf(repairId: string) {
  const out = await stack.handlers.ddb.send(
    new ScanCommand({
      TableName: stack.resources.tables.events,
      FilterExpression: 'kind = :audit AND auditId = :id',
      ExpressionAttributeValues: { ':audit': 'audit', ':id': repairId },
    }),
  );
  return out.Items ?? [];
}

/** An event received `daysAgo` days ago (intake's clock set back) and delivered to its consumers then. */
async function sendOld(id: string, daysAgo: number): Promise<void> {
  clockOffset = -daysAgo * DAY;
  try {
    const body = JSON.stringify(platformEvent({ id, type: 'payment.succeeded' }));
    const secret = (await stack.secrets.get('platform')).current;
    const res = await fetch(stack.webhookUrl('platform'), {
      method: 'POST',
      headers: signedHeaders(body, { secret, at: clock(), msgId: `msg_${id}` }),
      body,
    });
    expect(res.status).toBe(202);
    await stack.drain();
  } finally {
    clockOffset = 0;
  }
}

/** Replays `eventId` to `consumer` with `hookledger replay` while the fan-out fails on that re-queue, until it is skipped. */
async function replayLostByFanout(eventId: string, consumer: string): Promise<string> {
  const original = stack.handlers.fanout;
  const handlers = stack.handlers as { fanout: FanoutHandler };
  handlers.fanout = async (event) => {
    const requeueOf = (r: (typeof event.Records)[number]) =>
      r.dynamodb?.NewImage?.kind?.S === 'requeue' && r.dynamodb.NewImage.eventId?.S === eventId;
    if (event.Records.some(requeueOf)) throw new Error('injected fan-out failure');
    return original(event);
  };
  try {
    const replayed = await cli(['replay', '--consumer', consumer, '--event', eventId, '--yes', '--json']);
    expect(replayed.code).toBe(0);
    await waitFor('the on-failure record', async () => (await queueDepth(stack, stack.resources.fanoutFailureQueue.url)) === 1);
    return (JSON.parse(replayed.stdout) as { replayId: string }).replayId;
  } finally {
    handlers.fanout = original;
  }
}

describe('reconcile --repair on planted losses (local stack)', () => {
  it('re-queues a delivery whose queue message was deleted: one audit entry, done once, no second row', async () => {
    const lost = await sendAndLose('billing-meter', [{ id: 'evt_01J8K7RP01', type: 'invoice.paid' }], 'delete');
    expect(lost.map((m) => `${m.eventId}#${m.consumerId}`)).toEqual(['evt_01J8K7RP01#billing-meter']);
    expect((await rowsOf('evt_01J8K7RP01')).map((r) => `${r.consumerId}:${r.state}`)).toEqual(['audit-writer:done']);

    const dry = await repair(deps(), { ...window(), trigger: 'cli', dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, candidates: 1, repaired: 1, unrepaired: 0 });
    expect(dry.repairId).toBeUndefined();

    const result = await repair(deps(), { ...window(), trigger: 'cli' });
    expect(result).toMatchObject({ dryRun: false, candidates: 1, repaired: 1, unrepaired: 0, notRepairable: 0 });
    expect(result.deliveries).toEqual([
      {
        kind: 'missing_delivery',
        source: 'platform',
        eventId: 'evt_01J8K7RP01',
        consumerId: 'billing-meter',
        ledgerKey: 'platform:evt_01J8K7RP01#billing-meter',
      },
    ]);
    expect(result.repairId).toMatch(/^rep_[0-9A-Z]{26}$/);
    const audit = await auditOf(result.repairId!);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      action: 'repair',
      operator: 'e2e',
      trigger: 'cli',
      count: 1,
      deliveries: ['platform:evt_01J8K7RP01#billing-meter'],
    });
    await stack.drain();

    const rows = await rowsOf('evt_01J8K7RP01');
    expect(rows.map((r) => [r.consumerId, r.state, r.attempt, r.units])).toEqual([
      ['audit-writer', 'done', 1, 1],
      ['billing-meter', 'done', 1, 1],
    ]);
    // A repair is an ordinary delivery: no replay recorded, no replay id on the row.
    expect(rows[1]?.replays).toBeUndefined();
    expect(rows[1]?.replayId).toBeUndefined();
    expect((await reconcile(deps(), window())).violations.filter((v) => v.eventId === 'evt_01J8K7RP01')).toEqual([]);
  });

  it('repairs the deliveries of a stream batch the fan-out gave up on, and clears its on-failure record', async () => {
    const original = stack.handlers.fanout;
    const handlers = stack.handlers as { fanout: FanoutHandler };
    // The fan-out fails on this event's record until its retries are spent (then bisected to it alone).
    handlers.fanout = async (event) => {
      if (event.Records.some((r) => JSON.stringify(r.dynamodb?.NewImage ?? {}).includes('evt_01J8K7RF01')))
        throw new Error('injected fan-out failure');
      return original(event);
    };
    try {
      expect((await send(stack, platformEvent({ id: 'evt_01J8K7RF01', type: 'payment.succeeded' }))).status).toBe(202);
      await waitFor('the on-failure record', async () => (await queueDepth(stack, stack.resources.fanoutFailureQueue.url)) === 1);
    } finally {
      handlers.fanout = original;
    }
    await stack.drain();
    expect(await rowsOf('evt_01J8K7RF01')).toEqual([]);
    const seen = await status(
      {
        ddb: stack.handlers.ddb,
        tables: stack.resources.tables,
        config,
        sqs: stack.handlers.sqs,
        fanoutFailureQueueUrl: stack.resources.fanoutFailureQueue.url,
      },
      {},
    );
    expect(seen.fanoutFailures).toEqual({ visible: 1, inFlight: 0 });
    const shown = await cli(['status']);
    expect(shown.stdout).toContain('fan-out on-failure queue: 1 record(s)');

    // Within any grace period, the failure record alone says these deliveries will never come.
    const result = await repair(deps(), { from: t0, to: Date.now() + 1, graceMs: 15 * 60_000, trigger: 'cli' });
    expect(result.report.counts.missing_delivery).toBe(0);
    expect(result).toMatchObject({ repaired: 3, unrepaired: 0, fanoutFailureRecords: { read: 1, cleared: 1, unreadable: 0 } });
    expect(result.deliveries.map((d) => d.ledgerKey).sort()).toEqual([
      'platform:evt_01J8K7RF01#audit-writer',
      'platform:evt_01J8K7RF01#billing-meter',
      'platform:evt_01J8K7RF01#risk-evaluator',
    ]);
    expect(await queueDepth(stack, stack.resources.fanoutFailureQueue.url)).toBe(0);
    expect((await cli(['status'])).stdout).toContain('fan-out on-failure queue: 0 record(s)');
    await stack.drain();
    expect((await rowsOf('evt_01J8K7RF01')).map((r) => [r.consumerId, r.state, r.attempt, r.units])).toEqual([
      ['audit-writer', 'done', 1, 1],
      ['billing-meter', 'done', 1, 5],
      ['risk-evaluator', 'done', 1, 1],
    ]);
  });

  it('repairs a purged queue: every lost delivery re-queued once, siblings untouched', async () => {
    const ids = ['evt_01J8K7RQ01', 'evt_01J8K7RQ02', 'evt_01J8K7RQ03'];
    await sendAndLose(
      'audit-writer',
      ids.map((id) => ({ id, type: 'customer.updated' })),
      'purge',
    );
    const siblings = (await ledgerRows(stack))
      .filter((r) => ids.includes(r.eventId))
      .map((r) => JSON.stringify(r))
      .sort();
    expect(siblings).toHaveLength(3);

    const result = await repair(deps(), { ...window(), trigger: 'cli' });
    expect(result).toMatchObject({ candidates: 3, repaired: 3, unrepaired: 0 });
    expect(result.deliveries.map((d) => d.ledgerKey).sort()).toEqual(ids.map((id) => `platform:${id}#audit-writer`));
    await stack.drain();

    const rows = (await ledgerRows(stack)).filter((r) => ids.includes(r.eventId));
    expect(rows).toHaveLength(6);
    expect(
      rows
        .filter((r) => r.consumerId === 'billing-meter')
        .map((r) => JSON.stringify(r))
        .sort(),
    ).toEqual(siblings);
    expect(
      rows
        .filter((r) => r.consumerId === 'audit-writer')
        .map((r) => [r.eventId, r.state, r.attempt, r.units])
        .sort(),
    ).toEqual(ids.map((id) => [id, 'done', 1, 1]));
  });

  it('repairs a delivery whose worker died holding its lease (stalled): taken over with attempt 2', async () => {
    const [lost] = await sendAndLose('audit-writer', [{ id: 'evt_01J8K7RS01', type: 'invoice.paid' }], 'delete');
    // The dead worker's claim: leased, the lease long over, the message gone with it.
    const claim = await stack.handlers.ledger.claim({
      message: lost!,
      now: Date.now() - 120_000,
      leaseMs: 60_000,
      principal: 'arn:aws:iam::000000000000:role/dead-worker',
    });
    expect(claim).toMatchObject({ kind: 'claimed', attempt: 1 });

    const result = await repair(deps(), { ...window(), trigger: 'cli' });
    expect(result.deliveries.map((d) => [d.kind, d.ledgerKey])).toEqual([['stalled_delivery', 'platform:evt_01J8K7RS01#audit-writer']]);
    await stack.drain();
    expect((await rowsOf('evt_01J8K7RS01')).map((r) => [r.consumerId, r.state, r.attempt, r.ackAttempt, r.units])).toEqual([
      ['audit-writer', 'done', 2, 2, 1],
      ['billing-meter', 'done', 1, 1, 1],
    ]);
  });

  it('reports a paused consumer not repaired (CLI: exit 1, --dry-run writes nothing), then repairs it once resumed', async () => {
    await stack.pause('risk-evaluator');
    expect((await send(stack, platformEvent({ id: 'evt_01J8K7RV01', type: 'payment.failed' }))).status).toBe(202);
    await waitFor('the risk-evaluator message', async () => (await queueDepth(stack, queueOf('risk-evaluator'))) === 1);
    await stack.handlers.sqs.send(new PurgeQueueCommand({ QueueUrl: queueOf('risk-evaluator') }));
    await stack.drain();

    const from = new Date(t0).toISOString();
    const paused = await cli(['reconcile', '--repair', '--grace', '0s', '--from', from, '--json']);
    expect(paused.code).toBe(1);
    const report = JSON.parse(paused.stdout) as {
      repaired: number;
      unrepaired: number;
      unrepairedDeliveries: { ledgerKey: string; reason: string }[];
    };
    expect(report).toMatchObject({ repaired: 0, unrepaired: 1 });
    expect(report.unrepairedDeliveries.map((d) => [d.ledgerKey, d.reason])).toEqual([['platform:evt_01J8K7RV01#risk-evaluator', 'paused']]);
    expect((await rowsOf('evt_01J8K7RV01')).map((r) => r.consumerId)).toEqual(['audit-writer', 'billing-meter']);

    stack.resume('risk-evaluator');
    const dry = await cli(['reconcile', '--repair', '--dry-run', '--grace', '0s', '--from', from]);
    expect(dry.code).toBe(1);
    expect(dry.stdout).toContain('Dry run: 1 deliveries would be re-queued, 0 not (none). Nothing written.');
    // risk-evaluator runs again: had the dry run queued anything, the drain would wait for its row.
    await stack.drain();
    expect((await rowsOf('evt_01J8K7RV01')).map((r) => r.consumerId)).toEqual(['audit-writer', 'billing-meter']);

    const fixed = await cli(['reconcile', '--repair', '--grace', '0s', '--from', from]);
    expect(fixed.code).toBe(0);
    expect(fixed.stdout).toMatch(/Repair rep_[0-9A-Z]{26}: 1 repaired \(re-queued\), 0 not repaired \(none\); audit written\./);
    await stack.drain();
    expect((await rowsOf('evt_01J8K7RV01')).map((r) => [r.consumerId, r.state, r.attempt, r.units])).toEqual([
      ['audit-writer', 'done', 1, 1],
      ['billing-meter', 'done', 1, 3],
      ['risk-evaluator', 'done', 1, 1],
    ]);
    const clean = await cli(['reconcile', '--grace', '0s', '--from', from]);
    expect(clean.stdout).toContain('ok: no violations');
    expect(clean.code).toBe(0);
  });

  it('a repair of a delivery that completed meanwhile leaves it done: no second row, no second charge', async () => {
    await stack.pause('billing-meter');
    expect((await send(stack, platformEvent({ id: 'evt_01J8K7RD01', type: 'payment.succeeded' }))).status).toBe(202);
    await waitFor('the billing-meter message', async () => (await queueDepth(stack, queueOf('billing-meter'))) === 1);
    // Its siblings done first (a batching window may still hold them): only billing-meter is missing.
    await waitFor(
      'audit-writer and risk-evaluator done',
      async () => (await rowsOf('evt_01J8K7RD01')).filter((r) => r.state === 'done').length === 2,
    );
    // Told nothing is paused, the repair sends a second copy beside the waiting message.
    const result = await repair(deps(), { ...window(), trigger: 'cli', paused: new Set() });
    expect(result.deliveries.map((d) => d.ledgerKey)).toEqual(['platform:evt_01J8K7RD01#billing-meter']);
    await waitFor('both copies queued', async () => (await queueDepth(stack, queueOf('billing-meter'))) === 2);
    // The worker takes one copy and completes the delivery; then the other copy arrives.
    const out = await stack.handlers.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueOf('billing-meter'),
        MaxNumberOfMessages: 1,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    const first = out.Messages![0]!;
    const response = await stack.handlers.consumers['billing-meter']!({ Records: [sqsRecord(first)] });
    expect(response.batchItemFailures).toEqual([]);
    await stack.handlers.sqs.send(new DeleteMessageCommand({ QueueUrl: queueOf('billing-meter'), ReceiptHandle: first.ReceiptHandle }));
    stack.resume('billing-meter');
    await stack.drain();
    expect(await queueDepth(stack, queueOf('billing-meter'))).toBe(0);
    const rows = await stack.handlers.ddb.send(
      new QueryCommand({
        TableName: stack.resources.tables.ledger,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'platform:evt_01J8K7RD01#billing-meter' },
      }),
    );
    expect(rows.Items).toHaveLength(1);
    expect(rows.Items?.[0]).toMatchObject({ state: 'done', attempt: 1, ackAttempt: 1, units: 5 });
    // The second copy found it done: not claimed (one read), not replayed.
    const row = rows.Items?.[0] as LedgerItem | undefined;
    expect(row?.reads).toHaveLength(1);
    expect(row?.replays).toBeUndefined();
  });

  it('re-sends a replay of a three-day-old receipt whose re-queue the fan-out gave up on, and only then clears the record', async () => {
    await sendOld('evt_01J8K7RO01', 3);
    const before = (await rowsOf('evt_01J8K7RO01')).find((r) => r.consumerId === 'billing-meter');
    expect(before).toMatchObject({ state: 'done', attempt: 1, units: 5 });
    expect(before!.receivedAt).toBeLessThan(Date.now() - 2 * DAY);
    const replayId = await replayLostByFanout('evt_01J8K7RO01', 'billing-meter');
    expect(replayId).toMatch(/^rpl_/);
    // The replay never reached billing-meter: no replay on its row.
    expect((await rowsOf('evt_01J8K7RO01')).find((r) => r.consumerId === 'billing-meter')?.replays).toBeUndefined();

    // The receipt is outside the record's arrival range: only decoding the record finds the replay.
    const result = await repair(deps(), { from: Date.now() - 3_600_000, to: Date.now() + 1, graceMs: 0, trigger: 'cli' });
    expect(result.deliveries).toEqual([
      {
        kind: 'missing_delivery',
        source: 'platform',
        eventId: 'evt_01J8K7RO01',
        consumerId: 'billing-meter',
        ledgerKey: 'platform:evt_01J8K7RO01#billing-meter',
        replayId,
      },
    ]);
    expect(result).toMatchObject({ repaired: 1, unrepaired: 0, fanoutFailureRecords: { read: 1, cleared: 1, undecoded: 0 } });
    expect(await auditOf(result.repairId!)).toEqual([
      expect.objectContaining({ replaysResent: [{ ledgerKey: 'platform:evt_01J8K7RO01#billing-meter', replayId }] }),
    ]);
    expect(await queueDepth(stack, stack.resources.fanoutFailureQueue.url)).toBe(0);
    await stack.drain();
    // Replayed once, as that replay: re-run without a second charge; the other consumers untouched.
    const rows = await rowsOf('evt_01J8K7RO01');
    expect(rows.map((r) => [r.consumerId, r.state, r.attempt, r.units, (r.replays ?? []).map((p) => p.replayId)])).toEqual([
      ['audit-writer', 'done', 1, 1, []],
      ['billing-meter', 'done', 2, 5, [replayId]],
      ['risk-evaluator', 'done', 1, 1, []],
    ]);
  });

  it('keeps an on-failure record it cannot decode (no stream records to read) and reports it; a later decoding run repairs it', async () => {
    await sendOld('evt_01J8K7RO02', 2);
    const replayId = await replayLostByFanout('evt_01J8K7RO02', 'audit-writer');

    const blind = await repair(deps({ streams: false }), { from: Date.now() - 3_600_000, to: Date.now() + 1, graceMs: 0, trigger: 'cli' });
    expect(blind).toMatchObject({ repaired: 0, fanoutFailureRecords: { read: 1, cleared: 0, undecoded: 1, unreadable: 0 } });
    expect(await queueDepth(stack, stack.resources.fanoutFailureQueue.url)).toBe(1);
    const shown = await cli(['reconcile', '--repair', '--dry-run', '--grace', '0s', '--from', '-1h']);
    expect(shown.stdout).toContain('Fan-out failure records: 1 read, 0 cleared.');

    const fixed = await repair(deps(), { from: Date.now() - 3_600_000, to: Date.now() + 1, graceMs: 0, trigger: 'cli' });
    expect(fixed.deliveries.map((d) => [d.ledgerKey, d.replayId])).toEqual([['platform:evt_01J8K7RO02#audit-writer', replayId]]);
    expect(fixed.fanoutFailureRecords).toEqual({ read: 1, cleared: 1, unreadable: 0, undecoded: 0 });
    await stack.drain();
    const row = (await rowsOf('evt_01J8K7RO02')).find((r) => r.consumerId === 'audit-writer');
    expect(row).toMatchObject({ state: 'done', attempt: 2, units: 1 });
    expect(row?.replays?.map((p) => p.replayId)).toEqual([replayId]);
  });
});

function sqsRecord(message: Message): SQSRecord {
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body!,
    attributes: { ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1' } as SQSRecord['attributes'],
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: stack.resources.queues['billing-meter']!.arn,
    awsRegion: 'us-east-1',
  };
}

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (write: (s: string) => void) =>
    new Writable({
      write(chunk, _enc, done) {
        write(String(chunk));
        done();
      },
    });
  const code = await main(
    args,
    {
      stdout: sink((s) => (stdout += s)),
      stderr: sink((s) => (stderr += s)),
      stdin: process.stdin,
      env: { ...process.env, HOOKLEDGER_STATE: statePath, USER: 'e2e-cli' },
    },
    config,
  );
  return { code, stdout, stderr };
}
