/** Intake: route, payload format, throttling, one signing secret per source, and a role that cannot reach the Ledger. */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { pascalCase } from '../../core/outputs';
import {
  actionsOf,
  CONFIGS,
  functionWithEnv,
  refTarget,
  resourcesOfType,
  resourceTargets,
  type Synthesized,
  statementsOfRole,
  synth,
} from './support';

describe.each(CONFIGS)('intake with the $name', ({ config }) => {
  const sources = defineConfig(config).sources;
  let s: Synthesized;
  let ingestId: string;
  let ingestRoleId: string;
  let eventsTable: string;
  let ledgerTable: string;

  beforeAll(() => {
    s = synth(config);
    const [id, fn] = functionWithEnv(s.json, 'SOURCE_SECRETS');
    ingestId = id;
    ingestRoleId = refTarget(fn.Properties.Role)!;
    [eventsTable] = resourcesOfType(s.json, 'AWS::DynamoDB::Table').find(([, t]) => t.Properties.StreamSpecification)!;
    [ledgerTable] = resourcesOfType(s.json, 'AWS::DynamoDB::Table').find(([, t]) => !t.Properties.StreamSpecification)!;
  });

  it('routes POST and GET /hooks/{source} (the GET handshakes), and nothing else, to the ingest function with payload format 2.0', () => {
    s.template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
    const routes = resourcesOfType(s.json, 'AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties);
    expect(routes.map((r) => r.RouteKey).sort()).toEqual(['GET /hooks/{source}', 'POST /hooks/{source}']);
    // Both routes target the one integration, whose target is the ingest function.
    s.template.resourceCountIs('AWS::ApiGatewayV2::Integration', 1);
    const integrationId = resourcesOfType(s.json, 'AWS::ApiGatewayV2::Integration')[0]?.[0];
    for (const route of routes) expect(JSON.stringify(route.Target)).toContain(`"Ref":"${integrationId}"`);
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
      IntegrationUri: { 'Fn::GetAtt': [ingestId, 'Arn'] },
    });
  });

  it('throttles the auto-deployed default stage and writes access logs', () => {
    s.template.resourceCountIs('AWS::ApiGatewayV2::Stage', 1);
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 },
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
    });
  });

  it('outputs the webhook base URL ending in hooks/', () => {
    const parts: unknown[] = s.json.Outputs.WebhookUrl.Value['Fn::Join'][1];
    expect(parts[0]).toBe('https://');
    expect(parts.at(-1)).toBe('/hooks/');
  });

  it('creates a retained payload-hash key, named to the ingest function and in the stack outputs', () => {
    const keys = resourcesOfType(s.json, 'AWS::SecretsManager::Secret').filter(([, r]) =>
      /payload-hash key/.test(r.Properties.Description),
    );
    expect(keys).toHaveLength(1);
    const [keyId, key] = keys[0]!;
    expect(key.DeletionPolicy).toBe('Retain');
    expect(key.UpdateReplacePolicy).toBe('Retain');
    expect(key.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 64, ExcludePunctuation: true });
    expect(s.json.Resources[ingestId].Properties.Environment.Variables.PAYLOAD_HASH_KEY_SECRET).toEqual({ Ref: keyId });
    expect(s.json.Outputs.PayloadHashKeySecretArn.Value).toEqual({ Ref: keyId });
  });

  it('creates one generated signing secret per source and maps source id to secret ARN in SOURCE_SECRETS', () => {
    const secrets = resourcesOfType(s.json, 'AWS::SecretsManager::Secret').filter(([, r]) =>
      /webhook signing secret/.test(r.Properties.Description),
    );
    expect(secrets).toHaveLength(sources.length);
    for (const [, secret] of secrets) {
      expect(secret.Properties.Description).toMatch(/webhook signing secret/);
      expect(secret.Properties.GenerateSecretString).toBeDefined();
    }
    // Kept on delete and on replacement: a provider may still sign with it.
    for (const [id, secret] of secrets) {
      expect(secret.DeletionPolicy, id).toBe('Retain');
      expect(secret.UpdateReplacePolicy, id).toBe('Retain');
    }
    const env = s.json.Resources[ingestId].Properties.Environment.Variables;
    const text = env.SOURCE_SECRETS['Fn::Join'][1].map((p: unknown) => (typeof p === 'string' ? p : `ref:${refTarget(p)}`)).join('');
    const map = JSON.parse(text) as Record<string, string>;
    expect(Object.keys(map).sort()).toEqual(sources.map((src) => src.id).sort());
    for (const src of sources) {
      const output = s.json.Outputs[`SecretArn${pascalCase(src.id)}`];
      expect(output.Value).toEqual({ Ref: map[src.id]!.slice('ref:'.length) });
      expect(s.json.Resources[output.Value.Ref].Properties.Description).toContain(`"${src.id}"`);
    }
    expect(Object.keys(env).sort()).toEqual(
      [
        'EVENTS_TABLE',
        'PAYLOAD_BUCKET',
        'SOURCE_SECRETS',
        'PAYLOAD_HASH_KEY_SECRET',
        'STACK_NAME',
        'POWERTOOLS_SERVICE_NAME',
        'POWERTOOLS_METRICS_NAMESPACE',
      ].sort(),
    );
    expect(env.EVENTS_TABLE).toEqual({ Ref: eventsTable });
  });

  it('lets the ingest role write only receipts, payloads (and large ones to the bucket), body claims the conflict audit and the tenant-day registry, read the secrets, and nothing more', () => {
    const statements = statementsOfRole(s.json, ingestRoleId);
    const dynamo = statements.filter((st) => actionsOf(st).some((a) => a.startsWith('dynamodb:')));
    expect(dynamo.flatMap(actionsOf).sort()).toEqual([
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
    expect(dynamo.flatMap(resourceTargets)).toEqual([eventsTable, eventsTable, eventsTable, eventsTable]);
    const leadingKeys = (action: string) =>
      dynamo.find((st) => actionsOf(st).includes(action))?.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];
    expect(leadingKeys('dynamodb:PutItem')).toEqual(['evt#*', 'pay#*', 'bdy#*']);
    expect(leadingKeys('dynamodb:GetItem')).toEqual(['key#*', 'evt#*', 'bdy#*']);
    // The conflict audit, the window index's tenant-day registry, and the duplicate counts Activity reads.
    expect(leadingKeys('dynamodb:UpdateItem')).toEqual(['cfl#*', 'tday#*', 'dup#*']);
    expect(leadingKeys('dynamodb:DeleteItem')).toEqual(['pay#*']);
    const secretRead = statements.filter((st) => actionsOf(st).includes('secretsmanager:GetSecretValue'));
    expect(secretRead.flatMap(resourceTargets).sort()).toEqual(
      resourcesOfType(s.json, 'AWS::SecretsManager::Secret')
        .map(([id]) => id)
        .sort(),
    );
    // Large bodies: PutObject (and its retention tag) on the payload bucket's payloads/* only (test/cdk/payload-bucket.test.ts).
    expect(statements.filter((st) => actionsOf(st).some((a) => a.startsWith('s3:'))).flatMap(actionsOf)).toEqual([
      's3:PutObject',
      's3:PutObjectTagging',
    ]);
    const services = new Set(statements.flatMap(actionsOf).map((a) => a.split(':')[0]));
    expect([...services].sort()).toEqual(['dynamodb', 'logs', 's3', 'secretsmanager']);
  });

  it('has no statement naming the Ledger table', () => {
    const statements = statementsOfRole(s.json, ingestRoleId);
    expect(statements.length).toBeGreaterThan(0);
    expect(JSON.stringify(statements)).not.toContain(ledgerTable);
    expect(JSON.stringify(s.json.Resources[ingestId].Properties.Environment)).not.toContain(ledgerTable);
  });
});
