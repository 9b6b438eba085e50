/** The stateful half: both tables keep their data through mistakes (PITR, retain, deletion protection). */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Synthesized, defaultConfig, synth } from './support';

describe('EventStore and Ledger tables', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synth(defaultConfig);
  });

  it('creates exactly two tables, both keyed by string pk, on demand, encrypted, with PITR', () => {
    s.template.resourceCountIs('AWS::DynamoDB::Table', 2);
    s.template.allResourcesProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      DeletionProtectionEnabled: true,
    });
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

  it('outputs both table names', () => {
    const tables = Object.keys(s.template.findResources('AWS::DynamoDB::Table'));
    const outputs = s.json.Outputs;
    expect([outputs.EventStoreTableName.Value.Ref, outputs.LedgerTableName.Value.Ref].sort()).toEqual(tables.sort());
    expect(outputs.EventStoreTableName.Value.Ref).not.toBe(outputs.LedgerTableName.Value.Ref);
  });
});
