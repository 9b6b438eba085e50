/**
 * Pausing a consumer stops its worker from taking messages; they wait in its queue (up to the
 * queue's retention) and nothing reaches its DLQ meanwhile. Intake and the other consumers go on.
 *
 *   AWS    the SQS event source mapping of the consumer's function, Enabled false/true. The mapping
 *          is found by listing mappings for the queue's ARN (its id is not a stack output).
 *   local  the running local stack's admin endpoint (`adminUrl` in .hookledger/state.json).
 */
import type { LambdaClient } from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { QueuePair } from './deps';
import { OperationFailedError, UsageError } from './errors';

export interface PauseControl {
  pause(consumer: string): Promise<void>;
  resume(consumer: string): Promise<void>;
  /** The consumers paused now. */
  paused(): Promise<Set<string>>;
}

export interface PauseResult {
  readonly consumer: string;
  readonly paused: boolean;
}

export async function setPaused(
  control: PauseControl,
  consumers: readonly string[],
  consumer: string,
  paused: boolean,
): Promise<PauseResult> {
  if (!consumers.includes(consumer)) {
    throw new UsageError(`unknown consumer "${consumer}"; configured: ${consumers.join(', ')}`);
  }
  await (paused ? control.pause(consumer) : control.resume(consumer));
  return { consumer, paused };
}

/** The local stack's admin endpoint: POST /consumers/<id>/pause|resume, GET /consumers. */
export function adminPauseControl(adminUrl: string, fetchImpl: typeof fetch = fetch): PauseControl {
  const base = adminUrl.replace(/\/+$/, '');
  const call = async (method: 'GET' | 'POST', path: string): Promise<unknown> => {
    let response: Response;
    try {
      response = await fetchImpl(`${base}${path}`, { method });
    } catch (error) {
      throw new OperationFailedError(
        `the local stack's admin endpoint ${base} did not answer (${(error as Error).message}); is \`npm start\` still running?`,
        { cause: error },
      );
    }
    const text = await response.text();
    if (!response.ok) throw new OperationFailedError(`${method} ${base}${path} answered ${response.status}: ${text.slice(0, 200)}`);
    return text ? (JSON.parse(text) as unknown) : undefined;
  };
  return {
    pause: async (consumer) => void (await call('POST', `/consumers/${encodeURIComponent(consumer)}/pause`)),
    resume: async (consumer) => void (await call('POST', `/consumers/${encodeURIComponent(consumer)}/resume`)),
    paused: async () => {
      const body = (await call('GET', '/consumers')) as { paused?: unknown } | undefined;
      if (!body || !Array.isArray(body.paused)) throw new OperationFailedError(`GET ${base}/consumers did not answer {"paused":[...]}`);
      return new Set(body.paused.map(String));
    },
  };
}

/**
 * The Lambda client's commands, imported by the deployed stack's first pause call: the local stack's
 * commands (`status` shows the paused consumers) import this module, never the Lambda client.
 */
const lambdaCommands = () => import('@aws-sdk/client-lambda');

/** Deployed stack: the consumer's event source mapping. */
export function lambdaPauseControl(deps: {
  readonly lambda: LambdaClient;
  readonly sqs: SQSClient;
  readonly queues: Readonly<Record<string, QueuePair>>;
}): PauseControl {
  const mappingsOf = async (consumer: string) => {
    const { ListEventSourceMappingsCommand } = await lambdaCommands();
    const pair = deps.queues[consumer];
    if (!pair) throw new UsageError(`the stack has no queue output for consumer "${consumer}" (QueueUrl<Consumer>)`);
    const arn = (await deps.sqs.send(new GetQueueAttributesCommand({ QueueUrl: pair.url, AttributeNames: ['QueueArn'] }))).Attributes
      ?.QueueArn;
    const mappings = [];
    let marker: string | undefined;
    do {
      const page = await deps.lambda.send(new ListEventSourceMappingsCommand({ EventSourceArn: arn, Marker: marker }));
      mappings.push(...(page.EventSourceMappings ?? []));
      marker = page.NextMarker;
    } while (marker);
    if (mappings.length === 0) throw new OperationFailedError(`no event source mapping reads ${arn}; is the stack deployed completely?`);
    return mappings;
  };
  const set = async (consumer: string, enabled: boolean) => {
    const { UpdateEventSourceMappingCommand } = await lambdaCommands();
    for (const mapping of await mappingsOf(consumer)) {
      await deps.lambda.send(new UpdateEventSourceMappingCommand({ UUID: mapping.UUID, Enabled: enabled }));
    }
  };
  return {
    pause: (consumer) => set(consumer, false),
    resume: (consumer) => set(consumer, true),
    paused: async () => {
      const paused = new Set<string>();
      await Promise.all(
        Object.keys(deps.queues).map(async (consumer) => {
          const mappings = await mappingsOf(consumer);
          if (mappings.every((m) => m.State === 'Disabled' || m.State === 'Disabling')) paused.add(consumer);
        }),
      );
      return paused;
    },
  };
}
