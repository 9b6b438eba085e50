/**
 * The CLI as a user runs it: `node bin/hookledger.mjs ...` in a child process, pointed by
 * HOOKLEDGER_STATE at a state file written here for DynamoDB Local, fauxqs, the real ingest handler
 * behind the local HTTP gateway, and a stand-in for the local stack's admin endpoint.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { intakeStore } from '../../adapters/event-stores';
import { ALL_SCHEMES, signatureHeaders } from '../../core/schemes';
import { createIngestHandler } from '../../lambdas/ingest/app';
import { createLogger } from '../../lambdas/shared/logger';
import { processCredentials } from '../../local/credentials';
import { type HttpGateway, startHttpGateway } from '../../local/http-gateway';
import { FileSecrets } from '../../local/secrets-file';
import { type LocalStackState, writeState } from '../../local/state';
import { signedHeaders } from '../support/factories';
import { config, freshStack, HOUR, items, MIN, type OpsEnv, startOpsEnv } from './support';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/hookledger.mjs');

let env: OpsEnv;
let stack: Awaited<ReturnType<typeof freshStack>>;
let dir: string;
let statePath: string;
let secretsFile: string;
let gateway: HttpGateway;
let admin: Server;
const adminCalls: string[] = [];
const paused = new Set<string>();
/** Receipts two hours old: past the grace period, inside [now-3h, now-1h). */
const base = Date.now() - 2 * HOUR;
const FROM = new Date(base - HOUR).toISOString();
const TO = new Date(base + HOUR).toISOString();

beforeAll(async () => {
  env = await startOpsEnv();
  stack = await freshStack(env);
  dir = await mkdtemp(path.join(tmpdir(), 'hookledger-cli-'));
  secretsFile = path.join(dir, 'secrets.json');
  const secrets = new FileSecrets({ path: secretsFile, sourceIds: ['platform'] });
  gateway = await startHttpGateway({
    port: 0,
    handler: createIngestHandler({
      schemes: ALL_SCHEMES,
      config,
      store: intakeStore(stack.store),
      secrets,
      logger: createLogger('ingest', { silent: true }),
    }),
  });
  admin = createServer((req, res) => {
    adminCalls.push(`${req.method} ${req.url}`);
    const match = /^\/consumers\/([^/]+)\/(pause|resume)$/.exec(req.url ?? '');
    if (req.method === 'POST' && match) {
      if (match[2] === 'pause') paused.add(match[1]!);
      else paused.delete(match[1]!);
      res.writeHead(204).end();
    } else if (req.method === 'GET' && req.url === '/consumers') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ paused: [...paused] }));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => admin.listen(0, '127.0.0.1', resolve));

  const queues = Object.fromEntries(
    Object.entries(stack.resources.queues).map(([id, q]) => [id, { url: q.url, arn: q.arn, dlqUrl: q.dlqUrl, dlqArn: q.dlqArn }]),
  );
  const state: LocalStackState & { adminUrl: string; secretsFile: string } = {
    version: 1,
    pid: process.pid,
    startedAt: new Date().toISOString(),
    region: 'us-east-1',
    dynamo: { endpoint: env.dynamo.server.endpoint, port: env.dynamo.server.port, dbPath: null },
    sqs: { endpoint: env.sqsServer.endpoint, port: env.sqsServer.port },
    gateway: { url: gateway.url, port: gateway.port },
    webhookUrl: `${gateway.url}/hooks/{source}`,
    tables: stack.tables,
    queues,
    fanoutFailureQueue: stack.resources.fanoutFailureQueue,
    adminUrl: `http://127.0.0.1:${(admin.address() as AddressInfo).port}`,
    secretsFile,
  };
  statePath = path.join(dir, 'state.json');
  // The emulators take only this process's per-start key: the CLI's process reads it from beside the state.
  await writeState(statePath, { ...state, credentials: processCredentials() });

  const { seed } = stack;
  await seed.receipt({ eventId: 'evt_01J8K7M2Q4', receivedAt: base });
  await seed.receipt({ eventId: 'evt_01J8K7M2R5', receivedAt: base + 5 * MIN });
  for (const c of ['billing-meter', 'audit-writer', 'risk-evaluator']) {
    await seed.deliver('evt_01J8K7M2Q4', c, 5, base + MIN);
    await seed.deliver('evt_01J8K7M2R5', c, 3, base + 6 * MIN);
  }
});

afterAll(async () => {
  await gateway?.close();
  await new Promise((resolve) => admin?.close(resolve));
  await env?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: string[], extraEnv: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, HOOKLEDGER_STATE: statePath, USER: 'cli-test', ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('hookledger CLI', () => {
  it('reconcile --json exits 0 on a clean window, and 1 listing the ids once a ledger row is missing', async () => {
    const clean = await cli(['reconcile', '--json', '--from', FROM, '--to', TO]);
    expect(clean.stderr).toBe('');
    expect(clean.code).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ receipts: 2, expectedDeliveries: 6, violations: [] });

    await stack.ddb.send(new DeleteCommand({ TableName: stack.tables.ledger, Key: { pk: 'platform:evt_01J8K7M2R5#audit-writer' } }));
    const json = await cli(['reconcile', '--json', '--from', FROM, '--to', TO]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).violations).toEqual([
      {
        kind: 'missing_delivery',
        source: 'platform',
        eventId: 'evt_01J8K7M2R5',
        consumerId: 'audit-writer',
        ledgerKey: 'platform:evt_01J8K7M2R5#audit-writer',
      },
    ]);

    const human = await cli(['reconcile', '--from', FROM, '--to', TO]);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/1 violation\(s\):/);
    expect(human.stdout).toMatch(/missing_delivery\s+platform\s+evt_01J8K7M2R5\s+audit-writer\s+platform:evt_01J8K7M2R5#audit-writer/);
  });

  it('usage prints an aligned table of units by tenant and consumer', async () => {
    const run = await cli(['usage', '--from', FROM, '--to', 'now', '--consumer', 'billing-meter']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/TENANT\s+CONSUMER\s+UNITS\s+DELIVERIES\ntenant_204\s+billing-meter\s+8\s+2/);
  });

  it('send posts a signed sample to intake, and trace then shows its receipt', async () => {
    const sent = await cli(['send', '--json', '--type', 'payment.succeeded', '--tenant', 'tenant_204', '--key', 'key_42']);
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    const result = JSON.parse(sent.stdout) as { status: number; eventId: string; body: unknown };
    expect(result.status).toBe(202);
    expect(result.body).toEqual({ event_id: result.eventId, deliveries: 3 });

    const traced = await cli(['trace', result.eventId, '--json']);
    expect(traced.code).toBe(0);
    expect(JSON.parse(traced.stdout).receipt).toMatchObject({
      eventId: result.eventId,
      tenantId: 'tenant_204',
      keyId: 'key_42',
      payload: 'present',
      secretVersion: 'current',
      consumers: ['billing-meter', 'audit-writer', 'risk-evaluator'],
    });
  });

  it("pause and resume go through the local stack's admin endpoint, and status shows the flag", async () => {
    expect((await cli(['pause', 'billing-meter'])).code).toBe(0);
    expect(adminCalls).toContain('POST /consumers/billing-meter/pause');
    const report = JSON.parse((await cli(['status', '--json'])).stdout) as { consumers: { consumer: string; paused: boolean }[] };
    expect(report.consumers.map((c) => [c.consumer, c.paused])).toEqual([
      ['billing-meter', true],
      ['audit-writer', false],
      ['risk-evaluator', false],
    ]);
    expect((await cli(['resume', 'billing-meter'])).code).toBe(0);
    expect(paused.size).toBe(0);
  });

  it('status counts a window (--since, default 7d; --from/--to) and says so; --scan counts all history', async () => {
    const before = Date.now();
    const week = JSON.parse((await cli(['status', '--json'])).stdout) as { at: number; window: { from: number; to: number } };
    expect(week.window.to - week.window.from).toBe(7 * 24 * HOUR);
    expect(week.window.to).toBeGreaterThanOrEqual(before);
    const hour = await cli(['status', '--since', '1h']);
    expect(hour.code).toBe(0);
    expect(hour.stdout).toMatch(
      /deliveries and intake of events received in \[(\S+), (\S+)\); events received before \1 are not counted; --scan counts all history/,
    );
    const fixed = JSON.parse((await cli(['status', '--from', '2020-01-01T10:00:00Z', '--to', '2020-01-01T11:00:00Z', '--json'])).stdout);
    expect(fixed.window).toEqual({ from: Date.parse('2020-01-01T10:00:00Z'), to: Date.parse('2020-01-01T11:00:00Z') });
    expect(fixed.intake.events).toBe(0);
    const all = await cli(['status', '--scan', '--json']);
    const scanned = JSON.parse(all.stdout);
    expect(scanned.window).toBeUndefined();
    // Every event here was received in the last week: the scan counts the same.
    expect(scanned.intake.events).toBe(JSON.parse((await cli(['status', '--json'])).stdout).intake.events);
    expect(scanned.intake.events).toBeGreaterThan(0);
    const mixed = await cli(['status', '--scan', '--since', '1h']);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('--scan counts all of history');
  });

  it('verify-payload says match (exit 0) for the received bytes and no match (exit 1) for one byte changed', async () => {
    const secret = (await new FileSecrets({ path: path.join(dir, 'secrets.json'), sourceIds: ['platform'] }).get('platform')).current;
    const body = JSON.stringify({
      id: 'evt_01J8K7VP01',
      type: 'payment.succeeded',
      tenant_id: 'tenant_204',
      key_id: 'key_42',
      data: { amount: 4200, card_last4: '4242' },
    });
    const at = Date.now();
    const res = await fetch(`${gateway.url}/hooks/platform`, {
      method: 'POST',
      headers: signedHeaders(body, { secret, at, msgId: 'msg_vp01' }),
      body,
    });
    expect(res.status).toBe(202);
    const received = path.join(dir, 'received.json');
    const forged = path.join(dir, 'forged.json');
    await writeFile(received, body);
    await writeFile(forged, body.replace('4242', '4243'));

    const match = await cli(['verify-payload', 'evt_01J8K7VP01', received]);
    expect(match.stderr).toBe('');
    expect(match.code).toBe(0);
    expect(match.stdout).toMatch(
      new RegExp(`^match: .*received\\.json is the body platform evt_01J8K7VP01 was received with \\(${body.length} bytes, hmac-sha256`),
    );
    const mismatch = await cli(['verify-payload', 'evt_01J8K7VP01', forged, '--json']);
    expect(mismatch.code).toBe(1);
    expect(JSON.parse(mismatch.stdout)).toMatchObject({
      eventId: 'evt_01J8K7VP01',
      matches: false,
      hash: 'hmac-sha256',
      presentedBytes: body.length,
      receivedBytes: body.length,
    });
    const absent = await cli(['verify-payload', 'evt_01J8K7VP01', path.join(dir, 'nope.json')]);
    expect(absent.code).toBe(2);
    expect(absent.stderr).toMatch(/cannot read .*nope\.json \(ENOENT\); give the path of the body to check/);
    // The receipt keeps the keyed hash, never the plain SHA-256 a guesser could test bodies against.
    const traced = JSON.parse((await cli(['trace', 'evt_01J8K7VP01', '--json'])).stdout) as { receipt: { payloadHash: string } };
    expect(traced.receipt.payloadHash).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(traced.receipt.payloadHash).not.toContain(createHash('sha256').update(body).digest('hex'));
  });

  it('secrets rotate bounds the overlap and secrets retire ends it: the old secret then gets the same 401 as any bad signature', async () => {
    const secretOf = async () => (await new FileSecrets({ path: secretsFile, sourceIds: ['platform'] }).refresh('platform')).current;
    const post = async (secret: string, eventId: string) => {
      const body = Buffer.from(JSON.stringify({ id: eventId, type: 'invoice.paid', tenant_id: 'tenant_311', key_id: 'key_7' }));
      const headers = signatureHeaders({ type: 'standard-webhooks' }, { body, secret, now: Date.now(), messageId: `msg_${eventId}` });
      const response = await fetch(`${gateway.url}/hooks/platform`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const old = await secretOf();
    const before = Date.now();

    const rotated = await cli(['secrets', 'rotate', 'platform', '--overlap', '6h']);
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    const until = /the previous secret verifies until (\S+): give the provider the new one now/.exec(rotated.stdout)?.[1];
    expect(Date.parse(until ?? '') - before).toBeGreaterThanOrEqual(6 * HOUR);
    expect(Date.parse(until ?? '') - Date.now()).toBeLessThanOrEqual(6 * HOUR);
    expect(rotated.stdout).toContain('hookledger secrets retire platform');

    // The first request under the new secret makes intake re-read its cached secrets (a mismatch)...
    expect(await post(await secretOf(), 'evt_01J9NEWSECRET0')).toMatchObject({ status: 202 });
    // ...after which the old one verifies as previous, inside the overlap.
    expect(await post(old, 'evt_01J9OLDSECRET1')).toMatchObject({ status: 202 });
    const traced = JSON.parse((await cli(['trace', 'evt_01J9OLDSECRET1', '--json'])).stdout) as {
      receipt: { secretVersion: string; receivedAt: number };
    };
    expect(traced.receipt.secretVersion).toBe('previous');
    const status = await cli(['status']);
    expect(status.stdout).toContain(
      `previous secret last verified a request: platform ${new Date(traced.receipt.receivedAt).toISOString()}`,
    );

    const retired = await cli(['secrets', 'retire', 'platform']);
    expect(retired.code).toBe(0);
    expect(retired.stdout).toMatch(
      /^retired the previous signing secret of platform on local stack .*: only the current secret verifies \(from the local stack's next request\)\.\n$/,
    );
    expect(await post(old, 'evt_01J9OLDSECRET2')).toEqual({
      status: 401,
      body: { error: 'signature_mismatch', message: expect.any(String) },
    });
    expect(await post(await secretOf(), 'evt_01J9NEWSECRET3')).toMatchObject({ status: 202 });
    const again = await cli(['secrets', 'retire', 'platform', '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ source: 'platform', where: 'local', retired: false });

    const audits = (await items(env, stack.tables.events)).filter((i) => i.kind === 'audit');
    expect(audits.map((a) => [a.action, a.operator, a.retired ?? a.previousUntil]).sort()).toEqual([
      ['secret.retire', 'cli-test', false],
      ['secret.retire', 'cli-test', true],
      ['secret.rotate', 'cli-test', Date.parse(until ?? '')],
    ]);
    const written = JSON.stringify(audits) + rotated.stdout + retired.stdout + status.stdout;
    expect(written).not.toContain(old);
    expect(written).not.toContain(await secretOf());
    expect(written).not.toContain('whsec_');
  });

  it('says to run npm start when there is no local stack (exit 3), and exits 2 on a usage error', async () => {
    const missing = await cli(['status'], { HOOKLEDGER_STATE: path.join(dir, 'absent.json') });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/no local stack is running .*`npm start`/);
    const usage = await cli(['replay', '--consumer', 'billing-meter', '--from', 'yesterday']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--from "yesterday" is not a time/);
  });
});
