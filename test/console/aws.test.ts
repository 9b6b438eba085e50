/**
 * `hookledger console --stack <name>`: the console on a deployed stack, with mocked AWS clients
 * (aws-sdk-client-mock) behind the same target the CLI builds from the stack's outputs. Each view's
 * API over HTTP: which calls it makes with which parameters (tables and queues from the outputs, the
 * window index by partition, Secrets Manager's version metadata and never a value), and what it answers.
 * The EventStore and Ledger are an in-memory map served through the document client's Get, BatchGet
 * and Query (key conditions only), holding the items intake and the consumers write.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { LambdaClient, ListEventSourceMappingsCommand, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import { GetSecretValueCommand, ListSecretVersionIdsCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetQueueAttributesCommand, ListMessageMoveTasksCommand, SQSClient, StartMessageMoveTaskCommand } from '@aws-sdk/client-sqs';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../bin/cli';
import { TOKEN_HEADER } from '../../console/server';
import {
  dayTenantsPartition,
  duplicateCountKey,
  duplicateMinuteAttribute,
  eventKey,
  ledgerKey,
  payloadKey,
  tenantDayKey,
  tenantDayPartition,
} from '../../core/model';
import { runCli } from '../support/cli';
import { type ConsoleStack, call, config } from './support';

const cfn = mockClient(CloudFormationClient);
const sqs = mockClient(SQSClient);
const lambda = mockClient(LambdaClient);
const sm = mockClient(SecretsManagerClient);
const ddb = mockClient(DynamoDBDocumentClient);

const Q = 'https://sqs.eu-west-1.amazonaws.com/123456789012';
const ARN = 'arn:aws:sqs:eu-west-1:123456789012';
const EVENTS = 'Hookledger-EventStoreEvents-1';
const LEDGER = 'Hookledger-EventStoreLedger-1';
const OUTPUTS = {
  WebhookUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/hooks/',
  EventStoreTableName: EVENTS,
  LedgerTableName: LEDGER,
  QueueUrlBillingMeter: `${Q}/billing-meter-queue`,
  DlqUrlBillingMeter: `${Q}/billing-meter-dlq`,
  QueueUrlAuditWriter: `${Q}/audit-writer-queue`,
  DlqUrlAuditWriter: `${Q}/audit-writer-dlq`,
  QueueUrlRiskEvaluator: `${Q}/risk-evaluator-queue`,
  DlqUrlRiskEvaluator: `${Q}/risk-evaluator-dlq`,
  SecretArnPlatform: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:platform-AbC',
};
const HMAC = 'a1'.repeat(32);
const NOW = Date.now();
const RECEIVED = NOW - 3_600_000;
const DAY = new Date(RECEIVED).toISOString().slice(0, 10);
const ROTATED = new Date(NOW - 2 * 3_600_000);

/** The items intake and the consumers wrote: two events of tenant_204, one delivery lost, one quarantined. */
const tables = new Map<string, Map<string, Record<string, unknown>>>([
  [EVENTS, new Map()],
  [LEDGER, new Map()],
]);
function put(table: string, item: Record<string, unknown>) {
  tables.get(table)!.set(item.pk as string, item);
}
function receipt(eventId: string, receivedAt: number) {
  put(EVENTS, {
    pk: eventKey('platform', eventId),
    kind: 'event',
    source: 'platform',
    eventId,
    eventType: 'payment.succeeded',
    tenantId: 'tenant_204',
    keyId: 'key_42',
    consumers: ['billing-meter', 'audit-writer', 'risk-evaluator'],
    receivedAt,
    payloadHmac: HMAC,
    payloadBytes: 57,
    secretVersion: 'previous',
    payloadExpiresAt: NOW + 30 * 86_400_000,
    wpk: tenantDayPartition('tenant_204', DAY),
    wsk: receivedAt,
  });
}
function delivery(eventId: string, consumerId: string, row: Record<string, unknown>) {
  put(LEDGER, { pk: ledgerKey('platform', eventId, consumerId), consumerId, tenantId: 'tenant_204', attempt: 1, ...row });
}

let env: ConsoleStack;
let served: Promise<number>;
let interrupt: () => void;
const stdout: string[] = [];

beforeAll(async () => {
  receipt('evt_01J8K7A101', RECEIVED);
  receipt('evt_01J8K7A102', RECEIVED + 1000);
  put(EVENTS, {
    pk: tenantDayKey(DAY, 'tenant_204'),
    kind: 'tenantDay',
    day: DAY,
    tenantId: 'tenant_204',
    shards: 1,
    wpk: dayTenantsPartition(DAY),
    wsk: 0,
  });
  put(EVENTS, {
    pk: payloadKey('platform', 'evt_01J8K7A101', HMAC),
    kind: 'payload',
    encoding: 'identity',
    body: new TextEncoder().encode('{"id":"evt_01J8K7A101","data":{"amount":4200}}'),
    expiresAt: Math.floor((NOW + 30 * 86_400_000) / 1000),
  });
  for (const id of ['evt_01J8K7A101', 'evt_01J8K7A102']) {
    delivery(id, 'billing-meter', {
      state: 'done',
      units: 5,
      ackAt: RECEIVED + 2000,
      principal: 'arn:aws:sts::123456789012:assumed-role/billing',
    });
  }
  delivery('evt_01J8K7A101', 'audit-writer', { state: 'done', units: 1, ackAt: RECEIVED + 2000 });
  delivery('evt_01J8K7A101', 'risk-evaluator', {
    state: 'quarantined',
    lastErrorCategory: 'invalid_payload',
    errors: [{ attempt: 1, at: RECEIVED + 1500, category: 'invalid_payload', message: 'data.amount must be a number' }],
  });
  delivery('evt_01J8K7A102', 'risk-evaluator', { state: 'done', units: 1, ackAt: RECEIVED + 3000 });
  // evt_01J8K7A102 -> audit-writer: no ledger row (its message was lost).
  // The provider retried evt_01J8K7A101 twice a second after it arrived: intake's duplicate count for that minute.
  put(EVENTS, {
    pk: duplicateCountKey('platform', RECEIVED + 1000),
    kind: 'duplicates',
    source: 'platform',
    hourStart: Math.floor((RECEIVED + 1000) / 3_600_000) * 3_600_000,
    [duplicateMinuteAttribute(RECEIVED + 1000)]: 2,
  });

  cfn.on(DescribeStacksCommand, { StackName: 'Hookledger' }).resolves({
    Stacks: [
      {
        StackName: 'Hookledger',
        StackStatus: 'UPDATE_COMPLETE',
        CreationTime: new Date(),
        Outputs: Object.entries(OUTPUTS).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
      },
    ],
  });
  ddb.on(GetCommand).callsFake((input) => ({ Item: tables.get(input.TableName)?.get(input.Key.pk) }));
  ddb.on(BatchGetCommand).callsFake((input) => ({
    Responses: Object.fromEntries(
      Object.entries(input.RequestItems as Record<string, { Keys: { pk: string }[] }>).map(([table, { Keys }]) => [
        table,
        Keys.map((k) => tables.get(table)?.get(k.pk)).filter(Boolean),
      ]),
    ),
  }));
  ddb.on(QueryCommand).callsFake((input) => {
    const v = input.ExpressionAttributeValues as Record<string, unknown>;
    const items = [...tables.get(input.TableName)!.values()].filter(
      (item) =>
        item.wpk === v[':wpk'] &&
        (v[':from'] === undefined || ((item.wsk as number) >= (v[':from'] as number) && (item.wsk as number) <= (v[':last'] as number))),
    );
    return { Items: items, Count: items.length, ScannedCount: items.length };
  });
  ddb.on(PutCommand).resolves({});
  const depth: Record<string, [number, number]> = { 'risk-evaluator-dlq': [1, 0], 'audit-writer-queue': [0, 0] };
  sqs.on(GetQueueAttributesCommand).callsFake((input) => {
    const name = String(input.QueueUrl).split('/').pop() as string;
    const [visible, inFlight] = depth[name] ?? [0, 0];
    return {
      Attributes: {
        QueueArn: `${ARN}:${name}`,
        ApproximateNumberOfMessages: String(visible),
        ApproximateNumberOfMessagesNotVisible: String(inFlight),
      },
    };
  });
  sqs.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: 'task-1' });
  sqs.on(ListMessageMoveTasksCommand).resolves({
    Results: [{ TaskHandle: 'task-1', Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 1, ApproximateNumberOfMessagesToMove: 1 }],
  });
  lambda.on(ListEventSourceMappingsCommand).callsFake((input) => ({
    EventSourceMappings: [
      { UUID: `esm-${String(input.EventSourceArn).split(':').pop()}`, State: 'Enabled', EventSourceArn: input.EventSourceArn },
    ],
  }));
  lambda.on(UpdateEventSourceMappingCommand).resolves({});
  sm.on(ListSecretVersionIdsCommand, { SecretId: OUTPUTS.SecretArnPlatform }).resolves({
    Versions: [
      { VersionId: 'v2', VersionStages: ['AWSCURRENT'], CreatedDate: ROTATED },
      { VersionId: 'v1', VersionStages: ['AWSPREVIOUS'], CreatedDate: new Date(NOW - 90 * 86_400_000) },
    ],
  });
  sm.on(GetSecretValueCommand).rejects(new Error('the console must never read a secret value'));

  // `hookledger console --stack Hookledger --region eu-west-1`, as an operator runs it; the URL is read from its output.
  const io = {
    stdout: { write: (s: string) => stdout.push(String(s)) > 0 } as unknown as NodeJS.WritableStream,
    stderr: { write: () => true } as unknown as NodeJS.WritableStream,
    stdin: process.stdin,
    env: { USER: 'ops-aws', AWS_REGION: 'eu-west-1' },
    interrupted: new Promise<void>((resolve) => {
      interrupt = resolve;
    }),
  };
  served = main(['console', '--stack', 'Hookledger', '--region', 'eu-west-1'], io, config);
  const deadline = Date.now() + 15_000;
  while (!stdout.join('').includes('console URL')) {
    if (Date.now() > deadline) throw new Error(`the console did not print its URL: ${stdout.join('')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const url = new URL(/console URL\s+(\S+)/.exec(stdout.join(''))![1]!);
  // The printed link's one-time code, exchanged as a browser does: the session token arrives as the cookie.
  const signIn = await fetch(url, { redirect: 'manual' });
  const token = /^hookledger_console_\d+=([^;]+);/.exec(signIn.headers.get('set-cookie') ?? '')?.[1];
  if (!token) throw new Error(`the printed link did not sign in (${signIn.status})`);
  env = {
    console: { origin: url.origin, token, port: Number(url.port) } as ConsoleStack['console'],
    seen: [],
  } as unknown as ConsoleStack;
}, 30_000);
afterAll(async () => {
  interrupt(); // Ctrl-C
  expect(await served).toBe(0);
  for (const m of [cfn, sqs, lambda, sm, ddb]) m.restore();
});

describe('hookledger console --stack (mocked AWS clients)', () => {
  it('prints the console URL on 127.0.0.1 with a one-time code, and the stack it serves', () => {
    expect(stdout.join('')).toMatch(
      /^console URL {5}http:\/\/127\.0\.0\.1:\d+\/\?code=[A-Za-z0-9_-]{43} {3}\(signs in one browser, once\)\n {2}target {10}stack Hookledger \(eu-west-1\)\n/,
    );
  });

  it('refuses a request without the token (403) before any AWS call', async () => {
    const before = ddb.calls().length;
    const res = await fetch(`${env.console.origin}/api/events?eventId=evt_01J8K7A101`);
    expect(res.status).toBe(403);
    expect(ddb.calls().length).toBe(before);
  });

  it('Events: by id from the EventStore table the outputs name, with the deliveries read from the Ledger', async () => {
    const res = await call(env, '/api/events?eventId=evt_01J8K7A102');
    expect(res.json.rows).toEqual([
      {
        source: 'platform',
        eventId: 'evt_01J8K7A102',
        tenantId: 'tenant_204',
        eventType: 'payment.succeeded',
        receivedAt: RECEIVED + 1000,
        secretVersion: 'previous',
        deliveries: { 'billing-meter': 'done', 'audit-writer': 'ready', 'risk-evaluator': 'done' },
      },
    ]);
    const gets = ddb.commandCalls(GetCommand).map((c) => c.args[0].input);
    expect(gets).toContainEqual(expect.objectContaining({ TableName: EVENTS, Key: { pk: eventKey('platform', 'evt_01J8K7A102') } }));
    const windowed = await call(env, '/api/events?tenant=tenant_204&state=quarantined');
    expect(windowed.json.rows.map((r: { eventId: string }) => r.eventId)).toEqual(['evt_01J8K7A101']);
    expect(ddb.commandCalls(QueryCommand).every((c) => c.args[0].input.IndexName === 'byTenantDay')).toBe(true);
  });

  it('Event: the trace with the quarantine reason and the payload, and a Replay dry run counting 1', async () => {
    const res = await call(env, '/api/event?eventId=evt_01J8K7A101');
    expect(res.json.receipt).toMatchObject({ secretVersion: 'previous', payload: 'present', payloadHash: `hmac-sha256:${HMAC}` });
    expect(res.json.deliveries.find((d: { consumer: string }) => d.consumer === 'risk-evaluator')).toMatchObject({
      state: 'quarantined',
      lastErrorCategory: 'invalid_payload',
      errors: [{ attempt: 1, message: 'data.amount must be a number' }],
    });
    expect(res.json.payload.json).toEqual({ id: 'evt_01J8K7A101', data: { amount: 4200 } });
    const plan = await call(env, '/api/event/replay', { body: { eventId: 'evt_01J8K7A101', consumer: 'risk-evaluator', dryRun: true } });
    expect(plan.json).toMatchObject({ matched: 1, dryRun: true, requeued: 0, byState: { quarantined: 1 } });
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });

  it('Consumers: counts per state, queue and DLQ depth by the output URLs, paused from the event source mappings', async () => {
    const res = await call(env, '/api/consumers');
    const byId = Object.fromEntries(res.json.consumers.map((c: { consumer: string }) => [c.consumer, c]));
    expect(byId['risk-evaluator']).toMatchObject({ paused: false, quarantined: 1, done: 1, dlq: { visible: 1, inFlight: 0 } });
    expect(byId['audit-writer']).toMatchObject({ paused: false, ready: 1, done: 1, oldestPendingAt: RECEIVED + 1000 });
    expect(byId['billing-meter']).toMatchObject({ done: 2 });
    const queues = sqs.commandCalls(GetQueueAttributesCommand).map((c) => c.args[0].input.QueueUrl);
    expect(queues).toContain(OUTPUTS.DlqUrlRiskEvaluator);
  });

  it('Consumers: Redrive risk-evaluator counts 1, then starts the SQS move task from its DLQ to its queue and reports 1 moved', async () => {
    const plan = await call(env, '/api/consumers/redrive', { body: { consumer: 'risk-evaluator', dryRun: true } });
    expect(plan.json).toEqual({ consumer: 'risk-evaluator', dryRun: true, toMove: 1, inFlight: 0 });
    expect(sqs.commandCalls(StartMessageMoveTaskCommand)).toHaveLength(0);
    const moved = await call(env, '/api/consumers/redrive', { body: { consumer: 'risk-evaluator' } });
    expect(moved.json).toMatchObject({ consumer: 'risk-evaluator', method: 'move-task', moved: 1, toMove: 1, status: 'COMPLETED' });
    expect(sqs.commandCalls(StartMessageMoveTaskCommand)[0]?.args[0].input).toEqual({
      SourceArn: `${ARN}:risk-evaluator-dlq`,
      DestinationArn: `${ARN}:risk-evaluator-queue`,
    });
  });

  it('Consumers: Pause audit-writer disables the event source mapping found by its queue ARN', async () => {
    const res = await call(env, '/api/consumers/pause', { body: { consumer: 'audit-writer' } });
    expect(res.json).toEqual({ consumer: 'audit-writer', paused: true });
    expect(lambda.commandCalls(UpdateEventSourceMappingCommand).map((c) => c.args[0].input)).toEqual([
      { UUID: 'esm-audit-writer-queue', Enabled: false },
    ]);
  });

  it("Usage: tenant_204's units by consumer from the window index, and its CSV", async () => {
    const res = await call(env, '/api/usage?tenant=tenant_204');
    expect(res.json.rows).toEqual([
      { tenantId: 'tenant_204', consumerId: 'audit-writer', units: 1, deliveries: 1 },
      { tenantId: 'tenant_204', consumerId: 'billing-meter', units: 10, deliveries: 2 },
      { tenantId: 'tenant_204', consumerId: 'risk-evaluator', units: 1, deliveries: 1 },
    ]);
    const csv = await call(env, '/api/usage.csv?tenant=tenant_204');
    expect(
      csv.text
        .split('\r\n')
        .slice(1, 4)
        .map((l) => l.split(',').slice(2).join(',')),
    ).toEqual(['tenant_204,audit-writer,1,1', 'tenant_204,billing-meter,10,2', 'tenant_204,risk-evaluator,1,1']);
  });

  it('Reconcile: the lost audit-writer delivery by its ids; Repair dry run counts it and writes nothing', async () => {
    const res = await call(env, '/api/reconcile?grace=15m');
    expect(res.json.violations).toEqual([
      expect.objectContaining({
        kind: 'missing_delivery',
        eventId: 'evt_01J8K7A102',
        consumerId: 'audit-writer',
        ledgerKey: ledgerKey('platform', 'evt_01J8K7A102', 'audit-writer'),
      }),
    ]);
    const plan = await call(env, '/api/reconcile/repair', { body: { grace: '15m', dryRun: true } });
    expect(plan.json).toMatchObject({ dryRun: true, repaired: 1, unrepaired: 0 });
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });

  it('Sources: rotation state from version metadata (previous verifies until rotation + 72 h), never GetSecretValue', async () => {
    const res = await call(env, '/api/sources');
    expect(res.json.sources).toEqual([
      {
        source: 'platform',
        scheme: 'standard-webhooks',
        events: 2,
        bySecretVersion: { previous: 2 },
        previousSecretLastVerified: RECEIVED + 1000,
        rotation: { source: 'platform', hasPrevious: true, previousUntil: ROTATED.getTime() + 72 * 3_600_000 },
      },
    ]);
    expect(res.json.outcomes).toBeUndefined();
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(0);
  });

  it('sends no whsec_ and the page loads with its bundle', async () => {
    const page = await fetch(`${env.console.origin}/app.js`, { headers: { [TOKEN_HEADER]: env.console.token } });
    expect(page.status).toBe(200);
    expect((await page.text()).length).toBeGreaterThan(10_000);
    expect(env.seen.filter((t) => t.includes('whsec_'))).toEqual([]);
    expect(env.seen.length).toBeGreaterThan(10);
  });
});

describe('hookledger console: bad input', () => {
  it('refuses --port abc (exit 2, naming --port) and serves nothing', async () => {
    const result = await runCli(['console', '--port', 'abc'], config, { USER: 'ops' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--port must be a port number (0-65535)');
    expect(result.stdout).not.toContain('console URL');
  });

  it('says to run npm start when no local stack is running (exit 3), and serves nothing', async () => {
    const result = await runCli(['console'], config, { USER: 'ops', HOOKLEDGER_STATE: '/nonexistent/state.json' });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      'error: no local stack is running (/nonexistent/state.json does not exist). Start one with `npm start` in another terminal, or pass --stack <name> to use a deployed stack.\n',
    );
    expect(result.stdout).toBe('');
  });
});

describe('hookledger console --stack: Activity and Health', () => {
  it('Activity: the window’s counts and latency from the index and ledger, and the duplicates intake counted (the same items as locally)', async () => {
    const res = await call(env, '/api/activity?preset=24h');
    expect(res.status).toBe(200);
    expect(res.json.sources).toEqual([
      { source: 'platform', received: expect.any(Array), total: 2, duplicates: expect.any(Array), duplicateTotal: 2 },
    ]);
    // In the bucket their minute starts in (30-minute buckets).
    const minute = Math.floor((RECEIVED + 1000) / 60_000) * 60_000;
    const bucket = res.json.buckets.filter((start: number) => start <= minute).length - 1;
    expect(res.json.sources[0].duplicates[bucket]).toBe(2);
    expect(
      res.json.consumers.map((c: { consumer: string; totals: unknown; latencyMs: unknown }) => [c.consumer, c.totals, c.latencyMs]),
    ).toEqual([
      ['billing-meter', { done: 2, retrying: 0, quarantined: 0 }, { p50: 1000, p99: 2000, samples: 2 }],
      ['audit-writer', { done: 1, retrying: 0, quarantined: 0 }, { p50: 2000, p99: 2000, samples: 1 }],
      ['risk-evaluator', { done: 1, retrying: 0, quarantined: 1 }, { p50: 2000, p99: 2000, samples: 1 }],
    ]);
    expect(res.json.duplicatesSinceStart).toBeUndefined();
    expect(
      ddb.commandCalls(BatchGetCommand).some((c) => JSON.stringify(c.args[0].input).includes(duplicateCountKey('platform', RECEIVED))),
    ).toBe(true);
  });

  it('Health: DeadLetters ALARM for risk-evaluator’s DLQ message, OK for the others; computed from the same data, said so', async () => {
    const res = await call(env, '/api/health');
    expect(res.status).toBe(200);
    const dead = res.json.rows.filter((r: { rule: string }) => r.rule === 'DeadLetters');
    expect(dead.map((r: { subject: string; state: string }) => [r.subject, r.state])).toEqual([
      ['billing-meter', 'OK'],
      ['audit-writer', 'OK'],
      ['risk-evaluator', 'ALARM'],
    ]);
    expect(res.json.rows.some((r: { rule: string }) => r.rule === 'SignatureFailures')).toBe(false);
    expect(res.json.notes.join(' ')).toContain('the CloudWatch client is not installed');
    expect(res.json.notes.join(' ')).toContain('this target keeps no intake counters');
  });
});
