/**
 * Which consumers are paused on AWS: `hookledger pause` disables the SQS event source mapping of the
 * consumer's worker, so a consumer is paused when every mapping reading its queue is disabled.
 */
import { type LambdaClient, ListEventSourceMappingsCommand } from '@aws-sdk/client-lambda';

export async function pausedConsumers(lambda: LambdaClient, queueArns: Readonly<Record<string, string>>): Promise<Set<string>> {
  const paused = new Set<string>();
  await Promise.all(
    Object.entries(queueArns).map(async ([consumer, arn]) => {
      const states: string[] = [];
      let marker: string | undefined;
      do {
        const page = await lambda.send(new ListEventSourceMappingsCommand({ EventSourceArn: arn, Marker: marker }));
        for (const m of page.EventSourceMappings ?? []) states.push(m.State ?? 'Unknown');
        marker = page.NextMarker;
      } while (marker);
      if (states.length > 0 && states.every((s) => s === 'Disabled' || s === 'Disabling')) paused.add(consumer);
    }),
  );
  return paused;
}
