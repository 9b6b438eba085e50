/**
 * The CloudFormation outputs of a hookledger stack: written by lib/hookledger-stack.ts, read by the
 * CLI (`--stack`) and `hookledger doctor`. One list, so the two cannot drift.
 */
import { ConfigurationError } from './errors';

/** The stack name when `-c stackName=...` is not given. */
export const DEFAULT_STACK_NAME = 'Hookledger';

export const OUTPUT = {
  webhookUrl: 'WebhookUrl',
  eventStoreTable: 'EventStoreTableName',
  ledgerTable: 'LedgerTableName',
  fanoutFailureQueueUrl: 'FanoutFailureQueueUrl',
  payloadHashKeySecretArn: 'PayloadHashKeySecretArn',
  alarmTopicArn: 'AlarmTopicArn',
  payloadBucket: 'PayloadBucketName',
} as const;

/** Per-consumer and per-source outputs; the suffix is the pascal-cased id (see `outputSuffixes`). */
export const queueUrlOutput = (consumerId: string) => `QueueUrl${pascalCase(consumerId)}`;
export const dlqUrlOutput = (consumerId: string) => `DlqUrl${pascalCase(consumerId)}`;
export const secretArnOutput = (sourceId: string) => `SecretArn${pascalCase(sourceId)}`;
/** A source's provider API key for its gap check (`gapCheck`): created empty, set by the operator, retained. */
export const gapApiKeySecretArnOutput = (sourceId: string) => `GapApiKeySecretArn${pascalCase(sourceId)}`;
/** An HTTP consumer's signing secret (`hookledger secrets get <consumer>`). */
export const consumerSecretArnOutput = (consumerId: string) => `ConsumerSecretArn${pascalCase(consumerId)}`;

/** `billing-meter` -> `BillingMeter`: readable output ids derived from config ids. */
export function pascalCase(id: string): string {
  return id
    .split('-')
    .filter((part) => part.length > 0)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

export class OutputIdClashError extends ConfigurationError {
  override readonly name = 'OutputIdClashError';
}

/**
 * Refuses two ids that would become the same output suffix (`a-1` and `a1` both become `A1`),
 * because output ids must be unique and must not depend on list order.
 */
export function assertDistinctOutputSuffixes(ids: readonly string[], what: string): void {
  const seen = new Map<string, string>();
  for (const id of ids) {
    const suffix = pascalCase(id);
    const clash = seen.get(suffix);
    if (clash !== undefined && clash !== id) {
      throw new OutputIdClashError(`${what} ids "${clash}" and "${id}" both become the output suffix "${suffix}"; rename one of them`);
    }
    seen.set(suffix, id);
  }
}
