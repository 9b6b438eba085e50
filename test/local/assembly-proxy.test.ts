/**
 * The IAM-checked proxy (local/assembly/proxy.ts) in front of the SQS emulator: a function's call is
 * checked against its role before it is forwarded, the operator's goes through unchecked, anyone
 * else is refused, and queue URLs name the proxy on the way out and the emulator on the way in.
 */
import { CreateQueueCommand, GetQueueUrlCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthorizer, type LocalPrincipal } from '../../local/assembly/iam';
import { type CheckedProxy, startCheckedProxy } from '../../local/assembly/proxy';
import { LOCAL_REGION, localSqsClient } from '../../local/clients';
import { type AccessKey, generateAccessKey, processCredentials } from '../../local/credentials';
import { type SqsEmulator, startSqsEmulator } from '../../local/emulators';
import { uniqueName } from './support';

const ORDERS = uniqueName('hl-orders');
const OTHER = uniqueName('hl-other');
const ordersArn = `arn:aws:sqs:us-east-1:000000000000:${ORDERS}`;

const principal: LocalPrincipal = {
  accessKeyId: 'AKLOCALBillingMeterWorker',
  secretAccessKey: generateAccessKey().secretAccessKey,
  functionId: 'BillingMeterWorker',
  roleId: 'BillingMeterRole',
  roleArn: 'arn:aws:iam::000000000000:role/BillingMeterRole',
  policies: [
    {
      name: 'BillingMeterPolicy',
      policy: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['sqs:SendMessage'], Resource: ordersArn }] },
    },
  ],
};
const authorizer = createAuthorizer(new Map([[principal.accessKeyId, principal]]));

let emulator: SqsEmulator;
let proxy: CheckedProxy;
let direct: SQSClient;
let operator: SQSClient;
const clients: SQSClient[] = [];

/** A client as a function's SDK is: signing with its key, sending to the host of the queue URL it is given. */
function clientOf(key: AccessKey): SQSClient {
  const client = new SQSClient({ endpoint: proxy.endpoint, region: LOCAL_REGION, credentials: key, maxAttempts: 1 });
  clients.push(client);
  return client;
}

beforeAll(async () => {
  emulator = await startSqsEmulator({ port: 0 });
  direct = localSqsClient(emulator.endpoint);
  const created = await direct.send(new CreateQueueCommand({ QueueName: ORDERS }));
  await direct.send(new CreateQueueCommand({ QueueName: OTHER }));
  const upstreamQueueBase = (created.QueueUrl ?? '').replace(/\/[^/]+\/[^/]+$/, '');
  proxy = await startCheckedProxy({
    service: 'sqs',
    upstream: emulator.endpoint,
    authorizer,
    principals: new Map([[principal.accessKeyId, principal]]),
    operator: processCredentials(),
    queueUrlBase: () => upstreamQueueBase,
  });
  operator = localSqsClient(proxy.endpoint);
});

afterAll(async () => {
  for (const client of [direct, operator, ...clients]) client?.destroy();
  await proxy?.close();
  await emulator?.stop();
});

const urlOf = async (name: string) => (await operator.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl as string;
const bodiesIn = async (url: string) =>
  ((await operator.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }))).Messages ?? []).map(
    (m) => m.Body,
  );

describe('the IAM-checked SQS proxy', () => {
  it("hands the operator queue URLs on the proxy, and forwards the function's SendMessage its role allows to the emulator", async () => {
    const url = await urlOf(ORDERS);
    expect(url.startsWith(`${proxy.endpoint}/`)).toBe(true);
    const sent = await clientOf(principal).send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'evt_01J8K7M2Q4' }));
    expect(sent.MessageId).toBeDefined();
    expect(await bodiesIn(url)).toEqual(['evt_01J8K7M2Q4']);
  });

  it('answers AccessDenied, as AWS does, for a SendMessage to a queue the role does not name, and forwards nothing', async () => {
    const url = await urlOf(OTHER);
    const sent = clientOf(principal).send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'evt_01J8K7M2Q5' }));
    await expect(sent).rejects.toThrow(
      `User: arn:aws:iam::000000000000:assumed-role/BillingMeterRole/BillingMeterWorker is not authorized to perform: sqs:SendMessage on resource: arn:aws:sqs:us-east-1:000000000000:${OTHER}`,
    );
    expect(authorizer.denials()).toEqual([
      {
        principal: principal.roleArn,
        functionId: 'BillingMeterWorker',
        action: 'sqs:SendMessage',
        resource: `arn:aws:sqs:us-east-1:000000000000:${OTHER}`,
      },
    ]);
    expect(await bodiesIn(url)).toEqual([]);
  });

  it('refuses a caller signing with a key neither a function nor the operator holds', async () => {
    const url = await urlOf(ORDERS);
    const stranger = clientOf(generateAccessKey());
    await expect(stranger.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'evt_01J8K7M2Q6' }))).rejects.toThrow(
      'is not one this local stack accepts',
    );
  });
});
