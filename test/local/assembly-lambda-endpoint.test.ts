/**
 * The assembly's Lambda endpoint (local/assembly/lambda-endpoint.ts): the two event source mapping
 * calls a function makes (list, and Enabled on an SQS mapping), each checked against its role, as the
 * SDK's LambdaClient sends them.
 */
import { LambdaClient, ListEventSourceMappingsCommand, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAuthorizer, type LocalPrincipal } from '../../local/assembly/iam';
import { type LocalMapping, startLambdaEndpoint } from '../../local/assembly/lambda-endpoint';
import type { LoopbackEndpoint } from '../../local/assembly/loopback';
import { LOCAL_REGION } from '../../local/clients';
import { generateAccessKey, processCredentials } from '../../local/credentials';

const workerArn = 'arn:aws:lambda:us-east-1:000000000000:function:hookledger-crm-sync';
const sqsMappingArn = 'arn:aws:lambda:us-east-1:000000000000:event-source-mapping:CrmSyncQueueMapping';

const principal: LocalPrincipal = {
  accessKeyId: 'AKLOCALCrmSyncWorker',
  secretAccessKey: generateAccessKey().secretAccessKey,
  functionId: 'CrmSyncWorker',
  roleId: 'CrmSyncRole',
  roleArn: 'arn:aws:iam::000000000000:role/CrmSyncRole',
  policies: [
    {
      name: 'CrmSyncPolicy',
      policy: {
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Action: ['lambda:ListEventSourceMappings'], Resource: '*' },
          { Effect: 'Allow', Action: ['lambda:UpdateEventSourceMapping'], Resource: sqsMappingArn },
        ],
      },
    },
  ],
};

let enabled = true;
const mappings: LocalMapping[] = [
  {
    uuid: 'CrmSyncQueueMapping',
    eventSourceArn: 'arn:aws:sqs:us-east-1:000000000000:hookledger-crm-sync',
    functionArn: workerArn,
    enabled: () => enabled,
    setEnabled: (value) => {
      enabled = value;
    },
  },
  {
    uuid: 'FanoutStreamMapping',
    eventSourceArn: 'arn:aws:dynamodb:us-east-1:000000000000:table/EventStore/stream/2026-12-02T00:00:00.000',
    functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:hookledger-fanout',
    enabled: () => true,
  },
];

let endpoint: LoopbackEndpoint;
let lambda: LambdaClient;

beforeAll(async () => {
  endpoint = await startLambdaEndpoint({
    mappings: () => mappings,
    authorizer: createAuthorizer(new Map([[principal.accessKeyId, principal]])),
    principals: new Map([[principal.accessKeyId, principal]]),
    operator: processCredentials(),
  });
  lambda = new LambdaClient({ endpoint: endpoint.endpoint, region: LOCAL_REGION, credentials: principal, maxAttempts: 1 });
});

afterAll(async () => {
  lambda?.destroy();
  await endpoint?.close();
});

beforeEach(() => {
  enabled = true;
});

describe("the assembly's Lambda endpoint", () => {
  it("lists the function's own mappings by FunctionName", async () => {
    const listed = await lambda.send(new ListEventSourceMappingsCommand({ FunctionName: 'hookledger-crm-sync' }));
    expect(listed.EventSourceMappings).toEqual([
      {
        UUID: 'CrmSyncQueueMapping',
        EventSourceArn: 'arn:aws:sqs:us-east-1:000000000000:hookledger-crm-sync',
        FunctionArn: workerArn,
        State: 'Enabled',
      },
    ]);
  });

  it('disables an SQS mapping its role may update (202 Disabling), which pauses its poller', async () => {
    const updated = await lambda.send(new UpdateEventSourceMappingCommand({ UUID: 'CrmSyncQueueMapping', Enabled: false }));
    expect(updated.State).toBe('Disabling');
    expect(enabled).toBe(false);
  });

  it('answers AccessDeniedException for a mapping its role may not update, and changes nothing', async () => {
    await expect(lambda.send(new UpdateEventSourceMappingCommand({ UUID: 'FanoutStreamMapping', Enabled: false }))).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message:
        'User: arn:aws:iam::000000000000:role/CrmSyncRole is not authorized to perform: lambda:UpdateEventSourceMapping on resource: arn:aws:lambda:us-east-1:000000000000:event-source-mapping:FanoutStreamMapping',
    });
  });

  it('answers the operator ResourceNotFoundException for an unknown UUID, and InvalidParameterValueException for a stream mapping or BatchSize', async () => {
    const operator = new LambdaClient({
      endpoint: endpoint.endpoint,
      region: LOCAL_REGION,
      credentials: processCredentials(),
      maxAttempts: 1,
    });
    try {
      await expect(operator.send(new UpdateEventSourceMappingCommand({ UUID: 'NoSuchMapping', Enabled: false }))).rejects.toMatchObject({
        name: 'ResourceNotFoundException',
      });
      await expect(
        operator.send(new UpdateEventSourceMappingCommand({ UUID: 'FanoutStreamMapping', Enabled: false })),
      ).rejects.toMatchObject({
        name: 'InvalidParameterValueException',
        message: 'a stream mapping is not served locally: only Enabled on an SQS mapping',
      });
      await expect(operator.send(new UpdateEventSourceMappingCommand({ UUID: 'CrmSyncQueueMapping', BatchSize: 5 }))).rejects.toMatchObject(
        { name: 'InvalidParameterValueException', message: 'BatchSize is not served locally: only Enabled on an SQS mapping' },
      );
    } finally {
      operator.destroy();
    }
  });
});
