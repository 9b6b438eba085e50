/**
 * Pauses a consumer from inside its own worker (an HTTP consumer's circuit breaker), the way
 * `hookledger pause` does on AWS: its SQS event source mapping, found by the queue's ARN, is
 * disabled. `hookledger resume` enables it again.
 */
import { type LambdaClient, ListEventSourceMappingsCommand, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';

export function eventSourcePause(deps: { readonly lambda: LambdaClient; readonly queueArn: string }): () => Promise<void> {
  return async () => {
    let marker: string | undefined;
    do {
      const page = await deps.lambda.send(new ListEventSourceMappingsCommand({ EventSourceArn: deps.queueArn, Marker: marker }));
      for (const mapping of page.EventSourceMappings ?? []) {
        if (mapping.UUID && mapping.State !== 'Disabled' && mapping.State !== 'Disabling') {
          await deps.lambda.send(new UpdateEventSourceMappingCommand({ UUID: mapping.UUID, Enabled: false }));
        }
      }
      marker = page.NextMarker;
    } while (marker);
  };
}
