/**
 * Environment contract between the CDK stack (which sets these) and the Lambda entry points (which
 * read them once, at cold start). A missing variable is a deployment bug: fail loudly.
 */
import { ConfigurationError } from './errors';
export const ENV = {
  eventsTable: 'EVENTS_TABLE',
  ledgerTable: 'LEDGER_TABLE',
  /** JSON object: source id -> Secrets Manager secret id (ARN or name). Ingest only. */
  sourceSecrets: 'SOURCE_SECRETS',
  /** Secrets Manager secret id of the deployment's payload-hash key. Ingest, and gap checks that recover. */
  payloadHashKeySecret: 'PAYLOAD_HASH_KEY_SECRET',
  /** JSON object: consumer id -> SQS queue URL. Fan-out only. */
  queueUrls: 'QUEUE_URLS',
  /** The payload bucket: large bodies (ingest writes, fan-out reads) and claim-checked views (fan-out writes, each worker reads its own). */
  payloadBucket: 'PAYLOAD_BUCKET',
  consumerId: 'CONSUMER_ID',
  queueUrl: 'QUEUE_URL',
  dlqUrl: 'DLQ_URL',
  /** HTTP consumers: Secrets Manager secret id of the consumer's signing secret. */
  consumerSecret: 'CONSUMER_SECRET',
  /** HTTP consumers: the ARN of the consumer's queue (its circuit breaker finds its event source mapping by it). */
  queueArn: 'QUEUE_ARN',
  /** The consumer's own principal (its IAM role ARN), recorded on every read and acknowledgement. */
  principal: 'PRINCIPAL',
  /** The CloudFormation stack name: the `Stack` dimension of the intake and reconcile metrics. */
  stackName: 'STACK_NAME',
  /** Re-queues per reconcile run; absent when the reconciler only checks. Reconciler only. */
  repairMaxPerRun: 'REPAIR_MAX_PER_RUN',
  /** JSON object: consumer id -> SQS queue ARN (to see which consumers are paused). Reconciler only. */
  queueArns: 'QUEUE_ARNS',
  /** The source a scheduled gap check reads (`gapCheck`). Gap check only. */
  gapSource: 'GAP_SOURCE',
  /** Secrets Manager secret id of that source's provider API key. Gap check only. */
  gapApiKeySecret: 'GAP_API_KEY_SECRET',
  /** The source's webhook URL, as its provider should call it. Drift check only. */
  driftWebhookUrl: 'DRIFT_WEBHOOK_URL',
  /** The fan-out's on-failure queue URL. Reconciler only. */
  fanoutFailureQueueUrl: 'FANOUT_FAILURE_QUEUE_URL',
} as const;

/** The identifier esbuild replaces with the validated configuration's JSON (lambdas/shared/bundled-config.ts). */
export const BUNDLED_CONFIG_DEFINE = '__HOOKLEDGER_CONFIG__';

export class MissingEnvError extends ConfigurationError {
  override readonly name = 'MissingEnvError';
}

export function requireEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new MissingEnvError(`environment variable ${name} is not set; it is set by the hookledger CDK stack`);
  }
  return value;
}

export function requireJsonEnv<T extends Record<string, string>>(name: string, env: NodeJS.ProcessEnv = process.env): T {
  const raw = requireEnv(name, env);
  // The message names what the value is, never the value: it may be anything pasted into the variable.
  const refused = `environment variable ${name} must be a JSON object of strings; it is set by the hookledger CDK stack`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (cause) {
    throw new MissingEnvError(`${refused} (it is not JSON)`, { cause });
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const kind = Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : `a ${typeof parsed}`;
    throw new MissingEnvError(`${refused} (it is ${kind})`);
  }
  return parsed as T;
}
