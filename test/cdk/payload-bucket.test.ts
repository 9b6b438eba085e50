/**
 * The payload bucket (lib/constructs/payload-bucket.ts): its properties, and who may do what under which
 * prefix. What an emulator cannot prove (fauxqs has no IAM): intake only writes payloads/*, the
 * fan-out reads payloads/* and writes views/*, and each consumer's role reads views/<its id>/* and
 * nothing else; no role may list the bucket or read another consumer's views.
 */

import { Stack } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { PayloadBucket } from '../../lib/constructs/payload-bucket';
import { actionsOf, allIdentityStatements, CONFIGS, type Json, refTarget, resourcesOfType, synth, testApp } from './support';

/** `<bucket>/payloads/*` for a Fn::Join of the bucket's Arn and a key pattern; the raw JSON otherwise. */
function objectPattern(resource: Json, bucketId: string): string {
  const join = resource?.['Fn::Join'];
  if (
    Array.isArray(join) &&
    join[0] === '' &&
    join[1].length === 2 &&
    refTarget(join[1][0]) === bucketId &&
    typeof join[1][1] === 'string'
  ) {
    return `<bucket>${join[1][1]}`;
  }
  return JSON.stringify(resource);
}

/** Lambda functions' roles by what the function is: `ingest`, `fanout`, a consumer id, or the service name. */
function rolesByFunction(json: Json): Map<string, string> {
  const out = new Map<string, string>();
  for (const [, fn] of resourcesOfType(json, 'AWS::Lambda::Function')) {
    const env = fn.Properties.Environment?.Variables ?? {};
    const name =
      typeof env.CONSUMER_ID === 'string' ? env.CONSUMER_ID : String(env.POWERTOOLS_SERVICE_NAME ?? '?').replace(/^hookledger-/, '');
    out.set(refTarget(fn.Properties.Role)!, name);
  }
  return out;
}

/** Every S3 permission in the template as `<who>: <action> <resource>`. */
function s3Grants(json: Json, bucketId: string): string[] {
  const names = rolesByFunction(json);
  const out: string[] = [];
  for (const { roles, statement } of allIdentityStatements(json)) {
    const actions = actionsOf(statement).filter((a) => a.startsWith('s3:'));
    if (actions.length === 0 || statement.Effect !== 'Allow') continue;
    const resources = (Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]).map((r: Json) =>
      objectPattern(r, bucketId),
    );
    for (const role of roles) for (const a of actions) for (const r of resources) out.push(`${names.get(role) ?? role}: ${a} ${r}`);
  }
  return out.sort();
}

/** Whether an IAM resource pattern (`*` = any characters) covers the key. */
const covers = (pattern: string, key: string) =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  ).test(key);

describe.each(CONFIGS)('payload bucket with the $name', ({ config }) => {
  let json: Json;
  let bucketId: string;
  const consumers = defineConfig(config).consumers.map((c) => c.id);
  const retentionDays = defineConfig(config).retention.payloadDays;
  beforeAll(() => {
    json = synth(config).json;
    const buckets = resourcesOfType(json, 'AWS::S3::Bucket');
    expect(buckets).toHaveLength(1);
    bucketId = buckets[0]![0];
  });

  it('is encrypted, private, retained, and expires objects after the payload retention', () => {
    const bucket = json.Resources[bucketId];
    expect(bucket.Properties.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.Properties.LifecycleConfiguration.Rules).toEqual([
      {
        Id: 'payload-retention',
        Status: 'Enabled',
        ExpirationInDays: retentionDays,
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
      },
    ]);
    expect(bucket.DeletionPolicy).toBe('Retain');
    expect(bucket.UpdateReplacePolicy).toBe('Retain');
  });

  it('names itself in the PayloadBucketName output', () => {
    expect(json.Outputs.PayloadBucketName.Value).toEqual({ Ref: bucketId });
  });

  it('refuses every request not made over TLS', () => {
    const [[, policy]] = resourcesOfType(json, 'AWS::S3::BucketPolicy') as [[string, Json]];
    expect(refTarget(policy.Properties.Bucket)).toBe(bucketId);
    const deny = policy.Properties.PolicyDocument.Statement.find((s: Json) => s.Effect === 'Deny');
    expect(deny).toMatchObject({ Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } }, Principal: { AWS: '*' } });
  });

  it('grants intake PutObject (+ its retention tag) on payloads/*, the fan-out GetObject on payloads/* and PutObject (+ tag) on views/*, each consumer GetObject on its own views, and nothing else', () => {
    expect(s3Grants(json, bucketId)).toEqual(
      [
        'ingest: s3:PutObject <bucket>/payloads/*',
        'ingest: s3:PutObjectTagging <bucket>/payloads/*',
        'fanout: s3:GetObject <bucket>/payloads/*',
        'fanout: s3:PutObject <bucket>/views/*',
        'fanout: s3:PutObjectTagging <bucket>/views/*',
        ...consumers.map((c) => `${c}: s3:GetObject <bucket>/views/${c}/*`),
      ].sort(),
    );
    // Each function knows the bucket by name.
    for (const [, fn] of resourcesOfType(json, 'AWS::Lambda::Function')) {
      const env = fn.Properties.Environment?.Variables ?? {};
      const needs = env.CONSUMER_ID !== undefined || ['hookledger-ingest', 'hookledger-fanout'].includes(env.POWERTOOLS_SERVICE_NAME);
      if (needs) expect(env.PAYLOAD_BUCKET).toEqual({ Ref: bucketId });
    }
  });

  it("lets no role but a consumer's own read its claim-checked views", () => {
    const names = rolesByFunction(json);
    for (const consumer of consumers) {
      const key = `<bucket>/views/${consumer}/evt_01J8K7M2Q4/${'a'.repeat(64)}`;
      const readers = allIdentityStatements(json)
        .filter(
          ({ statement }) =>
            statement.Effect === 'Allow' &&
            actionsOf(statement).some((a) => ['s3:GetObject', 's3:*', '*'].includes(a) || a.startsWith('s3:GetObject')),
        )
        .filter(({ statement }) =>
          (Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]).some(
            (r: Json) => r === '*' || covers(objectPattern(r, bucketId), key),
          ),
        )
        .flatMap(({ roles }) => roles.map((r) => names.get(r) ?? r));
      expect(readers, consumer).toEqual([consumer]);
    }
  });
});

describe('per-source retention in the payload bucket', () => {
  it('expires objects tagged 7 and 90 days by their own rules, untagged ones at the longest (S3 honours the shorter overlap)', () => {
    const config = {
      ...CONFIGS[0].config,
      sources: CONFIGS[0].config.sources.map((s, i) => ({ ...s, ...(i === 0 ? { retentionDays: 7 } : {}) })),
      retention: { payloadDays: 90 },
    };
    const json = synth(config).json;
    const [[, bucket]] = resourcesOfType(json, 'AWS::S3::Bucket') as [[string, Json]];
    expect(bucket.Properties.LifecycleConfiguration.Rules).toEqual([
      { Id: 'payload-retention', Status: 'Enabled', ExpirationInDays: 90, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } },
      {
        Id: 'payload-retention-7d',
        Status: 'Enabled',
        ExpirationInDays: 7,
        TagFilters: [{ Key: 'hookledger-retention-days', Value: '7' }],
      },
      {
        Id: 'payload-retention-90d',
        Status: 'Enabled',
        ExpirationInDays: 90,
        TagFilters: [{ Key: 'hookledger-retention-days', Value: '90' }],
      },
    ]);
  });
});

describe('PayloadBucket props', () => {
  it('refuses a retention that is not a whole number of days, quoting it', () => {
    const stack = new Stack(testApp(), 'Props');
    expect(() => new PayloadBucket(stack, 'B', { retentionDays: 0.5 })).toThrow(
      'retentionDays must be a whole number of days >= 1, got 0.5',
    );
  });
});
