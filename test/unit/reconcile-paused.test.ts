/** Which consumers the scheduled reconciler treats as paused (AWS-only API: aws-sdk-client-mock). */
import { LambdaClient, ListEventSourceMappingsCommand } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { pausedConsumers } from '../../lambdas/reconcile/paused';

const lambda = mockClient(LambdaClient);
afterEach(() => lambda.reset());

const ARNS = {
  'billing-meter': 'arn:aws:sqs:us-east-1:111122223333:Hookledger-billing-meter',
  'audit-writer': 'arn:aws:sqs:us-east-1:111122223333:Hookledger-audit-writer',
  'risk-evaluator': 'arn:aws:sqs:us-east-1:111122223333:Hookledger-risk-evaluator',
};

describe('pausedConsumers', () => {
  it('names a consumer paused only when every mapping on its queue is disabled, following pages', async () => {
    lambda
      .on(ListEventSourceMappingsCommand, { EventSourceArn: ARNS['billing-meter'] })
      .resolves({ EventSourceMappings: [{ UUID: 'm-1', State: 'Enabled' }] })
      .on(ListEventSourceMappingsCommand, { EventSourceArn: ARNS['audit-writer'], Marker: undefined })
      .resolves({ EventSourceMappings: [{ UUID: 'm-2', State: 'Disabled' }], NextMarker: 'page-2' })
      .on(ListEventSourceMappingsCommand, { EventSourceArn: ARNS['audit-writer'], Marker: 'page-2' })
      .resolves({ EventSourceMappings: [{ UUID: 'm-3', State: 'Disabling' }] })
      .on(ListEventSourceMappingsCommand, { EventSourceArn: ARNS['risk-evaluator'] })
      .resolves({ EventSourceMappings: [] });
    expect([...(await pausedConsumers(new LambdaClient({}), ARNS))]).toEqual(['audit-writer']);
    expect(lambda.commandCalls(ListEventSourceMappingsCommand)).toHaveLength(4);
  });

  it('fails the run when the mappings cannot be read (an unknown pause state is not guessed)', async () => {
    lambda
      .on(ListEventSourceMappingsCommand)
      .rejects(Object.assign(new Error('User is not authorized'), { name: 'AccessDeniedException' }));
    await expect(pausedConsumers(new LambdaClient({ region: 'us-east-1' }), ARNS)).rejects.toThrow('User is not authorized');
  });
});
