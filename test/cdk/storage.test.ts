/** The stateful half: both tables keep their data through mistakes (PITR, retain, deletion protection). */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig, type Synthesized, synth } from './support';

describe('EventStore and Ledger tables', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synth(defaultConfig);
  });

  it('creates exactly two tables, both keyed by string pk, on demand, encrypted, with PITR', () => {
    s.template.resourceCountIs('AWS::DynamoDB::Table', 2);
    s.template.allResourcesProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: Match.arrayWith([{ AttributeName: 'pk', AttributeType: 'S' }]),
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      DeletionProtectionEnabled: true,
    });
    // On demand by default (config `capacity`): nothing to scale (test/cdk/capacity.test.ts for provisioned).
    s.template.resourceCountIs('AWS::ApplicationAutoScaling::ScalableTarget', 0);
  });

  it('retains both tables when they leave the stack or are replaced', () => {
    const tables = s.template.findResources('AWS::DynamoDB::Table');
    for (const table of Object.values(tables)) {
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.UpdateReplacePolicy).toBe('Retain');
    }
  });

  it('gives the EventStore a NEW_IMAGE stream and the expiresAt TTL, and the Ledger neither', () => {
    s.template.hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
    s.template.hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: Match.absent(),
      TimeToLiveSpecification: Match.absent(),
    });
  });

  it('gives the EventStore the sparse window index (tenant-day partition, receivedAt sort, INCLUDE projection) and the Ledger none', () => {
    s.template.hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'wpk', AttributeType: 'S' },
        { AttributeName: 'wsk', AttributeType: 'N' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'byTenantDay',
          KeySchema: [
            { AttributeName: 'wpk', KeyType: 'HASH' },
            { AttributeName: 'wsk', KeyType: 'RANGE' },
          ],
          Projection: {
            ProjectionType: 'INCLUDE',
            NonKeyAttributes: [
              'kind',
              'source',
              'eventId',
              'eventType',
              'tenantId',
              'keyId',
              'consumers',
              'receivedAt',
              'secretVersion',
              'shards',
            ],
          },
        },
      ],
    });
    s.template.hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: Match.absent(),
      GlobalSecondaryIndexes: Match.absent(),
    });
  });

  it('outputs both table names', () => {
    const tables = Object.keys(s.template.findResources('AWS::DynamoDB::Table'));
    const outputs = s.json.Outputs;
    expect([outputs.EventStoreTableName.Value.Ref, outputs.LedgerTableName.Value.Ref].sort()).toEqual(tables.sort());
    expect(outputs.EventStoreTableName.Value.Ref).not.toBe(outputs.LedgerTableName.Value.Ref);
  });
});
