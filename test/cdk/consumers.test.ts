/**
 * Consumer isolation and queue safety, proven on the template (an emulator cannot prove IAM or the
 * event-source settings): one queue, DLQ and worker per consumer; each worker's role reaches only
 * its own queue, DLQ and ledger rows.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { pascalCase } from '../../core/outputs';
import {
  actionsOf,
  allIdentityStatements,
  CONFIGS,
  type Json,
  mappingsOf,
  refTarget,
  resolvePseudo,
  resourcesOfType,
  resourceTargets,
  statementsOfRole,
  synth,
  type WorkerView,
  workers,
} from './support';

describe.each(CONFIGS)('consumer workers with the $name', ({ config }) => {
  const consumers = defineConfig(config).consumers;
  let json: Json;
  let byConsumer: Map<string, WorkerView>;

  beforeAll(() => {
    json = synth(config).json;
    byConsumer = new Map(workers(json).map((w) => [w.consumerId, w]));
  });

  it('creates exactly one queue, one DLQ and one worker per configured consumer', () => {
    expect([...byConsumer.keys()].sort()).toEqual(consumers.map((c) => c.id).sort());
    const queueIds = new Set(workers(json).map((w) => w.queueId));
    const dlqIds = new Set(workers(json).map((w) => w.dlqId));
    expect(queueIds.size).toBe(consumers.length);
    expect(dlqIds.size).toBe(consumers.length);
    // Consumer queues and DLQs plus the fan-out's failure queue and the reconcile schedule's DLQ; nothing else.
    expect(resourcesOfType(json, 'AWS::SQS::Queue')).toHaveLength(2 * consumers.length + 2);
    for (const c of consumers) {
      const w = byConsumer.get(c.id)!;
      expect(json.Outputs[`QueueUrl${pascalCase(c.id)}`].Value).toEqual({ Ref: w.queueId });
      expect(json.Outputs[`DlqUrl${pascalCase(c.id)}`].Value).toEqual({ Ref: w.dlqId });
    }
  });

  it('gives each worker its own role, whose ARN is its PRINCIPAL', () => {
    const roles = new Set(workers(json).map((w) => w.roleId));
    expect(roles.size).toBe(consumers.length);
    for (const w of byConsumer.values()) {
      expect(json.Resources[w.roleId].Type).toBe('AWS::IAM::Role');
      expect(w.fn.Properties.Environment.Variables.PRINCIPAL).toEqual({ 'Fn::GetAtt': [w.roleId, 'Arn'] });
    }
  });

  it('sets exactly the worker environment contract', () => {
    const [eventsTable] = resourcesOfType(json, 'AWS::DynamoDB::Table').find(([, t]) => t.Properties.StreamSpecification)!;
    const [ledgerTable] = resourcesOfType(json, 'AWS::DynamoDB::Table').find(([, t]) => !t.Properties.StreamSpecification)!;
    const [[payloadBucket]] = resourcesOfType(json, 'AWS::S3::Bucket') as [[string, unknown]];
    for (const c of consumers) {
      const w = byConsumer.get(c.id)!;
      expect(w.fn.Properties.Environment.Variables).toEqual({
        CONSUMER_ID: c.id,
        QUEUE_URL: { Ref: w.queueId },
        DLQ_URL: { Ref: w.dlqId },
        PRINCIPAL: { 'Fn::GetAtt': [w.roleId, 'Arn'] },
        EVENTS_TABLE: { Ref: eventsTable },
        LEDGER_TABLE: { Ref: ledgerTable },
        PAYLOAD_BUCKET: { Ref: payloadBucket },
        POWERTOOLS_SERVICE_NAME: `hookledger-${c.id}`,
        POWERTOOLS_METRICS_NAMESPACE: 'Hookledger',
      });
    }
  });

  it("lets each worker's role receive from its own queue and no other", () => {
    for (const w of byConsumer.values()) {
      const receive = statementsOfRole(json, w.roleId).filter((s) => s.Effect === 'Allow' && actionsOf(s).includes('sqs:ReceiveMessage'));
      expect(receive.length).toBeGreaterThan(0);
      expect(receive.flatMap(resourceTargets)).toEqual([w.queueId]);
      expect(actionsOf(receive[0]!).sort()).toEqual(
        ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'].sort(),
      );
    }
  });

  it("lets no role but the consumer's own worker receive from a consumer queue", () => {
    for (const { roles, statement } of allIdentityStatements(json)) {
      if (!actionsOf(statement).some((a) => a === 'sqs:ReceiveMessage' || a === 'sqs:DeleteMessage')) continue;
      for (const target of resourceTargets(statement)) {
        // The one other receiver: the reconciler, on the fan-out's on-failure queue (its repair clears it).
        if (target === refTarget(json.Outputs.FanoutFailureQueueUrl.Value)) {
          const [, reconciler] = resourcesOfType(json, 'AWS::Lambda::Function').find(
            ([, fn]) => fn.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME === 'hookledger-reconcile',
          )!;
          expect(roles).toEqual([refTarget(reconciler.Properties.Role)]);
          continue;
        }
        const owner = [...byConsumer.values()].find((w) => w.queueId === target);
        expect(owner, `unexpected receive grant on ${target}`).toBeDefined();
        expect(roles).toEqual([owner!.roleId]);
      }
    }
  });

  it('lets each worker send only to its own DLQ', () => {
    for (const w of byConsumer.values()) {
      const send = statementsOfRole(json, w.roleId).filter((s) => actionsOf(s).includes('sqs:SendMessage'));
      expect(send.flatMap(resourceTargets)).toEqual([w.dlqId]);
    }
  });

  it("confines ledger access to the consumer's own keys and EventStore reads to key# items: no consumer role can read a payload", () => {
    const [eventsTable] = resourcesOfType(json, 'AWS::DynamoDB::Table').find(([, t]) => t.Properties.StreamSpecification)!;
    const [ledgerTable] = resourcesOfType(json, 'AWS::DynamoDB::Table').find(([, t]) => !t.Properties.StreamSpecification)!;
    const [[payloadBucket]] = resourcesOfType(json, 'AWS::S3::Bucket') as [[string, unknown]];
    for (const c of consumers) {
      const w = byConsumer.get(c.id)!;
      const dynamo = statementsOfRole(json, w.roleId).filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
      expect(dynamo).toHaveLength(2);
      const ledger = dynamo.find((s) => resourceTargets(s).includes(ledgerTable))!;
      expect(actionsOf(ledger).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
      expect(resourceTargets(ledger)).toEqual([ledgerTable]);
      expect(ledger.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`*#${c.id}`] } });
      const events = dynamo.find((s) => resourceTargets(s).includes(eventsTable))!;
      expect(actionsOf(events)).toEqual(['dynamodb:GetItem']);
      expect(resourceTargets(events)).toEqual([eventsTable]);
      expect(events.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['key#*'] } });
      // No statement of the role names pay# at all, nor grants any table action without a key condition.
      expect(JSON.stringify(statementsOfRole(json, w.roleId))).not.toContain('pay#');
      expect(dynamo.every((s) => s.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'])).toBe(true);
      // In the payload bucket: GetObject on its own claim-checked views only, never on payloads/.
      const s3 = statementsOfRole(json, w.roleId).filter((s) => actionsOf(s).some((a) => a.startsWith('s3:')));
      expect(s3.flatMap(actionsOf)).toEqual(['s3:GetObject']);
      expect(JSON.stringify(s3)).toContain(payloadBucket);
      expect(JSON.stringify(s3)).toContain(`/views/${c.id}/*`);
      expect(JSON.stringify(s3)).not.toContain('/payloads/');
    }
  });

  it("sets each queue's visibility timeout to at least 6x its function's timeout", () => {
    const sqsMappings = resourcesOfType(json, 'AWS::Lambda::EventSourceMapping').filter(
      ([, m]) => json.Resources[m.Properties.EventSourceArn['Fn::GetAtt']?.[0]]?.Type === 'AWS::SQS::Queue',
    );
    expect(sqsMappings).toHaveLength(consumers.length);
    for (const [, m] of sqsMappings) {
      const queue = json.Resources[m.Properties.EventSourceArn['Fn::GetAtt'][0]];
      const fn = json.Resources[m.Properties.FunctionName.Ref];
      expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * fn.Properties.Timeout);
    }
    for (const c of consumers) {
      const w = byConsumer.get(c.id)!;
      expect(json.Resources[w.queueId].Properties.VisibilityTimeout).toBe(c.visibilityTimeoutSeconds);
      expect(w.fn.Properties.Timeout).toBe(c.timeoutSeconds);
    }
  });

  it('gives each DLQ the configured maxReceiveCount, 14-day retention and a redrive-allow policy naming its source', () => {
    for (const c of consumers) {
      const w = byConsumer.get(c.id)!;
      const queue = json.Resources[w.queueId].Properties;
      const dlq = json.Resources[w.dlqId].Properties;
      expect(queue.RedrivePolicy).toEqual({
        deadLetterTargetArn: { 'Fn::GetAtt': [w.dlqId, 'Arn'] },
        maxReceiveCount: c.maxReceiveCount,
      });
      expect(dlq.MessageRetentionPeriod).toBe(14 * 24 * 3600);
      expect(queue.MessageRetentionPeriod).toBeLessThan(dlq.MessageRetentionPeriod);
      expect(dlq.RedriveAllowPolicy.redrivePermission).toBe('byQueue');
      expect(dlq.RedriveAllowPolicy.sourceQueueArns).toHaveLength(1);
      // The ARN is built from the source queue's fixed name (see ConsumerWorker): it must be exactly that queue.
      expect(resolvePseudo(dlq.RedriveAllowPolicy.sourceQueueArns[0])).toBe(`arn:aws:sqs:eu-west-1:123456789012:${queue.QueueName}`);
    }
    const names = workers(json).map((w) => json.Resources[w.queueId].Properties.QueueName as string);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name.length).toBeLessThanOrEqual(80);
  });

  it('wires each SQS event source with partial batch responses, batch size and max concurrency from config', () => {
    for (const c of consumers) {
      const w = byConsumer.get(c.id)!;
      const mappings = mappingsOf(json, w.functionId);
      expect(mappings).toHaveLength(1);
      expect(mappings[0]).toMatchObject({
        EventSourceArn: { 'Fn::GetAtt': [w.queueId, 'Arn'] },
        BatchSize: c.batchSize,
        ScalingConfig: { MaximumConcurrency: c.maxConcurrency },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      // Reserved concurrency is opt-in: none of these configs reserve, so no deploy can be refused
      // for leaving the account under 100 unreserved; maximumConcurrency alone caps the consumer.
      expect(c.reservedConcurrency).toBeUndefined();
      expect(w.fn.Properties).not.toHaveProperty('ReservedConcurrentExecutions');
      expect(w.fn.Properties.MemorySize).toBe(c.memoryMb);
    }
  });

  it('retains every DLQ on delete and on replacement, and lets the source queue go', () => {
    for (const w of byConsumer.values()) {
      expect(json.Resources[w.dlqId].DeletionPolicy).toBe('Retain');
      expect(json.Resources[w.dlqId].UpdateReplacePolicy).toBe('Retain');
      expect(json.Resources[w.queueId].DeletionPolicy).toBe('Delete');
    }
  });

  it('encrypts every consumer queue and DLQ', () => {
    for (const w of byConsumer.values()) {
      expect(json.Resources[w.queueId].Properties.SqsManagedSseEnabled).toBe(true);
      expect(json.Resources[w.dlqId].Properties.SqsManagedSseEnabled).toBe(true);
    }
  });
});

describe('reserved concurrency (opt-in per consumer)', () => {
  const withReserved = (reservedConcurrency: number | undefined, maxConcurrency = 5) => ({
    ...CONFIGS[0].config,
    consumers: CONFIGS[0].config.consumers.map((c, i) => (i === 0 ? { ...c, maxConcurrency, reservedConcurrency } : c)),
  });

  it('reserves exactly what a consumer asks for and nothing for the others', () => {
    const json = synth(withReserved(8)).json;
    const reserved = Object.fromEntries(workers(json).map((w) => [w.consumerId, w.fn.Properties.ReservedConcurrentExecutions]));
    expect(reserved).toEqual({ 'billing-meter': 8, 'audit-writer': undefined, 'risk-evaluator': undefined });
    const w = workers(json).find((x) => x.consumerId === 'billing-meter')!;
    expect(mappingsOf(json, w.functionId)[0].ScalingConfig).toEqual({ MaximumConcurrency: 5 });
  });

  it('refuses a reservation below maxConcurrency, naming the value and the fix', () => {
    expect(() => defineConfig(withReserved(3, 5))).toThrow(
      'consumers[id=billing-meter].reservedConcurrency (value 3): must be at least maxConcurrency (5) so the event source is never throttled, got 3; raise it, lower maxConcurrency, or remove it to use the shared pool',
    );
  });
});

describe('queue retention against the retry budget (a failing message must reach its DLQ before it expires)', () => {
  const withRetries = (maxReceiveCount: number, visibilityTimeoutSeconds: number) => ({
    ...CONFIGS[0].config,
    consumers: CONFIGS[0].config.consumers.map((c, i) =>
      i === 0 ? { ...c, maxReceiveCount, visibilityTimeoutSeconds, timeoutSeconds: Math.min(900, visibilityTimeoutSeconds / 6) } : c,
    ),
  });
  const retentionOf = (json: Json) =>
    Object.fromEntries(workers(json).map((w) => [w.consumerId, json.Resources[w.queueId].Properties.MessageRetentionPeriod]));

  it('lengthens the queue retention of 20 receives x a 12 h lease to 11 days (10 days of retries + a day); the others keep 7', () => {
    const json = synth(withRetries(20, 43_200)).json;
    expect(retentionOf(json)).toEqual({ 'billing-meter': 11 * 86_400, 'audit-writer': 7 * 86_400, 'risk-evaluator': 7 * 86_400 });
    const w = workers(json).find((x) => x.consumerId === 'billing-meter')!;
    expect(json.Resources[w.dlqId].Properties.MessageRetentionPeriod).toBe(14 * 86_400);
    expect(json.Resources[w.queueId].Properties.RedrivePolicy.maxReceiveCount).toBe(20);
  });

  it('refuses 1000 receives x a 12 h lease (500 days of retries against 13 days of retention), naming the consumer, the numbers and the fix', () => {
    expect(() => defineConfig(withRetries(1000, 43_200))).toThrow(
      'consumers[id=billing-meter].maxReceiveCount (value 1000): maxReceiveCount 1000 x visibilityTimeoutSeconds 43200 = 43200000 s of retries, ' +
        "plus a day's headroom, outlasts the longest queue retention (1123200 s, 13 days; its DLQ keeps 14): failing messages would expire " +
        'before reaching the DLQ. Lower maxReceiveCount to at most 24',
    );
    // 25 receives x 12 h is 12.5 days: with the day's headroom, past 13 days too.
    expect(() => defineConfig(withRetries(25, 43_200))).toThrow(
      /maxReceiveCount \(value 25\).*Lower maxReceiveCount to at most 24 or visibilityTimeoutSeconds to at most 41472$/s,
    );
    expect(defineConfig(withRetries(24, 43_200)).consumers[0]?.maxReceiveCount).toBe(24);
  });
});
