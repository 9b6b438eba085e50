/**
 * The eval matrix's two scenarios the shipped configuration has no consumer for, on a synthesized
 * assembly: an HTTP destination consumer (the shared HTTP worker's bundle POSTing to a receiver this
 * file starts, signed with the secret it reads from the local Secrets Manager endpoint) and an
 * ordered consumer (FIFO queue and DLQ from the template, per-key order and stale dropping in the
 * bundle). One configuration, synthesized once in this process (`addHookledgerStack`, as bin/app.ts
 * does, with cdk.json's feature flags; every function really bundled), one stack for the file, every
 * AWS call checked against the roles. The HTTP consumer's circuit breaker disables its own mapping
 * through the local Lambda endpoint; its mapping is given, in the template, a batching window and
 * a filter (settings the configuration never writes) to show the SQS poller honours both.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LambdaClient, ListEventSourceMappingsCommand, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { App } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import defaultConfig from '../../hookledger.config';
import { addHookledgerStack } from '../../lib/hookledger-stack';
import type { AssemblyStack } from '../../local/assembly/stack';
import { readAssembly } from '../../local/assembly/template';
import { writeState } from '../../local/state';
import { runCli } from '../support/cli';
import { platformEvent } from '../support/factories';
import { bodyOf, crmSyncConsumer, headerOf, verifiedWith } from '../support/receiver';
import { ledgerOf, logicalId, type Recorded, sendTo, startRecordedStack } from './support';

interface Received {
  readonly eventId: string;
  readonly webhookId: string;
  readonly verified: boolean;
  readonly payload: Record<string, unknown>;
  readonly attempt: string | undefined;
  /** What the receiver answered. */
  readonly status: number;
}

const received: Received[] = [];
/** While true the receiver answers 503 to everything (the destination is down). */
let down = false;
/** The receiver's copy of crm-sync's signing secret (what `hookledger secrets get crm-sync` prints). */
let receiverSecret = '';
let receiver: Server;
let stack: AssemblyStack;
let recorded: Recorded;
let ddb: DynamoDBDocumentClient;
let assemblyDir: string;
let config: HookledgerConfig;

beforeAll(async () => {
  receiver = createServer(async (req, res) => {
    const body = await bodyOf(req);
    const verified = verifiedWith([receiverSecret], body, req.headers);
    const payload = JSON.parse(body) as Record<string, unknown>;
    const status = !verified ? 401 : down ? 503 : 200;
    received.push({
      eventId: String(payload.id),
      webhookId: headerOf(req.headers, 'webhook-id'),
      verified,
      payload,
      attempt: headerOf(req.headers, 'hookledger-attempt') || undefined,
      status,
    });
    res.writeHead(status, status === 200 ? { 'hookledger-units': '3' } : {}).end(status === 200 ? 'ok' : '');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/hookledger`;

  config = defineConfig({
    sources: defaultConfig.sources,
    consumers: [
      crmSyncConsumer(url),
      {
        // The shipped audit-writer module (its handler is bound to its id), made an ordered consumer.
        id: 'audit-writer',
        subscribes: ['ledger.*'],
        fields: ['id', 'data.account', 'data.seq'],
        entry: 'lambdas/consumers/audit-writer.ts',
        ordering: { key: { body: 'data.account' }, version: { body: 'data.seq' } },
        maxReceiveCount: 3,
        visibilityTimeoutSeconds: 30,
        timeoutSeconds: 5,
        // One message per invocation: two receives run at once, so only the FIFO group keeps a key in order.
        batchSize: 1,
      },
    ],
  });
  // What `cdk synth -o` does with bin/app.ts, for this configuration: cdk.json's feature flags, real bundles.
  assemblyDir = mkdtempSync(path.join(tmpdir(), 'hookledger-asm-destinations-'));
  const context = (JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> })
    .context;
  const app = new App({ outdir: assemblyDir, context });
  addHookledgerStack(app, config);
  app.synth();
  // crm-sync's event source mapping with the two settings the shipped configuration never sets (CDK's
  // SqsEventSource writes its maxBatchingWindow and filters as these): a 4 s batching window (wide
  // enough that three webhooks POSTed at once reach the queue within it on a loaded 2-core machine;
  // 2 s split them once, 2 + 1, while the whole suite ran) and a filter dropping tenant_999's deliveries.
  const { templateFile } = readAssembly(assemblyDir);
  const template = JSON.parse(readFileSync(templateFile, 'utf8')) as Parameters<typeof logicalId>[0];
  const esm = template.Resources[logicalId(template, 'AWS::Lambda::EventSourceMapping', 'ConsumerscrmsyncWorkerFunctionSqsEventSource')]!;
  esm.Properties!.MaximumBatchingWindowInSeconds = 4;
  esm.Properties!.FilterCriteria = { Filters: [{ Pattern: JSON.stringify({ body: { tenantId: [{ 'anything-but': ['tenant_999'] }] } }) }] };
  writeFileSync(templateFile, JSON.stringify(template, null, 1));

  ({ stack, recorded, ddb } = await startRecordedStack(assemblyDir));
  receiverSecret = (await stack.secrets.consumerSecrets().get('crm-sync')).current;
}, 120_000);
afterAll(async () => {
  ddb?.destroy();
  await stack?.stop();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  if (assemblyDir) rmSync(assemblyDir, { recursive: true, force: true });
});

const fnId = (prefix: string) => Object.keys(stack.functions).find((id) => id.startsWith(prefix));

describe('HTTP destination crm-sync on the synthesized assembly', () => {
  it('runs the shared HTTP worker bundle for crm-sync, reading its signing secret through the local Secrets Manager endpoint', () => {
    expect(fnId('ConsumerscrmsyncWorker')).toBeDefined();
    expect(receiverSecret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
  });

  it('POSTs evt_01J8K7H001..003 once each, signed with its own secret; one done row each under its own role, 3 units', async () => {
    const ids = ['evt_01J8K7H001', 'evt_01J8K7H002', 'evt_01J8K7H003'];
    for (const [i, id] of ids.entries()) {
      const tenant = i === 1 ? { tenant_id: 'tenant_311', key_id: 'key_77' } : { tenant_id: 'tenant_204' };
      expect(await sendTo(stack, platformEvent({ id, ...tenant }))).toEqual({ status: 202, body: { event_id: id, deliveries: 1 } });
    }
    // The provider retries evt_01J8K7H001: intake answers duplicate, nothing more is POSTed.
    expect(await sendTo(stack, platformEvent({ id: 'evt_01J8K7H001' }), { msgId: 'msg_retry_h001' })).toEqual({
      status: 200,
      body: { status: 'duplicate', event_id: 'evt_01J8K7H001' },
    });
    await stack.drain({ timeoutMs: 20_000 });

    expect(received.map((r) => r.eventId).sort()).toEqual(ids);
    for (const [i, id] of ids.entries()) {
      const got = received.find((r) => r.eventId === id)!;
      expect(got).toMatchObject({ verified: true, webhookId: `platform:${id}#crm-sync`, attempt: '1' });
      // The consumer's fields only: card_last4 and currency never leave.
      expect(got.payload).toEqual({
        id,
        type: 'payment.succeeded',
        tenant_id: i === 1 ? 'tenant_311' : 'tenant_204',
        data: { amount: 4200 },
      });
    }
    const rows = (await ledgerOf(stack, ddb)).filter((r) => ids.includes(r.eventId));
    expect(rows.map((r) => `${r.eventId}#${r.consumerId}`).sort()).toEqual(ids.map((id) => `${id}#crm-sync`));
    for (const row of rows) {
      expect(row).toMatchObject({ state: 'done', units: 3, outcome: 'http_200', attempt: 1, ackAttempt: 1 });
      expect(row.principal).toMatch(/^arn:aws:iam::000000000000:role\/Hookledger-ConsumerscrmsyncRole[0-9A-F]{8}$/);
    }
    expect(rows.find((r) => r.eventId === 'evt_01J8K7H002')?.tenantId).toBe('tenant_311');
  });
});

describe("crm-sync's SQS event source mapping as the template sets it", () => {
  it('gathers evt_01J8K7W001..003 for its 4 s MaximumBatchingWindowInSeconds into at most one batch per receive in flight; its FilterCriteria drops tenant_999 unPOSTed', async () => {
    const crm = fnId('ConsumerscrmsyncWorker')!;
    const before = recorded.invocations.filter((i) => i.functionId === crm).length;
    const ids = ['evt_01J8K7W001', 'evt_01J8K7W002', 'evt_01J8K7W003'];
    const dropped = 'evt_01J8K7W999';
    const answers = await Promise.all([
      ...ids.map((id) => sendTo(stack, platformEvent({ id }))),
      sendTo(stack, platformEvent({ id: dropped, tenant_id: 'tenant_999' })),
    ]);
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
    await stack.drain({ timeoutMs: 20_000 });

    // The mapping's MaximumConcurrency lets 2 receives gather at once: the window gathers the 3 records
    // into at most 2 batches (one per receive in flight; 3 without the window), all 3 handled once.
    const batches = recorded.invocations.filter((i) => i.functionId === crm).slice(before);
    expect(batches.length).toBeLessThanOrEqual(2);
    expect(batches.every((b) => b.ok)).toBe(true);
    expect(batches.reduce((n, b) => n + b.records, 0)).toBe(3);
    expect(
      received
        .filter((r) => r.eventId.startsWith('evt_01J8K7W'))
        .map((r) => r.eventId)
        .sort(),
    ).toEqual(ids);
    const rows = (await ledgerOf(stack, ddb)).filter((r) => r.eventId.startsWith('evt_01J8K7W'));
    expect(rows.map((r) => `${r.eventId}#${r.consumerId}:${r.state}:${r.units}`).sort()).toEqual(ids.map((id) => `${id}#crm-sync:done:3`));
    // The batch waited out its window: handled 4 s or more after the first of them was received.
    expect(Math.min(...rows.map((r) => r.ackAt!)) - Math.min(...rows.map((r) => r.receivedAt))).toBeGreaterThanOrEqual(4000);
    // The dropped delivery was deleted from the queue unhandled: no claim, nothing in the DLQ.
    expect(await ledgerOf(stack, ddb, dropped)).toEqual([]);
    const operator = new SQSClient({
      endpoint: stack.proxies.sqs,
      region: 'us-east-1',
      credentials: stack.credentials,
      useQueueUrlAsEndpoint: false,
    });
    const depth = async (url: string) => {
      const names = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] as const;
      const out = await operator.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [...names] }));
      return names.map((n) => Number(out.Attributes?.[n]));
    };
    const queues = stack.state.queues['crm-sync']!;
    expect([await depth(queues.url), await depth(queues.dlqUrl)]).toEqual([
      [0, 0],
      [0, 0],
    ]);
    operator.destroy();
  });
});

describe("crm-sync's circuit breaker on the synthesized assembly", () => {
  it('opens after 3 failures and disables its own event source mapping through the Lambda API under its grant; resumed, the backlog is delivered once', async () => {
    down = true;
    const ids = ['evt_01J8K7CB01', 'evt_01J8K7CB02', 'evt_01J8K7CB03', 'evt_01J8K7CB04'];
    for (const id of ids) expect((await sendTo(stack, platformEvent({ id }))).status).toBe(202);
    const deadline = Date.now() + 20_000;
    while (!stack.paused().includes('crm-sync') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(stack.paused()).toEqual(['crm-sync']);
    const failed = received.filter((r) => ids.includes(r.eventId)).length;
    expect(failed).toBeGreaterThanOrEqual(3);
    expect(recorded.denials).toEqual([]);
    const used = stack.iam.report().find((r) => r.roleId.startsWith('ConsumerscrmsyncRole'))?.used;
    expect(used).toEqual(expect.arrayContaining(['lambda:ListEventSourceMappings', 'lambda:UpdateEventSourceMapping']));
    // Disabled: nothing more reaches the destination while it is down.
    await new Promise((r) => setTimeout(r, 3000));
    expect(received.filter((r) => ids.includes(r.eventId))).toHaveLength(failed);

    // The operator resumes it as with plain `npm start`: `hookledger resume crm-sync` (the stack's admin endpoint).
    down = false;
    const statePath = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-asm-dest-')), 'state.json');
    await writeState(statePath, stack.state);
    const resumed = await runCli(['resume', 'crm-sync'], config, { ...process.env, USER: 'e2e', HOOKLEDGER_STATE: statePath });
    expect(resumed).toMatchObject({ code: 0 });
    expect(stack.paused()).toEqual([]);
    await stack.drain({ timeoutMs: 30_000 });
    const rows = (await ledgerOf(stack, ddb)).filter((r) => ids.includes(r.eventId));
    expect(rows.map((r) => `${r.eventId}#${r.consumerId}:${r.state}:${r.units}`).sort()).toEqual(ids.map((id) => `${id}#crm-sync:done:3`));
    // Every request signed and verified; each event answered 200 exactly once.
    const posts = received.filter((r) => ids.includes(r.eventId));
    expect(posts.every((r) => r.verified)).toBe(true);
    expect(ids.map((id) => posts.filter((r) => r.eventId === id && r.status === 200).length)).toEqual([1, 1, 1, 1]);
  }, 60_000);
});

describe('ordered consumer audit-writer on the synthesized assembly', () => {
  it('provisions its queue and DLQ from the template as FIFO queues', () => {
    expect(stack.state.queues['audit-writer']?.url).toMatch(/-queue\.fifo$/);
    expect(stack.state.queues['audit-writer']?.dlqUrl).toMatch(/\.fifo$/);
  });

  it('handles evt_01J8ORD001..005 of acct_1 in intake order, interleaved with acct_2; a late seq 3 is stale, 0 units', async () => {
    const plan = Array.from({ length: 10 }, (_, i) => ({
      id: i % 2 === 0 ? `evt_01J8ORD00${i / 2 + 1}` : `evt_01J8ORE00${(i - 1) / 2 + 1}`,
      account: i % 2 === 0 ? 'acct_1' : 'acct_2',
      seq: Math.floor(i / 2) + 1,
    }));
    // Held back while all ten are queued, so two receives at once find several of a key waiting.
    await stack.pause('audit-writer');
    for (const p of plan) {
      const event = platformEvent({
        id: p.id,
        type: 'ledger.entry_posted',
        data: { account: p.account, seq: p.seq, amount: 100 } as never,
      });
      expect(await sendTo(stack, event)).toEqual({ status: 202, body: { event_id: p.id, deliveries: 1 } });
    }
    await stack.drain({ timeoutMs: 20_000 });
    expect(await ledgerOf(stack, ddb, 'evt_01J8ORD001')).toEqual([]);
    stack.resume('audit-writer');
    await stack.drain({ timeoutMs: 20_000 });

    const rows = (await ledgerOf(stack, ddb)).filter((r) => r.consumerId === 'audit-writer');
    expect(rows.map((r) => r.eventId).sort()).toEqual(plan.map((p) => p.id).sort());
    // Every one handled (none overtaken by a later seq of its key, which would make it stale).
    expect(rows.every((r) => r.state === 'done' && r.units === 1 && r.outcome === 'ok' && r.tenantId === 'tenant_204')).toBe(true);
    for (const account of ['acct_1', 'acct_2']) {
      const ids = plan.filter((p) => p.account === account).map((p) => p.id);
      const acked = rows.filter((r) => ids.includes(r.eventId)).sort((a, b) => a.ackAt! - b.ackAt!);
      expect(acked.map((r) => r.eventId)).toEqual(ids);
    }

    // acct_1 has acknowledged seq 5; seq 3 arrives late as a new event: recorded stale, never handled.
    const late = platformEvent({
      id: 'evt_01J8ORD0L3',
      type: 'ledger.entry_posted',
      data: { account: 'acct_1', seq: 3, amount: 100 } as never,
    });
    expect((await sendTo(stack, late)).status).toBe(202);
    await stack.drain({ timeoutMs: 20_000 });
    const stale = (await ledgerOf(stack, ddb, 'evt_01J8ORD0L3')).filter((r) => r.consumerId === 'audit-writer');
    expect(stale).toHaveLength(1);
    expect(stale[0]).toMatchObject({ state: 'done', units: 0, outcome: 'stale', tenantId: 'tenant_204' });
  });
});

describe('IAM on the two consumers', () => {
  it('denied nothing; crm-sync read its secret and audit-writer wrote its watermarks under their own roles', () => {
    expect(recorded.denials).toEqual([]);
    const report = Object.fromEntries(stack.iam.report().map((r) => [r.roleId.replace(/[0-9A-F]{8}$/, ''), r]));
    expect(report.ConsumerscrmsyncRole?.used).toEqual(
      expect.arrayContaining([
        'secretsmanager:GetSecretValue',
        'dynamodb:UpdateItem',
        'sqs:DeleteMessage',
        'sqs:ReceiveMessage',
        'lambda:ListEventSourceMappings',
        'lambda:UpdateEventSourceMapping',
      ]),
    );
    expect(report.ConsumersauditwriterRole?.used).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:UpdateItem']));
  });

  it("denies crm-sync's role disabling audit-writer's mapping (lambda:FunctionArn), as AccessDeniedException; audit-writer keeps running", async () => {
    const lambda = new LambdaClient({
      endpoint: stack.proxies.lambda,
      region: 'us-east-1',
      credentials: stack.functionKey(fnId('ConsumerscrmsyncWorker')!),
      maxAttempts: 1,
    });
    const queueArn = stack.state.queues['audit-writer']!.arn;
    const listed = await lambda.send(new ListEventSourceMappingsCommand({ EventSourceArn: queueArn }));
    expect(listed.EventSourceMappings?.map((m) => [m.EventSourceArn, m.State])).toEqual([[queueArn, 'Enabled']]);
    const uuid = listed.EventSourceMappings![0]!.UUID!;
    const error = await lambda.send(new UpdateEventSourceMappingCommand({ UUID: uuid, Enabled: false })).catch((e: Error) => e);
    expect((error as Error).name).toBe('AccessDeniedException');
    expect(recorded.denials).toEqual([
      {
        principal: expect.stringMatching(/role\/Hookledger-ConsumerscrmsyncRole[0-9A-F]{8}$/),
        functionId: fnId('ConsumerscrmsyncWorker'),
        action: 'lambda:UpdateEventSourceMapping',
        resource: `arn:aws:lambda:us-east-1:000000000000:event-source-mapping:${uuid}`,
      },
    ]);
    expect(stack.paused()).toEqual([]);
    lambda.destroy();
  });
});
