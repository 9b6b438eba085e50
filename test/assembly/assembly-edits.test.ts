/**
 * What runs is what the assembly says: copies of the synthesized assembly with one thing changed
 * each, and the behaviour that changes with it. The bundle (a line added to the copied bundle is
 * what runs), the environment (a variable changed in the copied template), an event source
 * mapping's FilterCriteria, and a grant: `sqs:SendMessage` removed from every policy, run through
 * `npm start -- --assembly <dir>` as a user would. On the same edited copy, the eval matrix's fault
 * scenarios on the bundles: crash before ack, crash after the side effect, expired lease, and a
 * delivery failing until its DLQ, then redriven once the bug is fixed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DeleteMessageCommand, GetQueueAttributesCommand, type Message, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanAll } from '../../adapters/table-scan';
import type { LedgerItem } from '../../core/model';
import { PROJECT_ROOT } from '../../core/paths';
import config from '../../hookledger.config';
import { type LocalFunction, startLocalFunction } from '../../local/assembly/functions';
import type { AssemblyStack } from '../../local/assembly/stack';
import { functionCodeDir, resolveIntrinsics } from '../../local/assembly/template';
import { FileSecrets } from '../../local/secrets-file';
import { readStackCredentials, readState, writeState } from '../../local/state';
import { localDocumentClient } from '../../local/wiring';
import { runCli } from '../support/cli';
import { platformEvent, signedHeaders } from '../support/factories';
import { editedAssembly, ledgerOf, logicalId, type Recorded, sendTo, startRecordedStack, synthesizedAssembly } from './support';

const MARKER = 'hookledger-bundle-marker-7f3a';
/** Events billing-meter's edited bundle crashes on (SIGKILL of its own process) on its first attempt. */
const CRASH_BEFORE_ACK = 'evt_01J8K7F001';
const CRASH_AFTER_EFFECT = 'evt_01J8K7F002';
/** Its first attempt sleeps 5 s: past its 2 s lease, within the function's 10 s Timeout. */
const OUTLIVES_LEASE = 'evt_01J8K7F003';
/** billing-meter's handle throws on every attempt of it while `bug-<id>` exists in the faults folder (a bug, later fixed). */
const BROKEN_UNTIL_FIXED = 'evt_01J8K7D001';

/**
 * Wraps the runtime's call of the team's `handle` in the copied bundle: on attempt 1 of
 * CRASH_BEFORE_ACK the process kills itself after the claim, before the acknowledgement; every
 * attempt of CRASH_AFTER_EFFECT first appends its charge (the external side effect, keyed by the
 * idempotency key) to `charges.log`, and attempt 1 then kills itself; attempt 1 of OUTLIVES_LEASE
 * sleeps past its lease before it returns; every attempt of BROKEN_UNTIL_FIXED is logged to
 * `meter.log` and throws (MeterBug) while the marker file `bug-<event id>` exists.
 */
function faultyBundle(code: string, faults: string): string {
  // The runtime calls the team's handle as `await handle(this.deliveryContext(...))` (lambdas/runtime/runtime.ts).
  const calls = code.match(/await ([\w$]+)\(this\.deliveryContext\(/g) ?? [];
  if (calls.length !== 1) throw new Error(`expected one call of handle in the bundle, found ${calls.length}`);
  const wrapper = `globalThis.__hookledgerFault = (handle) => async (ctx) => {
  const { appendFileSync, existsSync } = await import('node:fs');
  const id = ctx.attribution.eventId;
  if (id === ${JSON.stringify(BROKEN_UNTIL_FIXED)}) {
    const broken = existsSync(${JSON.stringify(path.join(faults, 'bug-'))} + id);
    appendFileSync(${JSON.stringify(path.join(faults, 'meter.log'))}, 'attempt ' + ctx.attempt + (broken ? ' threw' : ' handled') + '\\n');
    if (broken) throw Object.assign(new Error('billing-meter cannot price ' + id), { name: 'MeterBug' });
  }
  if (id === ${JSON.stringify(CRASH_AFTER_EFFECT)}) appendFileSync(${JSON.stringify(path.join(faults, 'charges.log'))}, ctx.idempotencyKey + '\\n');
  if ((id === ${JSON.stringify(CRASH_BEFORE_ACK)} || id === ${JSON.stringify(CRASH_AFTER_EFFECT)}) && ctx.attempt === 1) {
    appendFileSync(${JSON.stringify(path.join(faults, 'crashes.log'))}, id + ' attempt ' + ctx.attempt + ' pid ' + process.pid + '\\n');
    process.kill(process.pid, 'SIGKILL');
    await new Promise(() => undefined);
  }
  if (id === ${JSON.stringify(OUTLIVES_LEASE)} && ctx.attempt === 1) {
    appendFileSync(${JSON.stringify(path.join(faults, 'late.log'))}, 'attempt 1 started\\n');
    await new Promise((resolve) => setTimeout(resolve, 5000));
    appendFileSync(${JSON.stringify(path.join(faults, 'late.log'))}, 'attempt 1 finished, acknowledging\\n');
  }
  return handle(ctx);
};
`;
  return wrapper + code.replace(/await ([\w$]+)\(this\.deliveryContext\(/, 'await globalThis.__hookledgerFault($1)(this.deliveryContext(');
}
const EDITED_PRINCIPAL = 'arn:aws:iam::000000000000:role/principal-from-the-edited-template';

let source: string;
/** `npm start -- --assembly` on the copy without sqs:SendMessage. */
const npmStart = { child: undefined as ChildProcess | undefined, output: '', errors: '', home: '', removed: 0 };
beforeAll(() => {
  source = synthesizedAssembly();
});

/** Started after the other copy's stack stopped: two DynamoDB Local JVMs booting at once on two cores is slow. */
function launchNpmStart(): void {
  const dir = editedAssembly(source, (template) => {
    for (const resource of Object.values(template.Resources)) {
      if (resource.Type !== 'AWS::IAM::Policy') continue;
      const doc = resource.Properties!.PolicyDocument as { Statement: { Action: string | string[] }[] };
      doc.Statement = doc.Statement.flatMap((s) => {
        const actions = [s.Action].flat();
        const kept = actions.filter((a) => a !== 'sqs:SendMessage');
        npmStart.removed += actions.length - kept.length;
        return kept.length === 0 ? [] : [{ ...s, Action: kept.length === 1 ? kept[0]! : kept }];
      });
    }
  });
  npmStart.home = path.join(dir, 'home');
  npmStart.child = spawn(path.join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx'), ['bin/start.ts', '--assembly', dir], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, HOOKLEDGER_HOME: npmStart.home, HOOKLEDGER_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  npmStart.child.stdout?.on('data', (chunk: Buffer) => {
    npmStart.output += chunk.toString('utf8');
  });
  npmStart.child.stderr?.on('data', (chunk: Buffer) => {
    npmStart.errors += chunk.toString('utf8');
  });
}

afterAll(() => {
  if (npmStart.child && npmStart.child.exitCode === null) npmStart.child.kill('SIGKILL');
});

describe('an edited copy of the assembly runs as edited', () => {
  let stack: AssemblyStack;
  let recorded: Recorded;
  let ddb: DynamoDBDocumentClient;
  let faults: string;
  beforeAll(async () => {
    faults = mkdtempSync(path.join(tmpdir(), 'hookledger-asm-faults-'));
    const dir = editedAssembly(source, (template, dir) => {
      const billing = logicalId(template, 'AWS::Lambda::Function', 'ConsumersbillingmeterWorker');
      const fn = template.Resources[billing]!.Properties!;
      // (a) one line added at the top of the copied bundle (and the crashes of the fault scenarios).
      const bundle = path.join(dir, `asset.${String(fn.Code.S3Key).replace(/\.zip$/, '')}`, 'index.mjs');
      // billing-meter's bundled configuration: a 1 s timeout (a 2 s lease), a 3 s visibility and 3
      // receives before the DLQ, as its queue in this template, so a crashed delivery comes back and
      // is taken over in seconds, and a failing one reaches the DLQ in about 10 s.
      const bundled = readFileSync(bundle, 'utf8').replace(
        /("id":"billing-meter",[^{}]*?"maxReceiveCount":)5,"visibilityTimeoutSeconds":60,"timeoutSeconds":10,/,
        (_, head: string) => `${head}3,"visibilityTimeoutSeconds":3,"timeoutSeconds":1,`,
      );
      if (!bundled.includes('"maxReceiveCount":3,"visibilityTimeoutSeconds":3,"timeoutSeconds":1,'))
        throw new Error('billing-meter bundled config not found');
      writeFileSync(bundle, `console.log(${JSON.stringify(MARKER)});\n${faultyBundle(bundled, faults)}`);
      const queue = template.Resources[logicalId(template, 'AWS::SQS::Queue', 'ConsumersbillingmeterQueue')]!.Properties!;
      queue.VisibilityTimeout = 3;
      queue.RedrivePolicy.maxReceiveCount = 3;
      // (b) one variable of its environment.
      fn.Environment.Variables.PRINCIPAL = EDITED_PRINCIPAL;
      // (c) the fan-out's filter: receipts of invoice.paid are no longer its work.
      const esm = logicalId(template, 'AWS::Lambda::EventSourceMapping', 'FanOutHandlerFunctionDynamoDBEventSource');
      template.Resources[esm]!.Properties!.FilterCriteria = {
        Filters: [
          {
            Pattern: JSON.stringify({
              eventName: ['INSERT'],
              dynamodb: { NewImage: { kind: { S: ['event', 'requeue'] }, eventType: { S: [{ 'anything-but': ['invoice.paid'] }] } } },
            }),
          },
        ],
      };
    });
    ({ stack, recorded, ddb } = await startRecordedStack(dir));
  });
  afterAll(async () => {
    ddb?.destroy();
    await stack?.stop();
  });

  it('runs the bundle in the assembly folder, not the sources: the line added to the copied bundle runs at cold start', () => {
    const billing = Object.keys(stack.functions).find((id) => id.startsWith('ConsumersbillingmeterWorker'))!;
    expect(recorded.logs.filter((l) => l.line === MARKER).map((l) => l.functionId)).toEqual([billing]);
  });

  it("takes each function's environment from the template: billing-meter records the PRINCIPAL the edited template sets", async () => {
    expect((await sendTo(stack, platformEvent({ id: 'evt_01J8K7E001' }))).status).toBe(202);
    await stack.drain();
    const rows = await ledgerOf(stack, ddb, 'evt_01J8K7E001');
    expect(rows.map((r) => `${r.consumerId}:${r.state}`).sort()).toEqual([
      'audit-writer:done',
      'billing-meter:done',
      'risk-evaluator:done',
    ]);
    expect(rows.find((r) => r.consumerId === 'billing-meter')?.reads.map((r) => r.principal)).toEqual([EDITED_PRINCIPAL]);
    expect(rows.find((r) => r.consumerId === 'audit-writer')?.reads[0]?.principal).toMatch(/role\/Hookledger-ConsumersauditwriterRole/);
  });

  it('takes event source mappings from the template: the edited FilterCriteria keeps invoice.paid (evt_01J8K7E002) from the fan-out', async () => {
    const fanout = Object.keys(stack.functions).find((id) => id.startsWith('FanOutHandler'))!;
    const before = recorded.invocations.filter((i) => i.functionId === fanout).length;
    expect(await sendTo(stack, platformEvent({ id: 'evt_01J8K7E002', type: 'invoice.paid' }))).toEqual({
      status: 202,
      body: { event_id: 'evt_01J8K7E002', deliveries: 2 },
    });
    expect((await sendTo(stack, platformEvent({ id: 'evt_01J8K7E003', type: 'payment.failed' }))).status).toBe(202);
    await stack.drain();
    expect(await ledgerOf(stack, ddb, 'evt_01J8K7E002')).toEqual([]);
    expect((await ledgerOf(stack, ddb, 'evt_01J8K7E003')).map((r) => r.consumerId).sort()).toEqual([
      'audit-writer',
      'billing-meter',
      'risk-evaluator',
    ]);
    const records = recorded.invocations
      .filter((i) => i.functionId === fanout)
      .slice(before)
      .reduce((n, i) => n + i.records, 0);
    expect(records).toBe(1);
  });

  const billingRuns = () => {
    const billing = Object.keys(stack.functions).find((id) => id.startsWith('ConsumersbillingmeterWorker'))!;
    return recorded.invocations.filter((i) => i.functionId === billing);
  };
  const readLog = (name: string) =>
    existsSync(path.join(faults, name)) ? readFileSync(path.join(faults, name), 'utf8').split('\n').filter(Boolean) : [];
  const state = (rows: LedgerItem[]) =>
    rows.map((r) => `${r.consumerId}:${r.state}:${r.units}:attempt ${r.attempt}:ack ${r.ackAttempt}`).sort();

  it("crash before ack: billing-meter's process killed after its claim of evt_01J8K7F001; after the 3 s visibility the new sandbox acknowledges it once, attempt 2", async () => {
    const failedBefore = billingRuns().filter((i) => !i.ok).length;
    const sentAt = Date.now();
    expect((await sendTo(stack, platformEvent({ id: CRASH_BEFORE_ACK, type: 'payment.refunded' }))).status).toBe(202);
    await stack.drain();
    expect(readLog('crashes.log').map((l) => l.replace(/ pid \d+$/, ''))).toEqual([`${CRASH_BEFORE_ACK} attempt 1`]);
    expect(billingRuns().filter((i) => !i.ok).length - failedBefore).toBe(1);
    const rows = await ledgerOf(stack, ddb, CRASH_BEFORE_ACK);
    expect(state(rows)).toEqual([
      'audit-writer:done:1:attempt 1:ack 1',
      'billing-meter:done:3:attempt 2:ack 2',
      'risk-evaluator:done:1:attempt 1:ack 1',
    ]);
    const billing = rows.find((r) => r.consumerId === 'billing-meter')!;
    // Two claims on record (the killed one, the takeover), no failure recorded: the process died without a word.
    expect(billing.reads).toHaveLength(2);
    expect(billing.errors).toBeUndefined();
    // Taken over only once the message came back from its 3 s visibility timeout.
    expect(billing.ackAt! - sentAt).toBeGreaterThanOrEqual(3_000);
    expect(rows.reduce((n, r) => n + (r.tenantId === 'tenant_204' ? (r.units ?? 0) : 0), 0)).toBe(5);
  }, 30_000);

  it('crash after the side effect: evt_01J8K7F002 charged externally, process killed before ack; the retry passes the same idempotency key, one ledger row, 5 units once', async () => {
    expect((await sendTo(stack, platformEvent({ id: CRASH_AFTER_EFFECT }))).status).toBe(202);
    await stack.drain();
    expect(readLog('crashes.log').map((l) => l.replace(/ pid \d+$/, ''))).toEqual([
      `${CRASH_BEFORE_ACK} attempt 1`,
      `${CRASH_AFTER_EFFECT} attempt 1`,
    ]);
    // The external system saw the charge twice under one key: a system that dedupes on it applies it once.
    expect(readLog('charges.log')).toEqual(['platform:evt_01J8K7F002#billing-meter', 'platform:evt_01J8K7F002#billing-meter']);
    const rows = await ledgerOf(stack, ddb, CRASH_AFTER_EFFECT);
    expect(state(rows)).toEqual([
      'audit-writer:done:1:attempt 1:ack 1',
      'billing-meter:done:5:attempt 2:ack 2',
      'risk-evaluator:done:1:attempt 1:ack 1',
    ]);
    expect(rows.reduce((n, r) => n + (r.units ?? 0), 0)).toBe(7);
  }, 30_000);

  it("expired lease: billing-meter's first worker sleeps past its 2 s lease on evt_01J8K7F003; a second sandbox takes it over (attempt 2) and the late worker is fenced", async () => {
    const billingId = Object.keys(stack.functions).find((id) => id.startsWith('ConsumersbillingmeterWorker'))!;
    const logsBefore = recorded.logs.length;
    expect((await sendTo(stack, platformEvent({ id: OUTLIVES_LEASE }))).status).toBe(202);
    // The stack's sandbox claimed it (attempt 1) and sleeps; its poller takes no new message.
    const claimDeadline = Date.now() + 15_000;
    while ((await ledgerOf(stack, ddb, OUTLIVES_LEASE)).find((r) => r.consumerId === 'billing-meter')?.state !== 'leased') {
      if (Date.now() > claimDeadline) throw new Error('billing-meter never claimed evt_01J8K7F003');
      await new Promise((r) => setTimeout(r, 100));
    }
    const pausing = stack.pause('billing-meter');
    // Lambda's second execution environment of the same function: the same copied bundle, the same environment.
    const second = secondSandbox(billingId);
    const sqs = new SQSClient({
      endpoint: stack.proxies.sqs,
      region: 'us-east-1',
      credentials: stack.functionKey(billingId),
      useQueueUrlAsEndpoint: false,
    });
    try {
      const queue = stack.state.queues['billing-meter']!;
      let message: Message | undefined;
      const visibleDeadline = Date.now() + 15_000;
      while (!message) {
        if (Date.now() > visibleDeadline) throw new Error('evt_01J8K7F003 never came back from its visibility timeout');
        const out = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queue.url,
            MaxNumberOfMessages: 1,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['All'],
          }),
        );
        message = out.Messages?.[0];
      }
      expect(message.Attributes?.ApproximateReceiveCount).toBe('2');
      const response = await second.invoke<{ batchItemFailures: unknown[] }>({
        Records: [
          {
            messageId: message.MessageId,
            receiptHandle: message.ReceiptHandle,
            body: message.Body,
            attributes: message.Attributes,
            messageAttributes: {},
            md5OfBody: message.MD5OfBody,
            eventSource: 'aws:sqs',
            eventSourceARN: queue.arn,
            awsRegion: 'us-east-1',
          },
        ],
      });
      expect(response.batchItemFailures).toEqual([]);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle! }));
      const taken = (await ledgerOf(stack, ddb, OUTLIVES_LEASE)).find((r) => r.consumerId === 'billing-meter');
      expect(taken).toMatchObject({ state: 'done', units: 5, attempt: 2, ackAttempt: 2 });
    } finally {
      sqs.destroy();
      await second.stop();
    }
    // The late worker finishes (its invocation is what the pause waits for) and is refused its acknowledgement.
    await pausing;
    stack.resume('billing-meter');
    await stack.drain();
    expect(readLog('late.log')).toEqual(['attempt 1 started', 'attempt 1 finished, acknowledging']);
    const fenced = recorded.logs.slice(logsBefore).filter((l) => l.functionId === billingId && l.line.includes('fenced: lease taken over'));
    expect(fenced).toHaveLength(1);
    expect(fenced[0]!.line).toContain(OUTLIVES_LEASE);
    const rows = await ledgerOf(stack, ddb, OUTLIVES_LEASE);
    expect(state(rows)).toEqual([
      'audit-writer:done:1:attempt 1:ack 1',
      'billing-meter:done:5:attempt 2:ack 2',
      'risk-evaluator:done:1:attempt 1:ack 1',
    ]);
    expect(rows.find((r) => r.consumerId === 'billing-meter')?.reads).toHaveLength(2);
  }, 40_000);

  it("poison to the DLQ and redrive: billing-meter's bug fails evt_01J8K7D001 on all 3 receives into its DLQ while its siblings deliver it once; fixed, `hookledger redrive billing-meter` moves 1 of 1 back, acknowledged once, 5 units", async () => {
    const denialsBefore = recorded.denials.length;
    const operator = new SQSClient({
      endpoint: stack.proxies.sqs,
      region: 'us-east-1',
      credentials: stack.credentials,
      useQueueUrlAsEndpoint: false,
    });
    const depth = async (consumer: string, which: 'url' | 'dlqUrl') => {
      const out = await operator.send(
        new GetQueueAttributesCommand({
          QueueUrl: stack.state.queues[consumer]![which],
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      return Number(out.Attributes?.ApproximateNumberOfMessages) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible);
    };
    const marker = path.join(faults, `bug-${BROKEN_UNTIL_FIXED}`);
    writeFileSync(marker, 'billing-meter cannot price it\n');
    try {
      expect(await sendTo(stack, platformEvent({ id: BROKEN_UNTIL_FIXED }))).toEqual({
        status: 202,
        body: { event_id: BROKEN_UNTIL_FIXED, deliveries: 3 },
      });
      // Drained: no message left in any consumer queue, visible or not; billing-meter's is in its DLQ.
      await stack.drain();
      expect(readLog('meter.log')).toEqual(['attempt 1 threw', 'attempt 2 threw', 'attempt 3 threw']);
      const failed = await ledgerOf(stack, ddb, BROKEN_UNTIL_FIXED);
      expect(state(failed)).toEqual([
        'audit-writer:done:1:attempt 1:ack 1',
        'billing-meter:quarantined:undefined:attempt 3:ack undefined',
        'risk-evaluator:done:1:attempt 1:ack 1',
      ]);
      // The runtime marked it quarantined on the last allowed receive (the bundle's maxReceiveCount, 3);
      // the queue's RedrivePolicy, not the runtime, moved the message to the DLQ.
      const quarantined = failed.find((r) => r.consumerId === 'billing-meter')!;
      const billingRole = stack.iam.report().find((r) => r.roleId.startsWith('ConsumersbillingmeterRole'))!;
      expect(billingRole.used).not.toContain('sqs:SendMessage');
      expect(quarantined.errors?.map((e) => `${e.attempt}:${e.category}`)).toEqual(['1:MeterBug', '2:MeterBug', '3:MeterBug']);
      expect(quarantined.reads).toHaveLength(3);
      expect(failed.filter((r) => r.consumerId !== 'billing-meter').every((r) => r.reads.length === 1)).toBe(true);
      expect({
        billing: await depth('billing-meter', 'dlqUrl'),
        audit: await depth('audit-writer', 'dlqUrl'),
        risk: await depth('risk-evaluator', 'dlqUrl'),
        queue: await depth('billing-meter', 'url'),
      }).toEqual({ billing: 1, audit: 0, risk: 0, queue: 0 });
    } finally {
      // The bug is fixed.
      rmSync(marker, { force: true });
    }

    const home = mkdtempSync(path.join(tmpdir(), 'hookledger-asm-redrive-'));
    await writeState(path.join(home, 'state.json'), stack.state);
    const cli = await runCli(['redrive', 'billing-meter'], config, { ...process.env, HOOKLEDGER_STATE: path.join(home, 'state.json') });
    expect(cli.stderr).not.toMatch(/error/i);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('1 of 1 messages moved from the DLQ of billing-meter to its queue');
    await stack.drain();
    expect(readLog('meter.log')).toEqual(['attempt 1 threw', 'attempt 2 threw', 'attempt 3 threw', 'attempt 4 handled']);
    const rows = await ledgerOf(stack, ddb, BROKEN_UNTIL_FIXED);
    expect(state(rows)).toEqual([
      'audit-writer:done:1:attempt 1:ack 1',
      'billing-meter:done:5:attempt 4:ack 4',
      'risk-evaluator:done:1:attempt 1:ack 1',
    ]);
    expect(rows.filter((r) => r.consumerId === 'billing-meter')).toHaveLength(1);
    expect(await depth('billing-meter', 'dlqUrl')).toBe(0);
    expect(await depth('billing-meter', 'url')).toBe(0);
    // Every call of the flow was checked against its role and none was denied.
    expect(recorded.denials.slice(denialsBefore)).toEqual([]);
    operator.destroy();
  }, 40_000);

  /** Another process of `id`'s bundle from the copied assembly, with the environment stack.ts gives it. */
  function secondSandbox(id: string): LocalFunction {
    const props = stack.assembly.resources[id]!.Properties!;
    const variables = (props.Environment as { Variables: unknown }).Variables;
    return startLocalFunction({
      logicalId: `${id}-2`,
      functionName: stack.resources.locals.get(id)?.ref ?? id,
      functionArn: stack.resources.locals.get(id)?.attributes.Arn ?? '',
      codeDir: functionCodeDir(stack.assembly, id),
      handler: String(props.Handler),
      timeoutSeconds: Number(props.Timeout),
      memorySize: Number(props.MemorySize),
      environment: {
        PATH: process.env.PATH ?? '',
        ...(resolveIntrinsics(variables, stack.resources.locals) as Record<string, string>),
        AWS_REGION: 'us-east-1',
        AWS_DEFAULT_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: stack.functionKey(id).accessKeyId,
        AWS_SECRET_ACCESS_KEY: stack.functionKey(id).secretAccessKey,
        AWS_ENDPOINT_URL_DYNAMODB: stack.proxies.dynamodb,
        AWS_ENDPOINT_URL_SQS: stack.proxies.sqs,
        AWS_ENDPOINT_URL_S3: stack.proxies.s3,
        AWS_ENDPOINT_URL_SECRETS_MANAGER: stack.proxies.secretsmanager,
        AWS_EC2_METADATA_DISABLED: 'true',
        AWS_LAMBDA_FUNCTION_NAME: stack.resources.locals.get(id)?.ref ?? id,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(props.MemorySize),
      },
      onLog: (line) => recorded.logs.push({ functionId: `${id}-2`, line }),
    });
  }
});

describe('repair after a crash, on the synthesized assembly with file-backed data', () => {
  it('re-queues at the next start the delivery whose message the crash lost (evt_01J8K7R001 for billing-meter), delivered once', async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'hookledger-asm-restart-'));
    const where = { home, dataDir: path.join(home, 'data') };
    const first = await startRecordedStack(source, where);
    try {
      await first.stack.pause('billing-meter');
      expect((await sendTo(first.stack, platformEvent({ id: 'evt_01J8K7R001' }))).status).toBe(202);
      await first.stack.drain();
      expect((await ledgerOf(first.stack, first.ddb, 'evt_01J8K7R001')).map((r) => `${r.consumerId}:${r.state}`).sort()).toEqual([
        'audit-writer:done',
        'risk-evaluator:done',
      ]);
    } finally {
      first.ddb.destroy();
      // The emulated queues keep nothing: billing-meter's waiting message is gone with them.
      await first.stack.stop();
    }
    const second = await startRecordedStack(source, where);
    try {
      expect(second.stack.startupRepair).toMatchObject({ repaired: 1, unrepaired: 0 });
      await second.stack.drain();
      const rows = await ledgerOf(second.stack, second.ddb, 'evt_01J8K7R001');
      expect(rows.map((r) => `${r.consumerId}:${r.state}:${r.units}:${r.reads.length}`).sort()).toEqual([
        'audit-writer:done:1:1',
        'billing-meter:done:5:1',
        'risk-evaluator:done:1:1',
      ]);
      // The stream was not read again from its start: only the repair's re-queue reached the fan-out.
      const fanout = Object.keys(second.stack.functions).find((id) => id.startsWith('FanOutHandler'))!;
      expect(second.recorded.invocations.filter((i) => i.functionId === fanout).reduce((n, i) => n + i.records, 0)).toBe(1);
    } finally {
      second.ddb.destroy();
      await second.stack.stop();
    }
  });
});

describe('npm start -- --assembly <dir> with sqs:SendMessage removed from every policy', () => {
  let child: ChildProcess;
  let home: string;
  beforeAll(async () => {
    // Fan-out (4 queues in one statement), three consumers (their DLQs), the reconciler (its DLQ).
    launchNpmStart();
    expect(npmStart.removed).toBe(5);
    child = npmStart.child!;
    home = npmStart.home;
    await waitFor(
      () => npmStart.output.includes('hookledger is running'),
      110_000,
      () => `${npmStart.output}\n(stderr) ${npmStart.errors}`,
    );
  });

  it('accepts webhooks (202) but delivers nothing, and names AccessDenied with sqs:SendMessage; its exit report lists the denial', async () => {
    const output = () => npmStart.output;
    const state = await readState(path.join(home, 'state.json'));
    if (!state) throw new Error(`npm start wrote no ${home}/state.json`);
    const secrets = new FileSecrets({ path: path.join(home, 'secrets.json'), sourceIds: ['platform'] });
    const secret = (await secrets.get('platform')).current;
    for (const id of ['evt_01J8K7D001', 'evt_01J8K7D002']) {
      const body = JSON.stringify(platformEvent({ id }));
      const res = await fetch(state.webhookUrl.replace('{source}', 'platform'), {
        method: 'POST',
        headers: signedHeaders(body, { secret, at: Date.now(), msgId: `msg_${id}` }),
        body,
      });
      expect(res.status).toBe(202);
    }
    await waitFor(
      () => /AccessDenied sqs:SendMessage on arn:aws:sqs:us-east-1:000000000000:Hookledger-Consumers-/.test(output()),
      20_000,
      output,
    );
    expect(output()).toMatch(
      /AccessDenied sqs:SendMessage on \S+ \(principal arn:aws:iam::000000000000:role\/Hookledger-FanOutHandlerRole[0-9A-F]{8}, function FanOutHandlerFunction[0-9A-F]{8}\)/,
    );
    // Signed with that process's per-start credential, from the state folder (its DynamoDB Local takes no other key).
    const ddb = localDocumentClient(state.dynamo.endpoint, await readStackCredentials(path.join(home, 'state.json'), state));
    expect(await scanAll(ddb, { TableName: state.tables.ledger, ConsistentRead: true })).toEqual([]);
    ddb.destroy();

    // 'close', not 'exit': tsx may exit before the stack's process has written its report to the shared pipe.
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    child.kill('SIGINT');
    // tsx relays the SIGINT: it exits 0 after the stack's own handler, or 130 when it relays the signal's status.
    expect([0, 130]).toContain(await exited);
    expect(output()).toContain('Least privilege, measured');
    const fanoutRow = output()
      .split('\n')
      .find((l) => l.startsWith('| FanOutHandlerRole'));
    expect(fanoutRow?.split(' | ').at(-1)).toBe('`sqs:SendMessage` |');
  });
});

async function waitFor(check: () => boolean, timeoutMs: number, show: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms; output so far:\n${show().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
