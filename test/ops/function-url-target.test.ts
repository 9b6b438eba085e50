/**
 * `--stack` on a stack deployed with `intake.endpoint: 'function-url'`: its WebhookUrl output is the
 * function URL followed by `hooks/` (lib/constructs/ingest-api.ts), and the CLI's webhook URL for a
 * source is that plus the source id, the same lookup as for the HTTP API's stage URL.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveTarget } from '../../ops/target';
import { config } from './support';

const cfn = mockClient(CloudFormationClient);
afterEach(() => cfn.reset());

describe('--stack target of a function-URL deployment', () => {
  it('gives <functionUrl>hooks/<source> as the webhook URL of source platform', async () => {
    const outputs = {
      WebhookUrl: 'https://abcdefghij0123456789klmnopqrstuv.lambda-url.eu-west-1.on.aws/hooks/',
      EventStoreTableName: 'Hookledger-EventStoreEvents-1',
      LedgerTableName: 'Hookledger-EventStoreLedger-1',
    };
    cfn.on(DescribeStacksCommand, { StackName: 'HookledgerLowCost' }).resolves({
      Stacks: [
        {
          StackName: 'HookledgerLowCost',
          StackStatus: 'CREATE_COMPLETE',
          CreationTime: new Date(),
          Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
        },
      ],
    });
    const target = await resolveTarget({ config, root: '/nowhere', stack: 'HookledgerLowCost', region: 'eu-west-1' });
    try {
      expect(target.webhookUrl('platform')).toBe('https://abcdefghij0123456789klmnopqrstuv.lambda-url.eu-west-1.on.aws/hooks/platform');
    } finally {
      target.destroy();
    }
  });
});
