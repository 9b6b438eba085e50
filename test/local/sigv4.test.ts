/**
 * local/sigv4.ts against the SDK's own signer: every request shape the local stack's clients send
 * (the JSON protocols, SNS's query protocol, S3 paths and queries with characters to encode, Lambda's
 * REST paths) verifies with the key that signed it and with no other; what `signRequest` signs
 * verifies too; and a request changed after signing does not.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { LambdaClient, ListEventSourceMappingsCommand, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AccessKey, generateAccessKey } from '../../local/credentials';
import { signRequest, type Verification, verifySignature, type WireRequest } from '../../local/sigv4';

const KEY = generateAccessKey();
const OTHER = generateAccessKey();
const secretOf = (id: string) => (id === KEY.accessKeyId ? KEY.secretAccessKey : undefined);

let server: Server;
let endpoint: string;
const seen: { request: WireRequest; verdict: Verification }[] = [];

async function wire(req: IncomingMessage): Promise<WireRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return { method: req.method ?? 'GET', target: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks) };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void wire(req).then((request) => {
      seen.push({ request, verdict: verifySignature(request, secretOf) });
      // An answer no client parses as success: only the signature is under test.
      res.writeHead(418, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function verdictOf(send: (key: AccessKey) => Promise<unknown>, key: AccessKey = KEY): Promise<Verification> {
  const before = seen.length;
  await send(key).catch(() => undefined);
  return seen[before]!.verdict;
}

const config = (key: AccessKey) => ({ endpoint, region: 'us-east-1', credentials: key, maxAttempts: 1 });

const calls: Record<string, (key: AccessKey) => Promise<unknown>> = {
  'DynamoDB ListTables (JSON 1.0)': (key) => new DynamoDBClient(config(key)).send(new ListTablesCommand({})),
  'SQS SendMessage (JSON 1.0)': (key) =>
    new SQSClient({ ...config(key), useQueueUrlAsEndpoint: false }).send(
      new SendMessageCommand({ QueueUrl: `${endpoint}/000000000000/q`, MessageBody: '{"tenant":"tenant_204"}' }),
    ),
  'SNS CreateTopic (query)': (key) => new SNSClient(config(key)).send(new CreateTopicCommand({ Name: 'hookledger-topic' })),
  'Secrets Manager GetSecretValue (JSON 1.1)': (key) =>
    new SecretsManagerClient(config(key)).send(new GetSecretValueCommand({ SecretId: 'hookledger/platform' })),
  'S3 ListObjectsV2, a prefix with a space, a plus and a slash': (key) =>
    new S3Client({ ...config(key), forcePathStyle: true }).send(
      new ListObjectsV2Command({ Bucket: 'hookledger-payloads', Prefix: 'a b+c/' }),
    ),
  'S3 PutObject, a key with a space, a plus and an é': (key) =>
    new S3Client({ ...config(key), forcePathStyle: true }).send(
      new PutObjectCommand({ Bucket: 'hookledger-payloads', Key: 'payloads/a b+c/é', Body: 'evt_01J8K7M2Q4' }),
    ),
  'Lambda ListEventSourceMappings (REST, a query)': (key) =>
    new LambdaClient(config(key)).send(new ListEventSourceMappingsCommand({ EventSourceArn: 'arn:aws:sqs:us-east-1:000000000000:q' })),
  'Lambda UpdateEventSourceMapping (REST, a path parameter)': (key) =>
    new LambdaClient(config(key)).send(new UpdateEventSourceMappingCommand({ UUID: 'Consumers billing/meter', Enabled: false })),
};

describe('verifySignature', () => {
  for (const [name, send] of Object.entries(calls)) {
    it(`accepts ${name} signed by the SDK with the accepted key, and names any other key unknown`, async () => {
      expect(await verdictOf(send)).toMatchObject({ ok: true, accessKeyId: KEY.accessKeyId });
      expect(await verdictOf(send, OTHER)).toEqual({ ok: false, reason: 'unknown_key', accessKeyId: OTHER.accessKeyId });
    });
  }

  it('refuses a request without a signature, one whose body or target changed after signing, one signed with a wrong secret, and an old one', async () => {
    await verdictOf(calls['SQS SendMessage (JSON 1.0)']!);
    const { request } = seen.at(-1)!;
    expect(verifySignature({ ...request, headers: { ...request.headers, authorization: undefined } }, secretOf)).toEqual({
      ok: false,
      reason: 'missing',
    });
    // The signed payload hash is the header's; a body hash computed here must match it too when there is none.
    const { 'x-amz-content-sha256': _hash, ...unhashed } = request.headers;
    expect(verifySignature({ ...request, headers: unhashed, body: Buffer.from('{"tenant":"tenant_666"}') }, secretOf)).toMatchObject({
      ok: false,
    });
    expect(verifySignature({ ...request, target: '/?Action=Publish' }, secretOf)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(verifySignature(request, () => 'not-the-secret')).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(verifySignature(request, secretOf, Date.now() + 16 * 60_000)).toMatchObject({ ok: false, reason: 'expired' });
  });
});

describe('signRequest', () => {
  it('signs a forwarded request (new host, rewritten body) so that it verifies with the signing key only', () => {
    const body = Buffer.from('{"QueueUrl":"http://127.0.0.1:4566/000000000000/q","MessageBody":"evt_01J8K7M2Q4"}');
    const headers = signRequest(
      {
        method: 'POST',
        target: '/',
        headers: { host: '127.0.0.1:4566', 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.SendMessage' },
        body,
      },
      KEY,
      { region: 'us-east-1', service: 'sqs' },
    );
    const signed = { method: 'POST', target: '/', headers, body };
    expect(verifySignature(signed, secretOf)).toMatchObject({ ok: true, accessKeyId: KEY.accessKeyId, service: 'sqs' });
    expect(verifySignature({ ...signed, headers: { ...headers, host: '127.0.0.1:4567' } }, secretOf)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
  });
});
