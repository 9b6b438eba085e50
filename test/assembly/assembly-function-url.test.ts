/**
 * Assembly mode on a template synthesized with `intake: { endpoint: 'function-url' }`: no HTTP API,
 * intake behind its own `AWS::Lambda::Url`. The URL's target function is the one the local gateway
 * serves, on every path and method as the URL does, with the event a function URL delivers (payload format 2.0,
 * route key `$default`, no path parameters: intake reads the source from the raw path), its calls
 * checked against its role like every other function's. One configuration, synthesized once in this
 * process (every function really bundled), one stack for the file.
 */
import { rmSync } from 'node:fs';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { keyRegistryKey } from '../../core/model';
import defaultConfig from '../../hookledger.config';
import type { AssemblyStack } from '../../local/assembly/stack';
import { readAssembly } from '../../local/assembly/template';
import { gatewayOf, IntakeEndpointError } from '../../local/pipeline/assembly/plan';
import { platformEvent } from '../support/factories';
import { waitFor } from '../support/wait';
import { editedAssembly, ledgerOf, logicalId, type Recorded, sendTo, startRecordedStack, synthesizedWith } from './support';

let assemblyDir: string;
let stack: AssemblyStack;
let recorded: Recorded;
let ddb: DynamoDBDocumentClient;
/** Each event the gateway handed a function, by logical id. */
const events: { functionId: string; event: Record<string, unknown> }[] = [];
const copies: string[] = [];

beforeAll(async () => {
  assemblyDir = synthesizedWith(defineConfig({ ...defaultConfig, intake: { endpoint: 'function-url' } }), 'hookledger-asm-function-url-');
  ({ stack, recorded, ddb } = await startRecordedStack(assemblyDir, {
    onInvoke: (functionId, event) => events.push({ functionId, event: event as Record<string, unknown> }),
  }));
  await ddb.send(
    new PutCommand({
      TableName: stack.state.tables.events,
      Item: { pk: keyRegistryKey('key_42'), kind: 'key', keyId: 'key_42', tenantId: 'tenant_204', status: 'active', createdAt: Date.now() },
    }),
  );
}, 180_000);
afterAll(async () => {
  ddb?.destroy();
  await stack?.stop();
  for (const dir of [assemblyDir, ...copies]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The target of the template's one function URL: intake's function. */
function urlTarget(): string {
  const [, url] = Object.entries(stack.assembly.resources).find(([, r]) => r.Type === 'AWS::Lambda::Url')!;
  const target = url.Properties!.TargetFunctionArn as { 'Fn::GetAtt': [string, string] };
  return target['Fn::GetAtt'][0];
}

const summary = (rows: { consumerId: string; state: string; units?: number; tenantId: string }[]) =>
  rows.map((r) => `${r.consumerId}:${r.state}:${r.units}:${r.tenantId}`).sort();

describe('assembly mode with intake behind a function URL', () => {
  it('runs a template with no HTTP API route: the function URL target serves /hooks/<source>', () => {
    expect(Object.values(stack.assembly.resources).filter((r) => r.Type.startsWith('AWS::ApiGatewayV2::'))).toEqual([]);
    expect(Object.keys(stack.functions)).toContain(urlTarget());
    expect(stack.webhookUrl('platform')).toBe(`${stack.url}/hooks/platform`);
  });

  it('answers a signed POST of evt_01J8K7M2Q4 202, records its receipt for tenant_204 and delivers it to all three consumers', async () => {
    expect(await sendTo(stack, platformEvent({ id: 'evt_01J8K7M2Q4' }))).toEqual({
      status: 202,
      body: { event_id: 'evt_01J8K7M2Q4', deliveries: 3 },
    });
    const receipt = await ddb.send(
      new GetCommand({ TableName: stack.state.tables.events, Key: { pk: 'evt#platform#evt_01J8K7M2Q4' }, ConsistentRead: true }),
    );
    expect(receipt.Item).toMatchObject({
      pk: 'evt#platform#evt_01J8K7M2Q4',
      kind: 'event',
      source: 'platform',
      eventId: 'evt_01J8K7M2Q4',
      tenantId: 'tenant_204',
      keyId: 'key_42',
      consumers: ['billing-meter', 'audit-writer', 'risk-evaluator'],
    });
    await stack.drain();
    const rows = await waitFor('three ledger rows of evt_01J8K7M2Q4', async () => {
      const found = await ledgerOf(stack, ddb, 'evt_01J8K7M2Q4');
      return found.length === 3 && found.every((r) => r.state === 'done') ? found : undefined;
    });
    expect(summary(rows)).toEqual([
      'audit-writer:done:1:tenant_204',
      'billing-meter:done:5:tenant_204',
      'risk-evaluator:done:1:tenant_204',
    ]);
  });

  it("hands intake the function URL's event: version 2.0, route key $default, path parameters null, the source only in rawPath", () => {
    const intake = events.filter((e) => e.functionId === urlTarget());
    expect(intake).toHaveLength(1);
    const { event } = intake[0]!;
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: '$default',
      rawPath: '/hooks/platform',
      pathParameters: null,
      stageVariables: null,
      isBase64Encoded: false,
      requestContext: {
        routeKey: '$default',
        stage: '$default',
        accountId: 'anonymous',
        http: { method: 'POST', path: '/hooks/platform' },
      },
    });
    expect((event.requestContext as { apiId: string }).apiId).toMatch(/^[a-z0-9]{32}$/);
    expect(JSON.parse(String(event.body))).toMatchObject({ id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204' });
  });

  it("checks each of intake's calls against its own role: PutItem and GetSecretValue used, nothing denied", () => {
    const intakeRole = stack.iam.report().find((r) => r.functions.includes(urlTarget()));
    expect(intakeRole?.used).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'secretsmanager:GetSecretValue']));
    expect(recorded.denials).toEqual([]);
  });

  /** One unsigned request through the gateway, and the events intake's function was handed for it. */
  async function request(method: string, path: string) {
    const before = events.filter((e) => e.functionId === urlTarget()).length;
    const res = await fetch(new URL(path, stack.url), { method, headers: { 'content-type': 'application/json' }, body: '{}' });
    const answer = { status: res.status, allow: res.headers.get('allow'), body: await res.json() };
    return {
      answer,
      handed: events
        .filter((e) => e.functionId === urlTarget())
        .slice(before)
        .map((e) => e.event),
    };
  }

  it("passes POST /nope to intake's bundle, as the URL does, which answers 404 unknown_source", async () => {
    const { answer, handed } = await request('POST', '/nope');
    expect(answer).toEqual({
      status: 404,
      allow: null,
      body: { error: 'unknown_source', message: 'no webhook source is registered at /hooks/' },
    });
    expect(handed).toHaveLength(1);
    expect(handed[0]).toMatchObject({ routeKey: '$default', rawPath: '/nope', pathParameters: null });
  });

  it("passes PUT /hooks/platform to intake's bundle, which answers 405 with Allow: POST", async () => {
    const { answer, handed } = await request('PUT', '/hooks/platform');
    expect(answer).toEqual({
      status: 405,
      allow: 'POST',
      body: { error: 'method_not_allowed', message: 'source "platform" accepts POST only' },
    });
    expect(handed).toHaveLength(1);
    expect(handed[0]).toMatchObject({ rawPath: '/hooks/platform', requestContext: { http: { method: 'PUT' }, accountId: 'anonymous' } });
  });
});

describe('a template assembly mode cannot serve intake from', () => {
  const edited = (edit: Parameters<typeof editedAssembly>[1]) => {
    const dir = editedAssembly(assemblyDir, edit);
    copies.push(dir);
    return readAssembly(dir);
  };

  it('with neither an HTTP API route nor a function URL, is refused by an IntakeEndpointError naming both', () => {
    const assembly = edited((template) => {
      delete template.Resources[logicalId(template, 'AWS::Lambda::Url', 'Ingest')];
    });
    expect(() => gatewayOf(assembly)).toThrow(IntakeEndpointError);
    expect(() => gatewayOf(assembly)).toThrow(/no AWS::ApiGatewayV2::Route and no AWS::Lambda::Url/);
  });

  it('with a function URL of AuthType AWS_IAM, is refused naming the auth type (the local gateway takes unsigned callers only)', () => {
    const assembly = edited((template) => {
      template.Resources[logicalId(template, 'AWS::Lambda::Url', 'Ingest')]!.Properties!.AuthType = 'AWS_IAM';
    });
    expect(() => gatewayOf(assembly)).toThrow(IntakeEndpointError);
    expect(() => gatewayOf(assembly)).toThrow(/AuthType AWS_IAM/);
  });
});
