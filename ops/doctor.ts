/**
 * `hookledger doctor`: the preflight for a deployment, before or after `cdk deploy`. Each check
 * says what it found and, for a problem, the command that fixes it. Read-only: it never reads a
 * signing secret's value (a placeholder is recognised by its version history) and changes nothing.
 *
 *   bootstrap    the CDK bootstrap stack is present and at least the version this app's assets need
 *   concurrency  the account can reserve what the config reserves (intake's and the consumers') and keep
 *                100 unreserved; what the deployed stack's functions hold counts as given back
 *   stack        deployed and settled (the checks below need its outputs)
 *   secrets      every source's signing secret has been set (not the generated placeholder)
 *   alarms       the alarm topic has at least one confirmed subscription
 *   consumers    each consumer's SQS event source is enabled, or reported paused
 *   rate         with `--rate`: each AWS limit the steady rate meets, and the first a 50x burst meets
 *                (ops/capacity-check.ts; offline, from the bench's units and the published limits)
 *   remote       where the stack holds a source's provider API key (the gap check's): its endpoint at
 *                the provider against its URL and events (ops/connect/doctor-checks.ts); the key is read
 *                only to call the provider, never printed. The only value doctor reads.
 *
 * Before them, from the config alone: each source naming a preset has its attribution read in the
 * provider's sample event (ops/source-check.ts); a path the sample lacks is a warning, not a problem
 * (real deliveries may carry fields the sample leaves out).
 *
 * With `--rate` and no AWS to ask (no region, no credentials) the report is those offline rows and an
 * `aws` row saying the deployment's checks were skipped and why; without `--rate` that is an error.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CloudFormationClient, DescribeStackResourceCommand, DescribeStacksCommand, type Output } from '@aws-sdk/client-cloudformation';
import {
  type EventSourceMappingConfiguration,
  GetAccountSettingsCommand,
  GetFunctionConcurrencyCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
} from '@aws-sdk/client-lambda';
import { ListSecretVersionIdsCommand, SecretsManagerClient, type SecretVersionsListEntry } from '@aws-sdk/client-secrets-manager';
import { ListSubscriptionsByTopicCommand, SNSClient, type Subscription } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { HookledgerConfig } from '../core/config/schema';
import { OUTPUT, queueUrlOutput, secretArnOutput } from '../core/outputs';
import { declaredEventsChecks, providerDriftChecks } from './connect/doctor-checks';
import type { Check, CheckStatus } from './doctor-check';

export type { Check, CheckStatus };

import type { CostFiles } from './cost';
import { OperationFailedError } from './errors';
import { checkSource } from './source-check';

/** AWS refuses a reservation that leaves fewer than this many executions unreserved in the account. */
export const MIN_UNRESERVED_CONCURRENCY = 100;
/** Service Quotas code of "Lambda concurrent executions". */
export const LAMBDA_CONCURRENCY_QUOTA = 'L-B99A9384';
/**
 * CloudFormation logical id of the intake function: the CDK's id of Ingest/Handler/Function
 * (lib/hookledger-stack.ts, lib/constructs/ingest-api.ts, lib/constructs/hookledger-function.ts),
 * the same in every stack name. Doctor reads its reservation through DescribeStackResource;
 * test/ops/doctor-intake-concurrency.test.ts synthesizes the stack to hold it to that id.
 */
export const INTAKE_FUNCTION_LOGICAL_ID = 'IngestHandlerFunction55E23135';

export interface DoctorReport {
  readonly stack: string;
  /** Absent when none is set (`--rate` alone: the deployment's checks were skipped). */
  readonly region?: string;
  readonly deployed: boolean;
  readonly checks: readonly Check[];
  readonly problems: number;
  readonly warnings: number;
}

export interface DoctorClients {
  readonly cfn: CloudFormationClient;
  readonly ssm: SSMClient;
  readonly lambda: LambdaClient;
  readonly sqs: SQSClient;
  readonly secrets: SecretsManagerClient;
  readonly sns: SNSClient;
}

/** What the app's assets need from the bootstrap stack. */
export interface BootstrapRequirement {
  /** SSM parameter holding the bootstrap stack's version, e.g. `/cdk-bootstrap/hnb659fds/version`. */
  readonly parameter: string;
  readonly minVersion: number;
  /** Where the figures came from, for the message. */
  readonly from: string;
}

export interface DoctorOptions {
  readonly config: HookledgerConfig;
  readonly stackName: string;
  readonly bootstrap: BootstrapRequirement;
  /** `--rate`: warn about every AWS limit this steady rate (webhooks/s) meets; `files`: the bench's units and prices. */
  readonly capacity?: { readonly rate: number; readonly files: CostFiles };
}

export function doctorClients(region: string | undefined): DoctorClients & { destroy(): void } {
  const c = region ? { region } : {};
  const clients = {
    cfn: new CloudFormationClient(c),
    ssm: new SSMClient(c),
    lambda: new LambdaClient(c),
    sqs: new SQSClient(c),
    secrets: new SecretsManagerClient(c),
    sns: new SNSClient(c),
  };
  return {
    ...clients,
    destroy: () => {
      for (const client of Object.values(clients)) client.destroy();
    },
  };
}

// aws-cdk-lib's DefaultStackSynthesizer: file assets need bootstrap version 6 (8 only for lookups,
// which this app does not use); the default qualifier is hnb659fds.
const DEFAULT_QUALIFIER = 'hnb659fds';
const SYNTHESIZER_MIN_VERSION = 6;

/**
 * The bootstrap version this app needs: from the last `cdk synth`/`cdk deploy` (cdk.out/manifest.json,
 * the stack and its asset manifest), else what aws-cdk-lib's default synthesizer requires.
 */
export async function bootstrapRequirement(root: string, stackName: string): Promise<BootstrapRequirement> {
  const manifestPath = path.join(root, 'cdk.out', 'manifest.json');
  try {
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as {
      artifacts?: Record<string, { type?: string; properties?: Record<string, unknown>; dependencies?: string[] }>;
    };
    const artifacts = manifest.artifacts ?? {};
    const entry = Object.entries(artifacts).find(
      ([id, a]) => a.type === 'aws:cloudformation:stack' && ((a.properties?.stackName as string | undefined) ?? id) === stackName,
    );
    if (entry) {
      const related = [entry[1], ...(entry[1].dependencies ?? []).map((d) => artifacts[d]).filter((a) => a !== undefined)];
      const versions = related.map((a) => Number(a.properties?.requiresBootstrapStackVersion)).filter(Number.isFinite);
      const parameter = related.map((a) => a.properties?.bootstrapStackVersionSsmParameter).find((p) => typeof p === 'string');
      if (versions.length > 0 && typeof parameter === 'string') {
        return { parameter, minVersion: Math.max(...versions), from: path.relative(root, manifestPath) };
      }
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && !(error instanceof SyntaxError)) throw error;
  }
  let qualifier = DEFAULT_QUALIFIER;
  try {
    const cdkJson = JSON.parse(await readFile(path.join(root, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
    const fromContext = cdkJson.context?.['@aws-cdk/core:bootstrapQualifier'];
    if (typeof fromContext === 'string' && fromContext !== '') qualifier = fromContext;
  } catch {
    // No cdk.json: the default qualifier.
  }
  return {
    parameter: `/cdk-bootstrap/${qualifier}/version`,
    minVersion: SYNTHESIZER_MIN_VERSION,
    from: "aws-cdk-lib's default synthesizer (no cdk.out yet)",
  };
}

/** No AWS to ask: no region, or no credentials. Doctor stops with it, unless `--rate` gave it offline rows to report. */
export class NoAwsAccessError extends OperationFailedError {
  constructor(
    /** What is missing, e.g. `no AWS region is set (...)`. */
    readonly reason: string,
    /** What to set, e.g. `pass --region or set AWS_REGION`. */
    readonly advice: string,
    /** The region that was set, when it was the credentials that failed. */
    readonly region: string | undefined,
    options: ErrorOptions,
  ) {
    super(`${reason}; ${advice}`, options);
  }
}

/** The checks that ask AWS, as the row saying they were skipped names them. */
const DEPLOYMENT_CHECKS = 'bootstrap, concurrency, stack, secrets, alarms, consumers, remote';

export async function doctor(clients: DoctorClients, options: DoctorOptions): Promise<DoctorReport> {
  const { config, stackName } = options;
  const checks: Check[] = config.sources.flatMap(checkSample);
  checks.push(...declaredEventsChecks(config));
  if (options.capacity) checks.push(...(await rateCheckRows(config, options.capacity)));
  let region: string;
  let stack: Awaited<ReturnType<typeof describeStack>>;
  try {
    region = await regionOf(clients);
    stack = await describeStack(clients, stackName, region);
  } catch (error) {
    if (!(error instanceof NoAwsAccessError) || !options.capacity) throw error;
    return reportOf(stackName, error.region, false, [...checks, skippedRow(error)]);
  }
  checks.push(await checkBootstrap(clients, options.bootstrap, region));

  const outputs = new Map((stack.outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']));
  const mappings = new Map<string, EventSourceMappingConfiguration[] | Check>();
  if (stack.deployed) {
    for (const consumer of config.consumers) mappings.set(consumer.id, await consumerMappings(clients, outputs, consumer.id));
  }
  checks.push(await checkConcurrency(clients, config, mappings, stack.deployed ? stackName : undefined));
  checks.push(stack.check);
  if (stack.deployed) {
    for (const source of config.sources) checks.push(await checkSecret(clients, outputs, source.id, region));
    checks.push(...(await providerDriftChecks({ secrets: clients.secrets, outputs, config, stackName })));
    checks.push(await checkAlarmTopic(clients, outputs, config));
    for (const consumer of config.consumers) checks.push(checkEventSource(consumer.id, mappings.get(consumer.id)!));
  }
  return reportOf(stackName, region, stack.deployed, checks);
}

function reportOf(stack: string, region: string | undefined, deployed: boolean, checks: Check[]): DoctorReport {
  const count = (status: CheckStatus) => checks.filter((c) => c.status === status).length;
  return { stack, ...(region !== undefined ? { region } : {}), deployed, checks, problems: count('problem'), warnings: count('warning') };
}

async function regionOf(clients: DoctorClients): Promise<string> {
  try {
    return await clients.cfn.config.region();
  } catch (error) {
    throw new NoAwsAccessError(`no AWS region is set (${errorText(error)})`, 'pass --region or set AWS_REGION', undefined, {
      cause: error,
    });
  }
}

/** `--rate` without AWS: the offline rows stand, and this one says what was not checked and why. */
function skippedRow(error: NoAwsAccessError): Check {
  return {
    id: 'aws',
    status: 'info',
    message: `skipped the deployment's checks (${DEPLOYMENT_CHECKS}): ${error.reason}`,
    fix: error.advice,
  };
}

// --- checks ---------------------------------------------------------------------------------------

/** `--rate`: can the configuration carry it (ops/capacity-check.ts, offline: the bench's units and AWS's published limits). */
async function rateCheckRows(config: HookledgerConfig, capacity: NonNullable<DoctorOptions['capacity']>): Promise<Check[]> {
  const { rateChecks } = await import('./capacity-check');
  return rateChecks(config, capacity.rate, capacity.files);
}

/** A source naming a preset: its attribution read in the provider's sample, a row per finding (none: one ok row). */
function checkSample(source: HookledgerConfig['sources'][number]): Check[] {
  if (source.provider === undefined) return [];
  const id = `sample:${source.id}`;
  const findings = checkSource(source);
  if (findings.length === 0) {
    return [{ id, status: 'ok', message: `the attribution of ${source.id} resolves in the ${source.provider} sample event` }];
  }
  return findings.map((finding) =>
    finding.field === undefined
      ? { id, status: 'info', message: finding.message }
      : {
          id,
          status: 'warning',
          message: finding.message,
          fix: `read ${finding.field} from a field your ${finding.provider} deliveries carry; \`npx hookledger sources add --provider ${finding.provider}\` prints an entry whose paths resolve in the sample`,
        },
  );
}

async function describeStack(
  clients: DoctorClients,
  stackName: string,
  region: string,
): Promise<{ deployed: boolean; outputs?: Output[]; check: Check }> {
  const notDeployed = {
    deployed: false,
    check: {
      id: 'stack',
      status: 'info',
      message: `stack ${stackName} is not deployed in ${region}; the secret, alarm and consumer checks run once it is`,
    },
  } as const;
  try {
    const stack = (await clients.cfn.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
    if (!stack) return notDeployed;
    const status = stack.StackStatus ?? 'UNKNOWN';
    if (status === 'ROLLBACK_COMPLETE' || status.endsWith('_FAILED')) {
      return {
        deployed: false,
        check: {
          id: 'stack',
          status: 'problem',
          message: `stack ${stackName} is ${status}: its last deploy failed`,
          fix:
            status === 'ROLLBACK_COMPLETE'
              ? `read the first FAILED event (aws cloudformation describe-stack-events --stack-name ${stackName}), fix it, delete the stack (aws cloudformation delete-stack --stack-name ${stackName}; retained tables, queues and secrets stay) and deploy again`
              : `read the first FAILED event (aws cloudformation describe-stack-events --stack-name ${stackName}), fix it and run npx cdk deploy -c stackName=${stackName} again`,
        },
      };
    }
    if (status.endsWith('_IN_PROGRESS')) {
      return {
        deployed: false,
        check: { id: 'stack', status: 'info', message: `stack ${stackName} is ${status}: run doctor again when it settles` },
      };
    }
    return {
      deployed: true,
      outputs: stack.Outputs,
      check: { id: 'stack', status: 'ok', message: `stack ${stackName} is ${status} in ${region}` },
    };
  } catch (error) {
    if (isCredentialsError(error)) {
      throw new NoAwsAccessError(
        `no usable AWS credentials or region (${errorText(error)})`,
        'set AWS_PROFILE and AWS_REGION (or --region), then run doctor again',
        region,
        { cause: error },
      );
    }
    // CloudFormation answers a stack that does not exist with a ValidationError: the SDK has no class for it (its own waiters match the name).
    if ((error as Error).name === 'ValidationError' && /does not exist/.test((error as Error).message)) return notDeployed;
    return { deployed: false, check: deniedOrFailed('stack', 'cloudformation:DescribeStacks', error) };
  }
}

async function checkBootstrap(clients: DoctorClients, need: BootstrapRequirement, region: string): Promise<Check> {
  const bootstrapFix = `npx cdk bootstrap (once per account and region; upgrades the CDKToolkit stack in place)`;
  try {
    const value = (await clients.ssm.send(new GetParameterCommand({ Name: need.parameter }))).Parameter?.Value;
    const version = Number(value);
    if (!Number.isInteger(version)) {
      return {
        id: 'bootstrap',
        status: 'problem',
        message: `${need.parameter} holds ${JSON.stringify(value)}, not a bootstrap version`,
        fix: bootstrapFix,
      };
    }
    if (version < need.minVersion) {
      return {
        id: 'bootstrap',
        status: 'problem',
        message: `CDK bootstrap version ${version} in ${region} is older than ${need.minVersion}, which this app's assets need (${need.from})`,
        fix: bootstrapFix,
      };
    }
    return {
      id: 'bootstrap',
      status: 'ok',
      message: `CDK bootstrap version ${version} in ${region} (this app needs at least ${need.minVersion})`,
    };
  } catch (error) {
    if ((error as Error).name === 'ParameterNotFound') {
      return {
        id: 'bootstrap',
        status: 'problem',
        message: `${region} is not bootstrapped for the CDK (no SSM parameter ${need.parameter}); the template is too large to deploy inline and has file assets`,
        fix: bootstrapFix,
      };
    }
    return deniedOrFailed('bootstrap', 'ssm:GetParameter', error);
  }
}

/** What the config reserves, intake first, each under the name the concurrency row gives it. */
function configReservations(config: HookledgerConfig): { name: string; reserved: number }[] {
  const intake = config.intake.reservedConcurrency;
  return [
    ...(intake !== undefined ? [{ name: 'intake', reserved: intake }] : []),
    ...config.consumers.flatMap((c) => (c.reservedConcurrency !== undefined ? [{ name: c.id, reserved: c.reservedConcurrency }] : [])),
  ];
}

async function checkConcurrency(
  clients: DoctorClients,
  config: HookledgerConfig,
  mappings: ReadonlyMap<string, EventSourceMappingConfiguration[] | Check>,
  deployedStack: string | undefined,
): Promise<Check> {
  const reserving = configReservations(config);
  const reserved = reserving.reduce((sum, r) => sum + r.reserved, 0);
  const capped = config.consumers.reduce((sum, c) => sum + c.maxConcurrency, 0);
  let limit: number;
  let unreserved: number;
  try {
    const settings = await clients.lambda.send(new GetAccountSettingsCommand({}));
    limit = settings.AccountLimit?.ConcurrentExecutions ?? 0;
    unreserved = settings.AccountLimit?.UnreservedConcurrentExecutions ?? 0;
  } catch (error) {
    return deniedOrFailed('concurrency', 'lambda:GetAccountSettings', error);
  }
  const held = await heldByStack(clients, mappings, deployedStack);
  if (typeof held !== 'number') return held;
  const canReserve = Math.max(0, unreserved + held - MIN_UNRESERVED_CONCURRENCY);
  const account = `account limit ${limit}, unreserved ${unreserved}`;
  if (reserved > canReserve) {
    return {
      id: 'concurrency',
      status: 'problem',
      message: `the config reserves ${reserved} (${reserving.map((r) => `${r.name} ${r.reserved}`).join(', ')}) but the account can reserve only ${canReserve} while keeping ${MIN_UNRESERVED_CONCURRENCY} unreserved (${account}); the deploy would fail and roll back`,
      fix: `${lowerReservations(config)}, or ask for a higher "Concurrent executions" quota: aws service-quotas request-service-quota-increase --service-code lambda --quota-code ${LAMBDA_CONCURRENCY_QUOTA} --desired-value 1000`,
    };
  }
  if (reserved === 0 && limit < capped) {
    return {
      id: 'concurrency',
      status: 'info',
      message: `nothing reserved (${account}); the consumers' maxConcurrency add up to ${capped}, more than the account can run at once, so under load they share what there is`,
    };
  }
  return {
    id: 'concurrency',
    status: 'ok',
    message:
      reserved === 0
        ? `nothing reserved (${account}); each consumer is capped by its event source's maxConcurrency`
        : `reserves ${reserved} of ${canReserve} reservable (${account})`,
  };
}

/** The first half of the concurrency fix: the settings that reserve, intake's and the consumers'. */
function lowerReservations(config: HookledgerConfig): string {
  const intake = config.intake.reservedConcurrency !== undefined;
  const consumers = config.consumers.some((c) => c.reservedConcurrency !== undefined);
  if (!intake) return 'remove reservedConcurrency from those consumers in hookledger.config.ts (maxConcurrency still caps each)';
  if (!consumers) return "lower or remove intake.reservedConcurrency in hookledger.config.ts (without it intake shares the account's pool)";
  return 'lower or remove intake.reservedConcurrency and remove reservedConcurrency from those consumers in hookledger.config.ts (maxConcurrency still caps each consumer)';
}

/**
 * What the deployed stack's functions already reserve, given back when the deploy sets it again: the
 * workers behind the event source mappings found, and the intake function. Not deployed: nothing.
 */
async function heldByStack(
  clients: DoctorClients,
  mappings: ReadonlyMap<string, EventSourceMappingConfiguration[] | Check>,
  deployedStack: string | undefined,
): Promise<number | Check> {
  const functions = new Set<string>();
  for (const found of mappings.values()) {
    if (!Array.isArray(found)) continue;
    for (const m of found) if (m.FunctionArn !== undefined) functions.add(m.FunctionArn);
  }
  if (deployedStack !== undefined) {
    try {
      const intake = await intakeFunctionName(clients, deployedStack);
      if (intake !== undefined) functions.add(intake);
    } catch (error) {
      return deniedOrFailed('concurrency', 'cloudformation:DescribeStackResource', error);
    }
  }
  let held = 0;
  try {
    for (const fn of functions) {
      held += (await clients.lambda.send(new GetFunctionConcurrencyCommand({ FunctionName: fn }))).ReservedConcurrentExecutions ?? 0;
    }
  } catch (error) {
    return deniedOrFailed('concurrency', 'lambda:GetFunctionConcurrency', error);
  }
  return held;
}

/** The deployed intake function's name; undefined when the stack has no resource by its logical id. */
async function intakeFunctionName(clients: DoctorClients, stackName: string): Promise<string | undefined> {
  try {
    const found = await clients.cfn.send(
      new DescribeStackResourceCommand({ StackName: stackName, LogicalResourceId: INTAKE_FUNCTION_LOGICAL_ID }),
    );
    return found?.StackResourceDetail?.PhysicalResourceId || undefined;
  } catch (error) {
    // As with DescribeStacks, a missing resource is a ValidationError the SDK has no class for.
    if ((error as Error).name === 'ValidationError' && /does not exist/.test((error as Error).message)) return undefined;
    throw error;
  }
}

async function checkSecret(clients: DoctorClients, outputs: ReadonlyMap<string, string>, sourceId: string, region: string): Promise<Check> {
  const id = `secret:${sourceId}`;
  const key = secretArnOutput(sourceId);
  const arn = outputs.get(key);
  if (!arn)
    return {
      id,
      status: 'problem',
      message: `the stack has no output ${key}`,
      fix: "deploy this repository's stack (npx cdk deploy) so every configured source has its secret",
    };
  const put = `aws secretsmanager put-secret-value --region ${region} --secret-id ${arn} --secret-string '<the signing secret the provider issued>'`;
  try {
    const versions: SecretVersionsListEntry[] = [];
    let token: string | undefined;
    do {
      const page = await clients.secrets.send(
        new ListSecretVersionIdsCommand({ SecretId: arn, IncludeDeprecated: true, NextToken: token }),
      );
      versions.push(...(page.Versions ?? []));
      token = page.NextToken;
    } while (token);
    const current = versions.find((v) => v.VersionStages?.includes('AWSCURRENT'));
    if (!current) return { id, status: 'problem', message: `the signing secret of ${sourceId} has no AWSCURRENT value`, fix: put };
    // CloudFormation wrote the first version (a random placeholder); any value put since is newer.
    const first = versions.reduce((a, b) => ((a.CreatedDate?.getTime() ?? 0) <= (b.CreatedDate?.getTime() ?? 0) ? a : b));
    if (versions.length === 1 || current.VersionId === first.VersionId) {
      return {
        id,
        status: 'problem',
        message: `the signing secret of ${sourceId} is still the placeholder CloudFormation generated: every webhook from the provider will be refused (401)`,
        fix: put,
      };
    }
    return {
      id,
      status: 'ok',
      message: `the signing secret of ${sourceId} is set (current version created ${current.CreatedDate?.toISOString() ?? 'at an unknown time'})`,
    };
  } catch (error) {
    return deniedOrFailed(id, 'secretsmanager:ListSecretVersionIds', error);
  }
}

async function checkAlarmTopic(clients: DoctorClients, outputs: ReadonlyMap<string, string>, config: HookledgerConfig): Promise<Check> {
  const arn = outputs.get(OUTPUT.alarmTopicArn);
  if (!arn)
    return {
      id: 'alarms',
      status: 'problem',
      message: 'the stack has no output AlarmTopicArn',
      fix: "deploy this repository's stack (npx cdk deploy)",
    };
  const subscribe = config.alarms.email
    ? `confirm the subscription from the e-mail AWS Notifications sent to ${config.alarms.email}`
    : `set alarms.email in hookledger.config.ts and deploy, or subscribe directly: aws sns subscribe --topic-arn ${arn} --protocol email --notification-endpoint you@example.com`;
  try {
    const subscriptions: Subscription[] = [];
    let token: string | undefined;
    do {
      const page = await clients.sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: arn, NextToken: token }));
      subscriptions.push(...(page.Subscriptions ?? []));
      token = page.NextToken;
    } while (token);
    const confirmed = subscriptions.filter((s) => s.SubscriptionArn?.startsWith('arn:'));
    const pending = subscriptions.filter((s) => s.SubscriptionArn === 'PendingConfirmation');
    if (confirmed.length === 0) {
      return {
        id: 'alarms',
        status: 'problem',
        message:
          pending.length > 0
            ? `the alarm topic has ${pending.length} subscription(s) pending confirmation and none confirmed: alarms reach nobody yet`
            : 'the alarm topic has no subscription: alarms reach nobody',
        fix:
          pending.length > 0
            ? `confirm it from the e-mail AWS Notifications sent (${pending.map((s) => s.Endpoint).join(', ')})`
            : subscribe,
      };
    }
    return {
      id: 'alarms',
      status: 'ok',
      message: `the alarm topic has ${confirmed.length} confirmed subscription(s) (${confirmed.map((s) => `${s.Protocol} ${s.Endpoint}`).join(', ')})`,
    };
  } catch (error) {
    return deniedOrFailed('alarms', 'sns:ListSubscriptionsByTopic', error);
  }
}

async function consumerMappings(
  clients: DoctorClients,
  outputs: ReadonlyMap<string, string>,
  consumerId: string,
): Promise<EventSourceMappingConfiguration[] | Check> {
  const id = `consumer:${consumerId}`;
  const key = queueUrlOutput(consumerId);
  const url = outputs.get(key);
  if (!url) {
    return {
      id,
      status: 'problem',
      message: `the stack has no output ${key}: consumer ${consumerId} is configured but not deployed`,
      fix: 'npx cdk deploy',
    };
  }
  try {
    const arn = (await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes
      ?.QueueArn;
    const mappings: EventSourceMappingConfiguration[] = [];
    let marker: string | undefined;
    do {
      const page = await clients.lambda.send(new ListEventSourceMappingsCommand({ EventSourceArn: arn, Marker: marker }));
      mappings.push(...(page.EventSourceMappings ?? []));
      marker = page.NextMarker;
    } while (marker);
    return mappings;
  } catch (error) {
    return deniedOrFailed(id, 'sqs:GetQueueAttributes / lambda:ListEventSourceMappings', error);
  }
}

function checkEventSource(consumerId: string, found: EventSourceMappingConfiguration[] | Check): Check {
  if (!Array.isArray(found)) return found;
  const id = `consumer:${consumerId}`;
  if (found.length === 0) {
    return {
      id,
      status: 'problem',
      message: `no event source reads the queue of ${consumerId}: its messages wait and nothing delivers them`,
      fix: 'npx cdk deploy (the stack creates the mapping)',
    };
  }
  const states = found.map((m) => m.State ?? 'Unknown');
  if (states.every((s) => s === 'Enabled')) return { id, status: 'ok', message: `${consumerId}: event source enabled` };
  if (states.every((s) => s === 'Disabled' || s === 'Disabling')) {
    return {
      id,
      status: 'info',
      message: `${consumerId}: paused (event source ${states.join(', ')}); its deliveries wait in its queue. Resume with: npx hookledger resume ${consumerId}`,
    };
  }
  return { id, status: 'info', message: `${consumerId}: event source ${states.join(', ')}; run doctor again when it settles` };
}

// --- errors ---------------------------------------------------------------------------------------

function isCredentialsError(error: unknown): boolean {
  const name = (error as Error)?.name ?? '';
  const message = (error as Error)?.message ?? '';
  return (
    name === 'CredentialsProviderError' || /could not load credentials|credential/i.test(message) || /region is missing/i.test(message)
  );
}

function errorText(error: unknown): string {
  return `${(error as Error)?.name ?? 'Error'}: ${(error as Error)?.message ?? String(error)}`;
}

function deniedOrFailed(id: string, action: string, error: unknown): Check {
  const name = (error as Error)?.name ?? '';
  if (/AccessDenied|NotAuthorized|UnauthorizedOperation/i.test(name)) {
    return {
      id,
      status: 'problem',
      message: `not allowed to check (${action} was denied)`,
      fix: `run doctor with a role that may call ${action}`,
    };
  }
  return {
    id,
    status: 'problem',
    message: `could not check: ${action} failed (${errorText(error)})`,
    fix: 'check the region and the network, then run doctor again',
  };
}
