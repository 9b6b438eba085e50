/**
 * Shared test support: synthesize a HookledgerStack from any config (bundling skipped) and read the
 * template the way the assertions need it (references, IAM statements, pseudo-parameter ARNs).
 */
import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { HookledgerConfigInput } from '../../core/config/schema';
import defaultConfig from '../../hookledger.config';
import { HookledgerStack } from '../../lib/hookledger-stack';

export { defaultConfig };

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is untyped
export type Json = any;

/** The feature flags `cdk synth` uses, so tests exercise the same behaviour. */
const CDK_CONTEXT: Record<string, unknown> = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')).context;

/** Four consumers with deliberately different settings, two sources, an alarm e-mail. */
export const fourConsumerConfig: HookledgerConfigInput = {
  sources: [
    {
      id: 'platform',
      scheme: { type: 'standard-webhooks' },
      attribution: {
        eventId: { body: 'id' },
        eventType: { body: 'type' },
        tenantId: { body: 'tenant_id' },
        keyId: { body: 'key_id' },
      },
    },
    {
      id: 'stripe-live',
      scheme: { type: 'stripe' },
      attribution: {
        eventId: { body: 'id' },
        eventType: { body: 'type' },
        tenantId: { body: 'data.object.metadata.tenant' },
        keyId: { body: 'account' },
      },
    },
  ],
  consumers: [
    {
      id: 'billing-meter',
      subscribes: ['*'],
      fields: ['id', 'type'],
      entry: 'lambdas/consumers/billing-meter.ts',
      maxReceiveCount: 5,
      visibilityTimeoutSeconds: 60,
      timeoutSeconds: 10,
      alarmAgeSeconds: 900,
    },
    {
      id: 'audit-writer',
      subscribes: ['*'],
      fields: ['id'],
      entry: 'lambdas/consumers/audit-writer.ts',
      maxReceiveCount: 3,
      visibilityTimeoutSeconds: 120,
      timeoutSeconds: 20,
      alarmAgeSeconds: 300,
      batchSize: 5,
      maxConcurrency: 3,
    },
    {
      id: 'risk-evaluator',
      subscribes: ['payment.*'],
      fields: ['id', 'data'],
      entry: 'lambdas/consumers/risk-evaluator.ts',
      maxReceiveCount: 8,
      visibilityTimeoutSeconds: 90,
      timeoutSeconds: 15,
      alarmAgeSeconds: 600,
      maxConcurrency: 20,
    },
    {
      id: 'churn-model-v2',
      subscribes: ['subscription.*'],
      fields: ['id', 'tenant_id'],
      entry: 'lambdas/consumers/audit-writer.ts',
      maxReceiveCount: 10,
      visibilityTimeoutSeconds: 300,
      timeoutSeconds: 50,
      alarmAgeSeconds: 3600,
      batchSize: 1,
      maxConcurrency: 2,
      memoryMb: 1024,
    },
  ],
  alarms: { email: 'oncall@example.com' },
};

/** The default config plus two sources with a scheduled gap check (Stripe recovering, GitHub every 6 h). */
export const GAP_CHECK_CONFIG: HookledgerConfigInput = {
  ...defaultConfig,
  sources: [
    ...defaultConfig.sources,
    {
      id: 'stripe-live',
      provider: 'stripe',
      attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } },
      // Recovery records only the types the endpoint receives: declared by name.
      events: ['invoice.paid', 'invoice.payment_failed'],
      gapCheck: { api: 'stripe', recover: true },
    },
    {
      id: 'github-app',
      provider: 'github',
      attribution: { tenantId: { value: 'octo-org' }, keyId: { value: 'hook_12' } },
      gapCheck: { api: 'github', hook: 'orgs/octo-org/hooks/12', everyHours: 6 },
    },
  ],
};

export const CONFIGS = [
  { name: 'default config (hookledger.config.ts)', config: defaultConfig as HookledgerConfigInput },
  { name: '4-consumer config', config: fourConsumerConfig },
] as const;

export interface Synthesized {
  readonly app: App;
  readonly stack: HookledgerStack;
  readonly template: Template;
  readonly json: Json;
}

/** A fresh App with the cdk.json flags; bundling skipped so a synth takes milliseconds, not seconds. */
export function testApp(context: Record<string, unknown> = {}): App {
  return new App({ context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], ...context } });
}

export function synth(config: HookledgerConfigInput, stackName = 'Hookledger'): Synthesized {
  const app = testApp();
  const stack = new HookledgerStack(app, stackName, { config });
  const template = Template.fromStack(stack);
  return { app, stack, template, json: template.toJSON() };
}

export function resourcesOfType(json: Json, type: string): [string, Json][] {
  return Object.entries<Json>(json.Resources).filter(([, r]) => r.Type === type);
}

export function asArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** The logical id behind `{Ref: id}` or `{Fn::GetAtt: [id, attr]}`; undefined for anything else. */
export function refTarget(value: Json): string | undefined {
  if (value && typeof value === 'object') {
    if (typeof value.Ref === 'string') return value.Ref;
    if (Array.isArray(value['Fn::GetAtt'])) return value['Fn::GetAtt'][0];
  }
  return undefined;
}

export interface Statement {
  readonly Effect: 'Allow' | 'Deny';
  readonly Action: string | string[];
  readonly Resource: Json;
  readonly Condition?: Json;
  readonly Principal?: Json;
}

/** Every identity-policy statement attached to a role: its inline policies and AWS::IAM::Policy resources. */
export function statementsOfRole(json: Json, roleId: string): Statement[] {
  const role = json.Resources[roleId];
  const inline = asArray<Json>(role?.Properties?.Policies).flatMap((p) => asArray<Statement>(p.PolicyDocument.Statement));
  const attached = resourcesOfType(json, 'AWS::IAM::Policy')
    .filter(([, p]) => asArray<Json>(p.Properties.Roles).some((r) => refTarget(r) === roleId))
    .flatMap(([, p]) => asArray<Statement>(p.Properties.PolicyDocument.Statement));
  return [...inline, ...attached];
}

/** Every identity-policy statement in the template, with the roles it applies to. */
export function allIdentityStatements(json: Json): { roles: string[]; statement: Statement }[] {
  const out: { roles: string[]; statement: Statement }[] = [];
  for (const [id, role] of resourcesOfType(json, 'AWS::IAM::Role')) {
    for (const p of asArray<Json>(role.Properties.Policies)) {
      for (const statement of asArray<Statement>(p.PolicyDocument.Statement)) out.push({ roles: [id], statement });
    }
  }
  for (const [, policy] of resourcesOfType(json, 'AWS::IAM::Policy')) {
    const roles = asArray<Json>(policy.Properties.Roles).map((r) => refTarget(r) ?? JSON.stringify(r));
    for (const statement of asArray<Statement>(policy.Properties.PolicyDocument.Statement)) out.push({ roles, statement });
  }
  return out;
}

export function actionsOf(statement: Statement): string[] {
  return asArray(statement.Action);
}

/** Logical ids the statement's Resource points at (`Ref`/`GetAtt`), or the literal strings. */
export function resourceTargets(statement: Statement): string[] {
  return asArray<Json>(statement.Resource).map((r) => refTarget(r) ?? (typeof r === 'string' ? r : JSON.stringify(r)));
}

const PSEUDO: Record<string, string> = {
  'AWS::Partition': 'aws',
  'AWS::Region': 'eu-west-1',
  'AWS::AccountId': '123456789012',
  'AWS::URLSuffix': 'amazonaws.com',
};

/** Resolves literal strings, pseudo-parameter Refs and Fn::Join of those; throws on anything else. */
export function resolvePseudo(value: Json): string {
  if (typeof value === 'string') return value;
  if (value && typeof value.Ref === 'string' && value.Ref in PSEUDO) return PSEUDO[value.Ref]!;
  if (value && Array.isArray(value['Fn::Join'])) {
    const [sep, parts] = value['Fn::Join'] as [string, Json[]];
    return parts.map(resolvePseudo).join(sep);
  }
  throw new Error(`not resolvable from pseudo parameters alone: ${JSON.stringify(value)}`);
}

export const PSEUDO_ACCOUNT = PSEUDO['AWS::AccountId']!;
export const PSEUDO_REGION = PSEUDO['AWS::Region']!;

export interface WorkerView {
  readonly consumerId: string;
  readonly functionId: string;
  readonly fn: Json;
  readonly roleId: string;
  readonly queueId: string;
  readonly dlqId: string;
}

/** Consumer workers found from the template alone (functions carrying CONSUMER_ID), with their resources. */
export function workers(json: Json): WorkerView[] {
  return resourcesOfType(json, 'AWS::Lambda::Function')
    .filter(([, fn]) => fn.Properties.Environment?.Variables?.CONSUMER_ID !== undefined)
    .map(([functionId, fn]) => {
      const vars = fn.Properties.Environment.Variables;
      return {
        consumerId: vars.CONSUMER_ID,
        functionId,
        fn,
        roleId: refTarget(fn.Properties.Role)!,
        queueId: refTarget(vars.QUEUE_URL)!,
        dlqId: refTarget(vars.DLQ_URL)!,
      };
    });
}

/** Event source mappings keyed by the function they invoke. */
export function mappingsOf(json: Json, functionId: string): Json[] {
  return resourcesOfType(json, 'AWS::Lambda::EventSourceMapping')
    .filter(([, m]) => refTarget(m.Properties.FunctionName) === functionId)
    .map(([, m]) => m.Properties);
}

/** The function whose environment has `name`, e.g. SOURCE_SECRETS for ingest. */
export function functionWithEnv(json: Json, name: string): [string, Json] {
  const found = resourcesOfType(json, 'AWS::Lambda::Function').filter(
    ([, fn]) => fn.Properties.Environment?.Variables?.[name] !== undefined,
  );
  if (found.length !== 1) throw new Error(`expected exactly one function with env ${name}, found ${found.length}`);
  return found[0]!;
}
