/**
 * The stream side: the fan-out's event source must let through only new work, retry a bounded number
 * of times, bisect, skip stale records and park failures on a queue; none of that can be exercised
 * against an emulator, so it is asserted on the template.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import {
  actionsOf,
  CONFIGS,
  functionWithEnv,
  type Json,
  mappingsOf,
  refTarget,
  resourcesOfType,
  resourceTargets,
  statementsOfRole,
  synth,
  workers,
} from './support';

describe.each(CONFIGS)('fan-out with the $name', ({ config }) => {
  const consumers = defineConfig(config).consumers;
  let json: Json;
  let fanOutId: string;
  let fanOut: Json;
  let mapping: Json;
  let eventsTable: string;

  beforeAll(() => {
    json = synth(config).json;
    [fanOutId, fanOut] = functionWithEnv(json, 'QUEUE_URLS');
    const mappings = mappingsOf(json, fanOutId);
    expect(mappings).toHaveLength(1);
    mapping = mappings[0];
    [eventsTable] = resourcesOfType(json, 'AWS::DynamoDB::Table').find(([, t]) => t.Properties.StreamSpecification)!;
  });

  it('reads the EventStore stream from the trim horizon', () => {
    expect(mapping.EventSourceArn).toEqual({ 'Fn::GetAtt': [eventsTable, 'StreamArn'] });
    expect(mapping.StartingPosition).toBe('TRIM_HORIZON');
  });

  it('passes only INSERTs of event and requeue items (acknowledgements and TTL deletes never re-enqueue)', () => {
    expect(mapping.FilterCriteria.Filters).toHaveLength(1);
    expect(JSON.parse(mapping.FilterCriteria.Filters[0].Pattern)).toEqual({
      eventName: ['INSERT'],
      dynamodb: { NewImage: { kind: { S: ['event', 'requeue'] } } },
    });
  });

  it('bounds retries, bisects failing batches, skips stale records and reports partial failures', () => {
    expect(mapping.MaximumRetryAttempts).toBeGreaterThanOrEqual(0);
    expect(mapping.MaximumRetryAttempts).toBeLessThanOrEqual(10);
    expect(mapping.BisectBatchOnFunctionError).toBe(true);
    expect(mapping.MaximumRecordAgeInSeconds).toBeGreaterThanOrEqual(60);
    expect(mapping.MaximumRecordAgeInSeconds).toBeLessThanOrEqual(24 * 3600);
    expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });

  it('sends records it gives up on to a dedicated, encrypted, SSL-only failure queue', () => {
    const failureQueueId = refTarget(mapping.DestinationConfig.OnFailure.Destination)!;
    const failureQueue = json.Resources[failureQueueId];
    expect(failureQueue.Type).toBe('AWS::SQS::Queue');
    expect(failureQueue.Properties.SqsManagedSseEnabled).toBe(true);
    // Dedicated: it is no consumer's queue or DLQ.
    for (const w of workers(json)) expect([w.queueId, w.dlqId]).not.toContain(failureQueueId);
    const policies = resourcesOfType(json, 'AWS::SQS::QueuePolicy').filter(([, p]) =>
      p.Properties.Queues.some((q: Json) => refTarget(q) === failureQueueId),
    );
    expect(policies).toHaveLength(1);
    expect(JSON.stringify(policies[0]![1].Properties.PolicyDocument)).toContain('aws:SecureTransport');
  });

  it('maps every consumer id to its queue URL in QUEUE_URLS', () => {
    const joined = fanOut.Properties.Environment.Variables.QUEUE_URLS['Fn::Join'];
    expect(joined[0]).toBe('');
    // Rebuild the JSON with each Ref replaced by the logical id it names.
    const text = joined[1].map((part: Json) => (typeof part === 'string' ? part : `ref:${refTarget(part)}`)).join('');
    const map = JSON.parse(text) as Record<string, string>;
    expect(map).toEqual(Object.fromEntries(workers(json).map((w) => [w.consumerId, `ref:${w.queueId}`])));
    expect(Object.keys(map).sort()).toEqual(consumers.map((c) => c.id).sort());
  });

  it('may send to every consumer queue (and its failure queue) but to no DLQ, and reads only payload items', () => {
    const roleId = refTarget(fanOut.Properties.Role)!;
    const statements = statementsOfRole(json, roleId);
    const sendTargets = statements.filter((s) => actionsOf(s).includes('sqs:SendMessage')).flatMap(resourceTargets);
    const failureQueueId = refTarget(mapping.DestinationConfig.OnFailure.Destination)!;
    expect(sendTargets.sort()).toEqual([...workers(json).map((w) => w.queueId), failureQueueId].sort());
    const tableActions = statements.flatMap(actionsOf).filter((a) => a.startsWith('dynamodb:'));
    expect(tableActions.sort()).toEqual(
      ['dynamodb:DescribeStream', 'dynamodb:GetItem', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'].sort(),
    );
    // The only item reader of payloads: GetItem on pay# keys of the EventStore, nothing else.
    const itemReads = statements.filter((s) => actionsOf(s).includes('dynamodb:GetItem'));
    expect(itemReads).toHaveLength(1);
    expect(actionsOf(itemReads[0]!)).toEqual(['dynamodb:GetItem']);
    expect(resourceTargets(itemReads[0]!)).toEqual([eventsTable]);
    expect(itemReads[0]!.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['pay#*'] } });
    expect(fanOut.Properties.Environment.Variables.EVENTS_TABLE).toEqual({ Ref: eventsTable });
  });
});
