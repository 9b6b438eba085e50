/**
 * The shipped assembly on the local stack (local/assembly): the esbuild bundles from `cdk.out` in a
 * process each, the template's environment, tables, queues and event source mappings, and every call
 * checked against its role. The eval matrix's scenarios that need no injected fault, then the IAM
 * checks themselves and the least-privilege report of the run.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_INLINE_PAYLOAD_BYTES } from '../../core/blobs';
import { keyRegistryKey, payloadKey } from '../../core/model';
import config from '../../hookledger.config';
import { accessKeyIdOf } from '../../local/assembly/iam';
import type { AssemblyStack } from '../../local/assembly/stack';
import { resolveIntrinsics } from '../../local/assembly/template';
import { writeState } from '../../local/state';
import { runCli } from '../support/cli';
import { platformEvent } from '../support/factories';
import { rawRequest } from '../support/raw-http';
import { ledgerOf, type Recorded, sendTo, startRecordedStack, synthesizedAssembly } from './support';

let stack: AssemblyStack;
let recorded: Recorded;
let ddb: DynamoDBDocumentClient;
let assemblyDir: string;
beforeAll(async () => {
  assemblyDir = synthesizedAssembly();
  ({ stack, recorded, ddb } = await startRecordedStack(assemblyDir));
  for (const [keyId, tenantId] of [
    ['key_42', 'tenant_204'],
    ['key_77', 'tenant_311'],
  ] as const) {
    await ddb.send(
      new PutCommand({
        TableName: stack.state.tables.events,
        Item: { pk: keyRegistryKey(keyId), kind: 'key', keyId, tenantId, status: 'active', createdAt: Date.now() },
      }),
    );
  }
});
afterAll(async () => {
  ddb?.destroy();
  await stack?.stop();
});

const fnId = (prefix: string) => Object.keys(stack.functions).find((id) => id.startsWith(prefix))!;
const summary = (rows: { consumerId: string; state: string; units?: number }[]) =>
  rows.map((r) => `${r.consumerId}:${r.state}:${r.units}`).sort();

function filler(bytes: number): string {
  const parts: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const chunk = createHash('sha256').update(`hookledger-${i}`).digest('hex');
    parts.push(chunk);
    size += chunk.length;
  }
  return parts.join('');
}

describe('the eval matrix on the synthesized assembly', () => {
  it('first delivery: the bundles deliver evt_01J8K7A001 to all three consumers, 7 units for tenant_204', async () => {
    expect(await sendTo(stack, platformEvent({ id: 'evt_01J8K7A001' }))).toEqual({
      status: 202,
      body: { event_id: 'evt_01J8K7A001', deliveries: 3 },
    });
    await stack.drain();
    const rows = await ledgerOf(stack, ddb, 'evt_01J8K7A001');
    expect(summary(rows)).toEqual(['audit-writer:done:1', 'billing-meter:done:5', 'risk-evaluator:done:1']);
    // Each consumer reads under the principal its template environment names: its own role.
    const billing = rows.find((r) => r.consumerId === 'billing-meter')!;
    expect(billing.reads[0]?.principal).toMatch(/^arn:aws:iam::000000000000:role\/Hookledger-ConsumersbillingmeterRole[0-9A-F]{8}$/);
  });

  it('duplicate: the second POST of evt_01J8K7A002 answers 200 duplicate and creates nothing', async () => {
    const event = platformEvent({ id: 'evt_01J8K7A002', type: 'invoice.paid' });
    expect((await sendTo(stack, event)).status).toBe(202);
    await stack.drain();
    expect(await sendTo(stack, event, { msgId: 'msg_retry_2' })).toEqual({
      status: 200,
      body: { status: 'duplicate', event_id: 'evt_01J8K7A002' },
    });
    await stack.drain();
    const rows = await ledgerOf(stack, ddb, 'evt_01J8K7A002');
    expect(summary(rows)).toEqual(['audit-writer:done:1', 'billing-meter:done:1']);
    expect(rows.every((r) => r.attempt === 1 && r.reads.length === 1)).toBe(true);
  });

  it("`hookledger status` counts intake's requests by outcome from the ingest bundle's own EMF lines: recorded 2, duplicate 1", async () => {
    // evt_01J8K7A001 and evt_01J8K7A002 recorded, evt_01J8K7A002's retry a duplicate (the tests above).
    const home = mkdtempSync(path.join(tmpdir(), 'hookledger-asm-status-'));
    await writeState(path.join(home, 'state.json'), stack.state);
    const cli = await runCli(['status'], config, { ...process.env, HOOKLEDGER_STATE: path.join(home, 'state.json') });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('requests by outcome since the local stack started: duplicate 1, recorded 2');
  });

  it('two tenants interleaved: 6 events, each tenant charged for its own (tenant_204: 15, tenant_311: 12)', async () => {
    const plan = Array.from({ length: 6 }, (_, i) => ({
      id: `evt_01J8K7B00${i}`,
      tenant_id: i % 2 === 0 ? 'tenant_204' : 'tenant_311',
      key_id: i % 2 === 0 ? 'key_42' : 'key_77',
      type: ['payment.succeeded', 'invoice.paid', 'scoped_key.created'][i % 3]!,
    }));
    const results = await Promise.all(plan.map((e) => sendTo(stack, platformEvent(e))));
    expect(results.map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 202]);
    await stack.drain();
    const rows = (await ledgerOf(stack, ddb)).filter((r) => plan.some((p) => p.id === r.eventId));
    const totals: Record<string, number> = {};
    for (const r of rows) totals[r.tenantId] = (totals[r.tenantId] ?? 0) + (r.units ?? 0);
    // payment.succeeded 5+1+1, invoice.paid 1+1, scoped_key.created 2+1+1.
    expect(totals).toEqual({ tenant_204: 7 + 2 + 4, tenant_311: 2 + 4 + 7 });
    expect(rows).toHaveLength(6 + 6 + 4);
  });

  it('key revoked while queued: risk-evaluator declines evt_01J8K7A003 under the captured tenant', async () => {
    await stack.pause('risk-evaluator');
    expect((await sendTo(stack, platformEvent({ id: 'evt_01J8K7A003', data: { amount: 250_000, currency: 'eur' } }))).status).toBe(202);
    await stack.drain();
    await ddb.send(
      new UpdateCommand({
        TableName: stack.state.tables.events,
        Key: { pk: keyRegistryKey('key_42') },
        UpdateExpression: 'SET #s = :revoked, revokedAt = :now',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':revoked': 'revoked', ':now': Date.now() },
      }),
    );
    stack.resume('risk-evaluator');
    await stack.drain();
    const risk = (await ledgerOf(stack, ddb, 'evt_01J8K7A003')).find((r) => r.consumerId === 'risk-evaluator');
    expect(risk).toMatchObject({
      state: 'done',
      tenantId: 'tenant_204',
      keyId: 'key_42',
      outcome: 'action_declined_key_revoked',
      units: 1,
    });
  });

  it('large body: 900 kB kept under payloads/* by intake and read back by the fan-out, each under its own grant', async () => {
    const event = platformEvent({
      id: 'evt_01J8K7A2MB',
      tenant_id: 'tenant_311',
      key_id: 'key_77',
      data: { amount: 4200, currency: 'eur', attachment: filler(900_000) } as never,
    });
    expect(await sendTo(stack, event)).toEqual({ status: 202, body: { event_id: 'evt_01J8K7A2MB', deliveries: 3 } });
    await stack.drain();
    const receipt = (
      await ddb.send(
        new GetCommand({ TableName: stack.state.tables.events, Key: { pk: 'evt#platform#evt_01J8K7A2MB' }, ConsistentRead: true }),
      )
    ).Item!;
    expect(receipt.payloadBytes).toBeGreaterThan(900_000);
    expect(receipt.payloadBytes).toBeGreaterThan(MAX_INLINE_PAYLOAD_BYTES);
    const payload = (
      await ddb.send(
        new GetCommand({
          TableName: stack.state.tables.events,
          Key: { pk: payloadKey('platform', 'evt_01J8K7A2MB', receipt.payloadHmac as string) },
          ConsistentRead: true,
        }),
      )
    ).Item;
    expect(payload?.s3Key).toBe(`payloads/platform/evt_01J8K7A2MB/${receipt.payloadHmac as string}`);
    expect(summary(await ledgerOf(stack, ddb, 'evt_01J8K7A2MB'))).toEqual([
      'audit-writer:done:1',
      'billing-meter:done:5',
      'risk-evaluator:done:1',
    ]);
    const used = Object.fromEntries(stack.iam.report().map((r) => [r.roleId.replace(/[0-9A-F]{8}$/, ''), r.used]));
    expect(used.IngestHandlerRole).toContain('s3:PutObject');
    expect(used.FanOutHandlerRole).toContain('s3:GetObject');
  });
});

describe('poison to the DLQ, then a replay, on the synthesized assembly', () => {
  it("quarantines a poisoned message for evt_01J8K7A004 into billing-meter's DLQ (its own grant); `hookledger replay` delivers it", async () => {
    const queues = stack.state.queues['billing-meter']!;
    const operator = new SQSClient({
      endpoint: stack.proxies.sqs,
      region: 'us-east-1',
      credentials: stack.credentials,
      useQueueUrlAsEndpoint: false,
    });
    await stack.pause('billing-meter');
    expect((await sendTo(stack, platformEvent({ id: 'evt_01J8K7A004' }))).status).toBe(202);
    await stack.drain();
    // The operator swaps the waiting message for a poisoned copy (its payload marked unreadable).
    const received = await operator.send(new ReceiveMessageCommand({ QueueUrl: queues.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    expect(received.Messages).toHaveLength(1);
    const message = JSON.parse(received.Messages![0]!.Body!) as Record<string, unknown>;
    expect(message.eventId).toBe('evt_01J8K7A004');
    await operator.send(new DeleteMessageCommand({ QueueUrl: queues.url, ReceiptHandle: received.Messages![0]!.ReceiptHandle! }));
    const { payload: _payload, ...rest } = message;
    await operator.send(
      new SendMessageCommand({ QueueUrl: queues.url, MessageBody: JSON.stringify({ ...rest, payloadUnavailable: 'unreadable' }) }),
    );
    stack.resume('billing-meter');
    await stack.drain();
    const poisoned = (await ledgerOf(stack, ddb, 'evt_01J8K7A004')).find((r) => r.consumerId === 'billing-meter');
    expect(poisoned).toMatchObject({ state: 'quarantined', attempt: 1 });
    const dlq = await operator.send(
      new GetQueueAttributesCommand({ QueueUrl: queues.dlqUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    expect(dlq.Attributes?.ApproximateNumberOfMessages).toBe('1');

    const home = mkdtempSync(path.join(tmpdir(), 'hookledger-asm-cli-'));
    await writeState(path.join(home, 'state.json'), stack.state);
    const cli = await runCli(['replay', '--consumer', 'billing-meter', '--event', 'evt_01J8K7A004', '--yes'], config, {
      ...process.env,
      HOOKLEDGER_STATE: path.join(home, 'state.json'),
    });
    expect(cli.code).toBe(0);
    await stack.drain();
    const replayed = (await ledgerOf(stack, ddb, 'evt_01J8K7A004')).find((r) => r.consumerId === 'billing-meter');
    expect(replayed).toMatchObject({ state: 'done', units: 5 });
    operator.destroy();
  });
});

describe('IAM on every call a function makes', () => {
  const signedAs = (id: string) => stack.functionKey(id);

  it("denies billing-meter's role a read of audit-writer's ledger row (dynamodb:LeadingKeys), as AccessDeniedException", async () => {
    const billing = fnId('ConsumersbillingmeterWorker');
    const client = new DynamoDBClient({
      endpoint: stack.proxies.dynamodb,
      region: 'us-east-1',
      credentials: signedAs(billing),
      maxAttempts: 1,
    });
    const ledgerRow = { pk: { S: 'platform:evt_01J8K7A001#audit-writer' } };
    const error = await client.send(new GetItemCommand({ TableName: stack.state.tables.ledger, Key: ledgerRow })).catch((e: Error) => e);
    expect((error as Error).name).toBe('AccessDeniedException');
    expect((error as Error).message).toContain('is not authorized to perform: dynamodb:GetItem');
    const own = await client.send(
      new GetItemCommand({ TableName: stack.state.tables.ledger, Key: { pk: { S: 'platform:evt_01J8K7A001#billing-meter' } } }),
    );
    expect(own.Item?.consumerId?.S).toBe('billing-meter');
    client.destroy();
    expect(recorded.denials.at(-1)).toEqual({
      principal: expect.stringMatching(/role\/Hookledger-ConsumersbillingmeterRole/),
      functionId: billing,
      action: 'dynamodb:GetItem',
      resource: `arn:aws:dynamodb:us-east-1:000000000000:table/${stack.state.tables.ledger}`,
    });
  });

  it("denies billing-meter's role risk-evaluator's claim-checked view (s3:GetObject on views/risk-evaluator/*), as AccessDenied", async () => {
    const s3 = new S3Client({
      endpoint: stack.proxies.s3,
      region: 'us-east-1',
      credentials: signedAs(fnId('ConsumersbillingmeterWorker')),
      forcePathStyle: true,
      maxAttempts: 1,
    });
    const bucket = Object.values(stack.resources.buckets)[0]!.name;
    const error = await s3
      .send(new GetObjectCommand({ Bucket: bucket, Key: 'views/risk-evaluator/evt_01J8K7A2MB/x' }))
      .catch((e: Error) => e);
    expect((error as Error).name).toBe('AccessDenied');
    s3.destroy();
  });

  it("denies intake's role sqs:SendMessage to a consumer queue; the operator's own key is not checked", async () => {
    const queueUrl = stack.state.queues['billing-meter']!.url;
    const asIntake = new SQSClient({
      endpoint: stack.proxies.sqs,
      region: 'us-east-1',
      credentials: signedAs(fnId('IngestHandler')),
      useQueueUrlAsEndpoint: false,
      maxAttempts: 1,
    });
    const error = await asIntake.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{}' })).catch((e: Error) => e);
    // SQS's JSON protocol answers the query protocol's code, as SQS does.
    expect((error as Error).name).toBe('AccessDenied');
    expect(recorded.denials.at(-1)).toMatchObject({
      action: 'sqs:SendMessage',
      resource: expect.stringMatching(/:Hookledger-Consumers-billingmeter-[0-9A-F]{8}-queue$/),
    });
    asIntake.destroy();
  });

  it('reports, per role, the actions granted, used in this run and never used; the run itself was denied nothing', () => {
    const report = Object.fromEntries(stack.iam.report().map((r) => [r.roleId.replace(/[0-9A-F]{8}$/, ''), r]));
    expect(report.IngestHandlerRole?.used).toEqual([
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      's3:PutObject',
      // The 900 kB body is tagged with its retention (PutObject with x-amz-tagging needs both).
      's3:PutObjectTagging',
      'secretsmanager:GetSecretValue',
    ]);
    expect(report.IngestHandlerRole?.unused).toEqual(['dynamodb:DeleteItem', 'dynamodb:GetItem', 'secretsmanager:DescribeSecret']);
    expect(report.FanOutHandlerRole?.used).toContain('sqs:SendMessage');
    expect(report.ConsumersriskevaluatorRole?.used).toEqual(
      expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:UpdateItem', 'sqs:DeleteMessage', 'sqs:ReceiveMessage']),
    );
    // Only the three calls the tests above made on purpose were denied.
    expect(recorded.denials.map((d) => d.action)).toEqual(['dynamodb:GetItem', 's3:GetObject', 'sqs:SendMessage']);
    // The quarantine went to the DLQ under billing-meter's own grant.
    expect(report.ConsumersbillingmeterRole?.used).toContain('sqs:SendMessage');
  });
});

describe('callers the assembly does not know are denied, as AWS denies them', () => {
  const arnOf = (source: string) => {
    const variables = stack.assembly.resources[fnId('IngestHandler')]!.Properties!.Environment as { Variables: unknown };
    const env = resolveIntrinsics(variables.Variables, stack.resources.locals) as Record<string, string>;
    return (JSON.parse(env.SOURCE_SECRETS!) as Record<string, string>)[source]!;
  };
  const getSecretValue = (arn: string) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'secretsmanager.GetSecretValue' },
    body: JSON.stringify({ SecretId: arn }),
  });

  it("denies an unsigned GetSecretValue of platform's signing secret (MissingAuthenticationTokenException): the secret is not in the answer", async () => {
    const secret = (await stack.secrets.get('platform')).current;
    const answer = await rawRequest(stack.proxies.secretsmanager, getSecretValue(arnOf('platform')));
    expect(answer.status).toBe(403);
    expect(answer.headers['x-amzn-errortype']).toBe('MissingAuthenticationTokenException');
    expect(answer.body).not.toContain(secret);
    expect(answer.body).not.toContain('SecretString');
  });

  it("denies GetSecretValue signed by a key of no function (UnrecognizedClientException) or by intake's key id with another secret (InvalidSignatureException)", async () => {
    const secret = (await stack.secrets.get('platform')).current;
    const attempts = [
      { accessKeyId: 'AKIAEXAMPLEOPERATOR1', secretAccessKey: 'x' },
      { accessKeyId: accessKeyIdOf(fnId('IngestHandler')), secretAccessKey: 'local' },
    ];
    const names: string[] = [];
    for (const credentials of attempts) {
      const client = new SecretsManagerClient({ endpoint: stack.proxies.secretsmanager, region: 'us-east-1', credentials, maxAttempts: 1 });
      const result = await client.send(new GetSecretValueCommand({ SecretId: arnOf('platform') })).catch((e: Error) => e);
      client.destroy();
      expect((result as { SecretString?: string }).SecretString).not.toBe(secret);
      names.push((result as Error).name);
    }
    expect(names).toEqual(['UnrecognizedClientException', 'InvalidSignatureException']);
  });

  it("denies an unsigned Lambda Invoke and an unsigned UpdateEventSourceMapping that would disable billing-meter's mapping: it stays enabled", async () => {
    const billing = fnId('ConsumersbillingmeterWorker');
    const [uuid] = Object.entries(stack.assembly.resources).find(
      ([, r]) =>
        r.Type === 'AWS::Lambda::EventSourceMapping' && (r.Properties?.FunctionName as { Ref?: string } | undefined)?.Ref === billing,
    )!;
    const invoke = await rawRequest(`${stack.proxies.lambda}/2015-03-31/functions/${billing}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Records: [] }),
    });
    expect({ status: invoke.status, type: invoke.headers['x-amzn-errortype'] }).toEqual({
      status: 403,
      type: 'MissingAuthenticationTokenException',
    });
    const disable = await rawRequest(`${stack.proxies.lambda}/2015-03-31/event-source-mappings/${uuid}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Enabled: false }),
    });
    expect({ status: disable.status, type: disable.headers['x-amzn-errortype'] }).toEqual({
      status: 403,
      type: 'MissingAuthenticationTokenException',
    });
    expect(stack.paused()).toEqual([]);
  });

  it("denies a proxied DynamoDB GetItem of billing-meter's ledger row unsigned or signed by a key of no function; the operator's per-start key reads it", async () => {
    const key = { pk: { S: 'platform:evt_01J8K7A001#billing-meter' } };
    const stranger = new DynamoDBClient({
      endpoint: stack.proxies.dynamodb,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIAEXAMPLEOPERATOR1', secretAccessKey: 'x' },
      maxAttempts: 1,
    });
    const error = await stranger.send(new GetItemCommand({ TableName: stack.state.tables.ledger, Key: key })).catch((e: Error) => e);
    expect((error as Error).name).toBe('UnrecognizedClientException');
    stranger.destroy();
    const unsigned = await rawRequest(stack.proxies.dynamodb, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.GetItem' },
      body: JSON.stringify({ TableName: stack.state.tables.ledger, Key: key }),
    });
    expect({ status: unsigned.status, type: unsigned.headers['x-amzn-errortype'] }).toEqual({
      status: 403,
      type: 'MissingAuthenticationTokenException',
    });
    const operator = new DynamoDBClient({
      endpoint: stack.proxies.dynamodb,
      region: 'us-east-1',
      credentials: stack.credentials,
      maxAttempts: 1,
    });
    const own = await operator.send(new GetItemCommand({ TableName: stack.state.tables.ledger, Key: key }));
    expect(own.Item?.consumerId?.S).toBe('billing-meter');
    operator.destroy();
  });
});
