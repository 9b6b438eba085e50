/**
 * The ingest Lambda entry as deployed (lambdas/ingest/handler.ts): the bundled config and the
 * environment the stack sets, a mocked Secrets Manager. Proves the wiring of secret-read failures:
 * one warning log line and one EMF count, never a value.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import defaultConfig from '../../hookledger.config';

const sm = mockClient(SecretsManagerClient);
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:hookledger-platform-AbCdEf';
const written: string[] = [];

beforeAll(() => {
  vi.stubEnv('EVENTS_TABLE', 'Hookledger-Events');
  vi.stubEnv('SOURCE_SECRETS', JSON.stringify({ platform: ARN }));
  vi.stubEnv('PAYLOAD_HASH_KEY_SECRET', 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:hookledger-payload-hash-key-MnOpQr');
  vi.stubEnv('PAYLOAD_BUCKET', 'hookledger-payloadbucket-1a2b3c4d');
  vi.stubEnv('STACK_NAME', 'Hookledger');
  vi.stubEnv('AWS_REGION', 'eu-west-1');
  vi.stubGlobal('__HOOKLEDGER_CONFIG__', JSON.stringify(defaultConfig));
  const capture = (chunk: unknown) => {
    written.push(String(chunk));
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  for (const method of ['log', 'info', 'warn', 'error'] as const)
    vi.spyOn(console, method).mockImplementation((...args) => void capture(args.join(' ')));
});
afterAll(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  sm.reset();
});

function request(): APIGatewayProxyEventV2 {
  const body = JSON.stringify({ id: 'evt_01J9HANDLER1', type: 'payment.succeeded', tenant_id: 'tenant_204', key_id: 'key_42' });
  return {
    version: '2.0',
    routeKey: 'POST /hooks/{source}',
    rawPath: '/hooks/platform',
    rawQueryString: '',
    headers: {
      'content-type': 'application/json',
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,c2lnbmF0dXJl',
    },
    pathParameters: { source: 'platform' },
    isBase64Encoded: false,
    body,
    requestContext: {
      http: { method: 'POST', path: '/hooks/platform', sourceIp: '203.0.113.7' },
      requestId: 'req-1',
      timeEpoch: Date.now(),
    },
  } as unknown as APIGatewayProxyEventV2;
}

describe('ingest handler wiring', () => {
  it("logs and counts a failed secret read (Served none: nothing cached) under the alarm's Stack and Served dimensions only, and answers 503", async () => {
    sm.on(GetSecretValueCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    const { handler } = await import('../../lambdas/ingest/handler');

    const response = (await handler(request())) as APIGatewayProxyStructuredResultV2;

    expect(response.statusCode).toBe(503);
    const lines = written
      .join('\n')
      .split('\n')
      .filter((l) => l.trim().startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'WARN',
        message: 'signing secret could not be read',
        source: 'platform',
        error: 'ThrottlingException',
        served: 'nothing (503)',
      }),
    );
    const emf = lines.find((l) => 'SecretRefreshFailures' in l);
    expect(emf).toMatchObject({
      SecretRefreshFailures: 1,
      Served: 'none',
      Stack: 'Hookledger',
      _aws: { CloudWatchMetrics: [{ Namespace: 'Hookledger', Dimensions: [['Stack', 'Served']] }] },
    });
    // Exactly the dimensions the SecretRefreshFailures alarm names: a `service` dimension would make it another metric.
    expect(emf).not.toHaveProperty('service');
  });
});
