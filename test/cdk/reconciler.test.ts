/**
 * The reconciler with repair on (the default, `reconcile.repair`): what it may write, read and call,
 * and how it is told the limit and the queues. Emulators cannot show IAM; these assertions do.
 */
import { App, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { Reconciler } from '../../lib/constructs/reconciler';
import {
  actionsOf,
  defaultConfig,
  type Json,
  refTarget,
  resourcesOfType,
  resourceTargets,
  statementsOfRole,
  synth,
  workers,
} from './support';

function reconcilerOf(json: Json): [string, Json] {
  return resourcesOfType(json, 'AWS::Lambda::Function').find(
    ([, fn]) => fn.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME === 'hookledger-reconcile',
  )!;
}

describe('reconciler with repair on (default config)', () => {
  let json: Json;
  let fnId: string;
  let fn: Json;
  let statements: ReturnType<typeof statementsOfRole>;
  beforeAll(() => {
    json = synth(defaultConfig).json;
    [fnId, fn] = reconcilerOf(json);
    statements = statementsOfRole(json, refTarget(fn.Properties.Role)!);
  });

  it('is told the per-run limit (500 by default), every consumer queue ARN and the on-failure queue', () => {
    expect(defineConfig(defaultConfig).reconcile).toEqual({ repair: true, maxRepairsPerRun: 500 });
    const env = fn.Properties.Environment.Variables;
    expect(env.REPAIR_MAX_PER_RUN).toBe('500');
    const failureQueueId = refTarget(json.Outputs.FanoutFailureQueueUrl.Value);
    expect(refTarget(env.FANOUT_FAILURE_QUEUE_URL)).toBe(failureQueueId);
    // QUEUE_ARNS is a JSON object built with Fn::Join: every worker queue's ARN is in it, by consumer id.
    const joined = JSON.stringify(env.QUEUE_ARNS);
    for (const w of workers(json)) {
      expect(joined, w.consumerId).toContain(`\\"${w.consumerId}\\":\\"`);
      expect(joined, w.consumerId).toContain(`{"Fn::GetAtt":["${w.queueId}","Arn"]}`);
    }
    expect(workers(json)).toHaveLength(3);
    expect(fnId).toBeTruthy();
  });

  it('may write only new EventStore items (PutItem: checkpoint, requeue and audit), never the Ledger', () => {
    const tables = resourcesOfType(json, 'AWS::DynamoDB::Table').map(([id]) => id);
    const eventStoreId = refTarget(json.Outputs.EventStoreTableName.Value);
    const ledgerId = refTarget(json.Outputs.LedgerTableName.Value);
    expect(tables.sort()).toEqual([eventStoreId, ledgerId].sort());
    const writes = statements.filter((st) => actionsOf(st).some((a) => /^dynamodb:(Put|Update|Delete|BatchWrite|TransactWrite)/.test(a)));
    // The checkpoint (ckpt#* only) and the repair's requeue and audit items.
    expect(writes.flatMap(actionsOf)).toEqual(['dynamodb:PutItem', 'dynamodb:PutItem']);
    expect(writes.flatMap(resourceTargets).filter((r) => r === eventStoreId)).toHaveLength(2);
    expect(JSON.stringify(writes)).not.toContain(ledgerId);
    expect(writes.map((st) => st.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'])).toEqual([
      ['ckpt#*'],
      ['rq#*', 'audit#*'],
    ]);
  });

  it('cannot Scan either table nor read a stored payload: EventStore items by key only under evt#, tday#, ckpt#; Query only on the window index', () => {
    const eventStoreId = refTarget(json.Outputs.EventStoreTableName.Value);
    const ledgerId = refTarget(json.Outputs.LedgerTableName.Value);
    const reads = statements.filter((st) =>
      actionsOf(st).some((a) => /^dynamodb:(Query|Scan|GetItem|BatchGetItem|PartiQLSelect)$/.test(a)),
    );
    expect(reads.flatMap(actionsOf).filter((a) => a === 'dynamodb:Scan' || a.startsWith('dynamodb:PartiQL'))).toEqual([]);
    expect(reads.map((st) => ({ actions: actionsOf(st).sort(), resource: st.Resource, condition: st.Condition }))).toEqual([
      // Receipts and tenant-day items as the window index projects them (no payload item has `wpk`).
      {
        actions: ['dynamodb:Query'],
        resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [eventStoreId, 'Arn'] }, '/index/byTenantDay']] },
        condition: undefined,
      },
      // Receipts in full (a repair copies their payload hash), tenant-day items, its checkpoint.
      {
        actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'],
        resource: { 'Fn::GetAtt': [eventStoreId, 'Arn'] },
        condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['evt#*', 'tday#*', 'ckpt#*'] } },
      },
      // Ledger rows by key: each receipt's deliveries.
      {
        actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'],
        resource: { 'Fn::GetAtt': [ledgerId, 'Arn'] },
        condition: undefined,
      },
    ]);
  });

  it('reads nothing of a payload through the window index either: it projects no payload attribute', () => {
    const [, table] = resourcesOfType(json, 'AWS::DynamoDB::Table').find(
      ([id]) => id === refTarget(json.Outputs.EventStoreTableName.Value),
    )!;
    const [index] = table.Properties.GlobalSecondaryIndexes;
    expect(index.IndexName).toBe('byTenantDay');
    expect(index.Projection.ProjectionType).toBe('INCLUDE');
    for (const attribute of ['body', 's3Key', 'encoding', 'storedBytes', 'payloadHmac', 'payloadSha256', 'orderingKeys']) {
      expect(index.Projection.NonKeyAttributes).not.toContain(attribute);
    }
  });

  it('may receive and delete only on the fan-out on-failure queue, and send only to its own dead-letter queue', () => {
    const failureQueueId = refTarget(json.Outputs.FanoutFailureQueueUrl.Value);
    const sqsStatements = statements.filter((st) => actionsOf(st).some((a) => a.startsWith('sqs:')));
    const consuming = sqsStatements.filter((st) => !actionsOf(st).includes('sqs:SendMessage'));
    const sending = sqsStatements.filter((st) => actionsOf(st).includes('sqs:SendMessage'));
    expect(consuming.flatMap(actionsOf)).toEqual(
      expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility']),
    );
    expect(sqsStatements.flatMap(actionsOf).filter((a) => a === 'sqs:PurgeQueue')).toEqual([]);
    expect([...new Set(consuming.flatMap(resourceTargets))]).toEqual([failureQueueId]);
    // Lambda's asynchronous-invocation DLQ: the function's role sends its failed events there, nowhere else.
    expect(sending.flatMap(actionsOf)).toEqual(['sqs:SendMessage']);
    const [sendTarget] = sending.flatMap(resourceTargets);
    expect(sendTarget).toMatch(/ReconcilerDeadLetterQueue/);
    expect(sendTarget).not.toBe(failureQueueId);
  });

  it("may read the EventStore's stream records back (GetShardIterator, GetRecords; to decode fan-out failure records), no other stream", () => {
    const eventStoreId = refTarget(json.Outputs.EventStoreTableName.Value);
    const streamReads = statements.filter((st) =>
      actionsOf(st).some((a) => /^dynamodb:(GetRecords|GetShardIterator|DescribeStream|ListStreams)$/.test(a)),
    );
    expect(streamReads.map((st) => actionsOf(st).sort())).toEqual([['dynamodb:GetRecords', 'dynamodb:GetShardIterator']]);
    expect(streamReads[0]?.Resource).toEqual({ 'Fn::GetAtt': [eventStoreId, 'StreamArn'] });
  });

  it('may list event source mappings (to skip paused consumers) but never change one', () => {
    const lambdaActions = statements.flatMap(actionsOf).filter((a) => a.startsWith('lambda:'));
    expect(lambdaActions).toEqual(['lambda:ListEventSourceMappings']);
  });

  it('keeps no write access but its checkpoint when repair is off', () => {
    const off = synth({ ...defaultConfig, reconcile: { repair: false } }).json;
    const [, offFn] = reconcilerOf(off);
    const offStatements = statementsOfRole(off, refTarget(offFn.Properties.Role)!);
    const actions = offStatements.flatMap(actionsOf);
    // Only the send to its own asynchronous-invocation DLQ remains.
    expect(actions.filter((a) => (a.startsWith('sqs:') && a !== 'sqs:SendMessage') || a.startsWith('lambda:'))).toEqual([]);
    // Only its checkpoint item (ckpt#*) remains writable.
    const puts = offStatements.filter((st) => actionsOf(st).some((a) => /^dynamodb:(Put|Update|Delete|BatchWrite|TransactWrite)/.test(a)));
    expect(puts.map((st) => [actionsOf(st), st.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys']])).toEqual([
      [['dynamodb:PutItem'], ['ckpt#*']],
    ]);
    expect(offStatements.filter((st) => actionsOf(st).includes('sqs:SendMessage')).flatMap(resourceTargets)).toEqual([
      expect.stringMatching(/ReconcilerDeadLetterQueue/),
    ]);
    expect(Object.keys(offFn.Properties.Environment.Variables)).not.toContain('REPAIR_MAX_PER_RUN');
  });
});

describe('Reconciler construct', () => {
  it('refuses a per-run repair limit outside 1-10000, quoting it', () => {
    const stack = new Stack(new App(), 'ReconcilerProps');
    const table = new dynamodb.Table(stack, 'T', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
    const queue = new sqs.Queue(stack, 'Q');
    expect(
      () =>
        new Reconciler(stack, 'Reconciler', {
          events: table,
          ledger: table,
          repair: { maxPerRun: 0, consumerQueues: [{ consumerId: 'billing-meter', queue }], fanOutFailureQueue: queue },
        }),
    ).toThrow('repair.maxPerRun must be an integer from 1 to 10000, got 0');
  });
});
