/**
 * Rules that hold for every resource of a kind, whatever the config: no wildcard actions, partial
 * batch responses on every event source, encrypted SSL-only queues, one function baseline.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  actionsOf,
  allIdentityStatements,
  asArray,
  CONFIGS,
  type Json,
  refTarget,
  resourcesOfType,
  statementsOfRole,
  synth,
} from './support';

describe.each(CONFIGS)('stack-wide rules with the $name', ({ config }) => {
  let json: Json;
  beforeAll(() => {
    json = synth(config).json;
  });

  it('has no IAM statement allowing "*", a service wildcard like dynamodb:* or sqs:*, or NotAction', () => {
    const statements = allIdentityStatements(json);
    expect(statements.length).toBeGreaterThan(0);
    for (const { roles, statement } of statements) {
      expect(statement, `NotAction on ${roles}`).not.toHaveProperty('NotAction');
      for (const action of actionsOf(statement)) {
        expect(action, `on ${roles}`).not.toBe('*');
        expect(action, `on ${roles}`).not.toMatch(/:\*$/);
      }
    }
  });

  it('lets no role Scan a table or read a stored payload by key but the fan-out: every EventStore item read names its key prefixes', () => {
    const eventStoreId = refTarget(json.Outputs.EventStoreTableName.Value);
    const fanOutRole = refTarget(
      resourcesOfType(json, 'AWS::Lambda::Function').find(
        ([, fn]) => fn.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME === 'hookledger-fanout',
      )![1].Properties.Role,
    );
    const reads = allIdentityStatements(json).filter(({ statement }) =>
      actionsOf(statement).some((a) => /^dynamodb:(Scan|Query|GetItem|BatchGetItem|PartiQLSelect|ExportTableToPointInTime)$/.test(a)),
    );
    expect(reads.length).toBeGreaterThan(0);
    for (const { roles, statement } of reads) {
      expect(actionsOf(statement), `on ${roles}`).not.toContain('dynamodb:Scan');
      expect(
        actionsOf(statement).filter((a) => a.startsWith('dynamodb:PartiQL') || a.startsWith('dynamodb:Export')),
        `on ${roles}`,
      ).toEqual([]);
      for (const resource of asArray<Json>(statement.Resource)) {
        // The EventStore table itself (its indexes are `<arn>/index/<name>`, a Fn::Join).
        if (refTarget(resource) !== eventStoreId) continue;
        const leading: string[] = statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] ?? [];
        expect(leading, `${actionsOf(statement)} on the EventStore by ${roles}`).not.toEqual([]);
        expect(leading, `on ${roles}`).not.toContain('*');
        if (!roles.includes(fanOutRole!)) expect(leading, `payload reads by ${roles}`).not.toContain('pay#*');
      }
    }
  });

  it('attaches no managed policies (every permission is granted by intent)', () => {
    for (const [id, role] of resourcesOfType(json, 'AWS::IAM::Role')) {
      expect(role.Properties.ManagedPolicyArns, id).toBeUndefined();
    }
  });

  it('reports batch item failures on every event source mapping', () => {
    const mappings = resourcesOfType(json, 'AWS::Lambda::EventSourceMapping');
    expect(mappings.length).toBeGreaterThan(1);
    for (const [id, m] of mappings) expect(m.Properties.FunctionResponseTypes, id).toEqual(['ReportBatchItemFailures']);
  });

  it('encrypts every queue and gives each an SSL-only policy', () => {
    const policies = resourcesOfType(json, 'AWS::SQS::QueuePolicy');
    for (const [id, queue] of resourcesOfType(json, 'AWS::SQS::Queue')) {
      expect(queue.Properties.SqsManagedSseEnabled ?? queue.Properties.KmsMasterKeyId, id).toBeTruthy();
      const own = policies.filter(([, p]) => asArray<Json>(p.Properties.Queues).some((q) => refTarget(q) === id));
      expect(own, id).toHaveLength(1);
      const statements = asArray<Json>(own[0]![1].Properties.PolicyDocument.Statement);
      expect(statements, id).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Action: 'sqs:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
    }
  });

  it('runs every function on nodejs22.x or newer, arm64, handler index.handler, with POWERTOOLS_SERVICE_NAME', () => {
    const functions = resourcesOfType(json, 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThanOrEqual(6);
    for (const [id, fn] of functions) {
      const p = fn.Properties;
      const major = Number(/^nodejs(\d+)\.x$/.exec(p.Runtime)?.[1]);
      expect(major, `${id} runtime ${p.Runtime}`).toBeGreaterThanOrEqual(22);
      expect(p.Architectures, id).toEqual(['arm64']);
      expect(p.Handler, id).toBe('index.handler');
      expect(p.Environment.Variables.POWERTOOLS_SERVICE_NAME, id).toEqual(expect.any(String));
      expect(p.Timeout, id).toBeGreaterThan(0);
    }
  });

  it('gives every function its own log group with a retention, and its role write access to that group only', () => {
    for (const [id, fn] of resourcesOfType(json, 'AWS::Lambda::Function')) {
      const logGroupId = refTarget(fn.Properties.LoggingConfig?.LogGroup)!;
      expect(json.Resources[logGroupId]?.Type, id).toBe('AWS::Logs::LogGroup');
      expect(json.Resources[logGroupId].Properties.RetentionInDays, id).toBeGreaterThan(0);
      const logs = statementsOfRole(json, refTarget(fn.Properties.Role)!).filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
      expect(
        logs.map((s) => s.Resource),
        id,
      ).toEqual([{ 'Fn::GetAtt': [logGroupId, 'Arn'] }]);
    }
  });
});
