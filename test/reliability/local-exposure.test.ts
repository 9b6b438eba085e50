/**
 * What `npm start` exposes: every socket its processes (Node and the DynamoDB Local JVM) listen on is
 * on the loopback interface, so webhook bodies and the ledger are not readable from the network; the
 * data folder (DynamoDB Local's database, the stream checkpoints) is its owner's only; and every
 * listener that holds data or changes state (the admin endpoint, fauxqs's SQS, SNS and S3, DynamoDB
 * Local) answers only requests that carry this start's credential and name it by its own loopback
 * host, never a browser page's (an Origin header, a CORS preflight, a rebound host name).
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { CreateTopicCommand, ListTopicsCommand, SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanAll } from '../../adapters/table-scan';
import type { LedgerItem } from '../../core/model';
import type { LocalStackCredentials } from '../../local/credentials';
import { freePort } from '../../local/emulators';
import { readStackCredentials } from '../../local/state';
import { platformEvent, signedHeaders } from '../support/factories';
import { formPost, rawRequest } from '../support/raw-http';
import { hookledger, type NpmStart, npmStart, signingSecret, statePathOf } from './npm-start';

/** Listening TCP sockets (address, port) of these processes, read from /proc. */
function listeningSockets(pids: readonly number[]): { address: string; port: number }[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match) inodes.add(match[1]!);
      } catch {
        // closed meanwhile
      }
    }
  }
  const out: { address: string; port: number }[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address, st (0A = LISTEN), inode
      if (cols.length < 10 || cols[3] !== '0A' || !inodes.has(cols[9]!)) continue;
      const [hex, portHex] = cols[1]!.split(':') as [string, string];
      out.push({ address: decodeAddress(hex), port: Number.parseInt(portHex, 16) });
    }
  }
  return out.sort((a, b) => a.port - b.port);
}

/** /proc/net/tcp{,6} addresses: 32-bit words in host (little-endian) order. */
function decodeAddress(hex: string): string {
  const words = hex.match(/.{8}/g)!.map((w) => w.match(/../g)!.reverse().join(''));
  if (words.length === 1)
    return words[0]!
      .match(/../g)!
      .map((b) => Number.parseInt(b, 16))
      .join('.');
  const bytes = words.join('').toLowerCase();
  if (bytes.startsWith('00000000000000000000ffff')) {
    return `::ffff:${bytes
      .slice(24)
      .match(/../g)!
      .map((b) => Number.parseInt(b, 16))
      .join('.')}`;
  }
  if (/^0{32}$/.test(bytes)) return '::';
  if (/^0{31}1$/.test(bytes)) return '::1';
  return bytes;
}

/** Every process in a process group (npm start runs detached: its group is its pid). */
function processGroup(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

const LOOPBACK = new Set(['127.0.0.1', '::ffff:127.0.0.1', '::1']);
const mode = (file: string) => statSync(file).mode & 0o777;

describe('npm start on this machine', () => {
  let run: NpmStart;
  let credentials: LocalStackCredentials;
  const home = mkdtempSync(path.join(tmpdir(), 'hookledger-exposure-'));
  const data = path.join(home, 'data');
  beforeAll(async () => {
    // A data folder left world-readable by an earlier version, with a file in it.
    mkdirSync(data, { recursive: true });
    chmodSync(data, 0o755);
    writeFileSync(path.join(data, 'stream-checkpoints.json'), '{}\n', { mode: 0o644 });
    chmodSync(path.join(data, 'stream-checkpoints.json'), 0o644);
    run = await npmStart(home, await freePort());
    credentials = await readStackCredentials(statePathOf(home));
  }, 120_000);
  afterAll(async () => {
    run?.signal('SIGKILL');
    await run?.exited;
    run?.ddb.destroy();
    rmSync(home, { recursive: true, force: true });
  });

  it('listens on loopback only (DynamoDB Local, the SQS emulator, the gateway, the console), and keeps its data folder 0700 and files 0600', async () => {
    const { state } = run;
    const sockets = listeningSockets(processGroup(run.child.pid!));
    const ports = sockets.map((s) => s.port);
    // The operator console too: its printed URL is on 127.0.0.1, and without the token it answers 403.
    const consoleUrl = new URL(/console URL\s+(\S+)/.exec(run.output())?.[1] ?? 'http://missing');
    expect(consoleUrl.hostname).toBe('127.0.0.1');
    expect(ports).toEqual(expect.arrayContaining([state.dynamo.port, state.sqs.port, state.gateway.port, Number(consoleUrl.port)]));
    expect(sockets.filter((s) => !LOOPBACK.has(s.address))).toEqual([]);
    expect((await fetch(`${consoleUrl.origin}/api/overview`)).status).toBe(403);

    // One webhook through the gateway: the stream poller then rewrites its checkpoints file.
    const body = JSON.stringify(platformEvent({ id: 'evt_01J8K7Z001' }));
    const res = await fetch(`${state.gateway.url}/hooks/platform`, {
      method: 'POST',
      headers: signedHeaders(body, { secret: await signingSecret(home), msgId: 'msg_exposure_1', at: Date.now() }),
      body,
    });
    expect(res.status).toBe(202);
    const checkpoints = path.join(data, 'stream-checkpoints.json');
    const deadline = Date.now() + 60_000;
    while (readFileSync(checkpoints, 'utf8') === '{}\n' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(readFileSync(checkpoints, 'utf8')).toContain('shardId');

    expect(mode(data)).toBe(0o700);
    expect(readdirSync(data).sort()).toEqual(expect.arrayContaining(['s3', 'shared-local-instance.db', 'stream-checkpoints.json']));
    // Every folder below it 0700 (the payload bucket's, s3/<bucket>/), every file 0600.
    const entries = readdirSync(data, { recursive: true, withFileTypes: true }).map((e) => path.join(e.parentPath, e.name));
    expect(entries).toContain(path.join(data, 's3', 'hookledger-payloads'));
    expect(Object.fromEntries(entries.map((f) => [path.relative(data, f), mode(f).toString(8)]))).toEqual(
      Object.fromEntries(entries.map((f) => [path.relative(data, f), statSync(f).isDirectory() ? '700' : '600'])),
    );
  });

  /** The same request a page's script would build, signed by the SDK (so only the named part is wrong). */
  const signedBy = (key: { accessKeyId: string; secretAccessKey: string }) => ({ region: 'us-east-1', credentials: key, maxAttempts: 1 });
  const OTHER_KEY = { accessKeyId: 'AKIAEXAMPLEOTHERKEY1', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
  const stackKey = () => ({ accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey });

  async function ledgerRow(eventId: string, consumerId: string): Promise<LedgerItem | undefined> {
    const rows = await scanAll<LedgerItem>(run.ddb, { TableName: run.state.tables.ledger, ConsistentRead: true });
    return rows.find((r) => r.eventId === eventId && r.consumerId === consumerId);
  }

  async function deliveredToBillingMeter(eventId: string): Promise<LedgerItem> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const row = await ledgerRow(eventId, 'billing-meter');
      if (row?.state === 'done') return row;
      if (Date.now() > deadline) throw new Error(`billing-meter did not deliver ${eventId} within 60 s (row: ${JSON.stringify(row)})`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it("refuses a cross-site form post to the admin endpoint's pause (403): billing-meter is not paused", async () => {
    const pauseUrl = `${run.state.adminUrl}/consumers/billing-meter/pause`;
    const fromPage = await formPost(pauseUrl, { confirm: 'yes' });
    expect(fromPage.status).toBe(403);
    expect(JSON.parse(fromPage.body)).toMatchObject({ error: 'forbidden_origin' });
    // A rebound host name, even with the token; and no token at all, even from this machine's own tools.
    const port = new URL(run.state.adminUrl!).port;
    const rebound = await rawRequest(pauseUrl, {
      method: 'POST',
      headers: { host: `evil.example:${port}`, authorization: `Bearer ${credentials.adminToken}` },
    });
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body)).toMatchObject({ error: 'forbidden_host' });
    const anonymous = await rawRequest(pauseUrl, { method: 'POST' });
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.body)).toMatchObject({ error: 'unauthorized' });
    const wrongToken = await rawRequest(`${run.state.adminUrl}/consumers`, { headers: { authorization: 'Bearer not-the-token' } });
    expect(wrongToken.status).toBe(401);

    const consumers = await rawRequest(`${run.state.adminUrl}/consumers`, {
      headers: { authorization: `Bearer ${credentials.adminToken}` },
    });
    expect(consumers.status).toBe(200);
    expect(JSON.parse(consumers.body)).toMatchObject({ paused: [] });
  });

  it("refuses SNS CreateTopic, Subscribe and Publish on the SQS emulator's port, unsigned from a page or signed with another key: no topic, no usage for tenant_666", async () => {
    const { sqs } = run.state;
    const billingArn = run.state.queues['billing-meter']!.arn;
    const forged = JSON.stringify({
      v: 2,
      source: 'platform',
      eventId: 'evt_01J8K7EV11',
      eventType: 'payment.succeeded',
      tenantId: 'tenant_666',
      keyId: 'key_42',
      receivedAt: Date.now(),
      consumerId: 'billing-meter',
      payload: { id: 'evt_01J8K7EV11', type: 'payment.succeeded', tenant_id: 'tenant_666', data: { amount: 4200, currency: 'eur' } },
    });
    const topicArn = 'arn:aws:sns:us-east-1:000000000000:hookledger-evil';
    const steps: Record<string, string>[] = [
      { Action: 'CreateTopic', Name: 'hookledger-evil' },
      {
        Action: 'Subscribe',
        TopicArn: topicArn,
        Protocol: 'sqs',
        Endpoint: billingArn,
        'Attributes.entry.1.key': 'RawMessageDelivery',
        'Attributes.entry.1.value': 'true',
      },
      { Action: 'Publish', TopicArn: topicArn, Message: forged },
    ];
    for (const step of steps) {
      const answer = await formPost(sqs.endpoint, step);
      expect({ action: step.Action, status: answer.status }).toEqual({ action: step.Action, status: 403 });
      expect(answer.body).toContain('<Code>AccessDenied</Code>');
    }
    // Without the page's Origin, from any process that does not hold this start's key.
    const unsigned = await rawRequest(sqs.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'Action=CreateTopic&Name=hookledger-evil',
    });
    expect(unsigned.status).toBe(403);
    expect(unsigned.body).toContain('<Code>MissingAuthenticationToken</Code>');
    const other = new SNSClient({ endpoint: sqs.endpoint, ...signedBy(OTHER_KEY) });
    const refused = await other.send(new CreateTopicCommand({ Name: 'hookledger-evil' })).catch((e: Error) => e);
    expect((refused as Error).name).toBe('InvalidClientTokenId');
    other.destroy();

    const operator = new SNSClient({ endpoint: sqs.endpoint, ...signedBy(stackKey()) });
    expect((await operator.send(new ListTopicsCommand({}))).Topics ?? []).toEqual([]);
    operator.destroy();
    // A genuine event for tenant_204 reaches billing-meter; nothing was ever charged to tenant_666.
    const body = JSON.stringify(platformEvent({ id: 'evt_01J8K7Z002' }));
    const res = await fetch(`${run.state.gateway.url}/hooks/platform`, {
      method: 'POST',
      headers: signedHeaders(body, { secret: await signingSecret(home), msgId: 'msg_exposure_2', at: Date.now() }),
      body,
    });
    expect(res.status).toBe(202);
    expect(await deliveredToBillingMeter('evt_01J8K7Z002')).toMatchObject({ tenantId: 'tenant_204', units: 5 });
    const rows = await scanAll<LedgerItem>(run.ddb, { TableName: run.state.tables.ledger, ConsistentRead: true });
    expect(rows.filter((r) => r.tenantId === 'tenant_666' || r.eventId === 'evt_01J8K7EV11')).toEqual([]);
  });

  it("refuses an S3 ListObjects whose Host names another server, unsigned or signed with the stack's own key (403): the payload bucket is not listed", async () => {
    const { port } = run.state.sqs;
    // DNS rebinding: a page at evil.example, resolved to 127.0.0.1, lists the bucket virtual-host style.
    const rebound = await rawRequest(`http://127.0.0.1:${port}/?list-type=2`, {
      headers: { host: `hookledger-payloads.evil.example:${port}` },
    });
    expect(rebound.status).toBe(403);
    expect(rebound.body).not.toContain('ListBucketResult');
    expect(rebound.body).toContain('<Code>AccessDenied</Code>');
    // Even signed with this start's key: a host name that is not this listener's own is refused.
    const toLoopback = new Agent({ lookup: (_host, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]) });
    const s3 = new S3Client({
      endpoint: `http://evil.example:${port}`,
      forcePathStyle: false,
      requestHandler: { httpAgent: toLoopback },
      ...signedBy(stackKey()),
    });
    const error = await s3.send(new ListObjectsV2Command({ Bucket: 'hookledger-payloads' })).catch((e: Error) => e);
    expect((error as Error).name).toBe('AccessDenied');
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    s3.destroy();
    toLoopback.destroy();
    // Its own name and key list it.
    const own = new S3Client({ endpoint: run.state.sqs.endpoint, forcePathStyle: true, ...signedBy(stackKey()) });
    expect((await own.send(new ListObjectsV2Command({ Bucket: 'hookledger-payloads' }))).$metadata.httpStatusCode).toBe(200);
    own.destroy();
  });

  it("refuses DynamoDB Local requests with an Origin (a page's fetch, even signed with the stack's key), a CORS preflight, and requests without the stack's key", async () => {
    const endpoint = run.state.dynamo.endpoint;
    const listTables = { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.ListTables' };
    const fromPage = await rawRequest(endpoint, {
      method: 'POST',
      headers: {
        ...listTables,
        origin: 'http://evil.example',
        authorization: 'AWS4-HMAC-SHA256 Credential=local/20261202/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00',
      },
      body: '{}',
    });
    expect(fromPage.status).toBe(403);
    expect(fromPage.body).not.toContain('TableNames');
    const preflight = await rawRequest(endpoint, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,x-amz-target',
      },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();

    const unsigned = await rawRequest(endpoint, { method: 'POST', headers: listTables, body: '{}' });
    expect(unsigned.status).toBe(403);
    expect(JSON.parse(unsigned.body)).toMatchObject({ __type: expect.stringContaining('MissingAuthenticationTokenException') });
    const other = new DynamoDBClient({ endpoint, ...signedBy(OTHER_KEY) });
    const refused = await other.send(new ListTablesCommand({})).catch((e: Error) => e);
    expect((refused as Error).name).toBe('UnrecognizedClientException');
    other.destroy();

    const withOrigin = new DynamoDBClient({ endpoint, ...signedBy(stackKey()) });
    withOrigin.middlewareStack.add(
      (next) => async (args) => {
        (args.request as { headers: Record<string, string> }).headers.origin = 'http://evil.example';
        return next(args);
      },
      { step: 'build', name: 'pageOrigin' },
    );
    const fromSignedPage = await withOrigin.send(new ListTablesCommand({})).catch((e: Error) => e);
    expect((fromSignedPage as Error).name).toBe('AccessDeniedException');
    withOrigin.destroy();
    const own = new DynamoDBClient({ endpoint, ...signedBy(stackKey()) });
    expect((await own.send(new ListTablesCommand({}))).TableNames).toEqual(
      expect.arrayContaining(['hookledger-events', 'hookledger-ledger']),
    );
    own.destroy();
  });

  it('the CLI still works with the per-start credential, kept 0600 beside the state file and never in it: status, pause and resume billing-meter', async () => {
    const status = await hookledger(home, ['status']);
    expect(status.stderr).toBe('');
    expect(status).toMatchObject({ code: 0 });
    expect(status.stdout).toMatch(/billing-meter\b.*\bno\b/);
    expect(status.stdout).toContain('requests by outcome since the local stack started: recorded 2');
    expect(await hookledger(home, ['pause', 'billing-meter'])).toMatchObject({ code: 0 });
    expect((await hookledger(home, ['status'])).stdout).toMatch(/billing-meter\b.*\byes\b/);
    expect(await hookledger(home, ['resume', 'billing-meter'])).toMatchObject({ code: 0 });

    const stateFile = statePathOf(home);
    const credentialsFile = run.state.credentialsFile!;
    expect(path.dirname(credentialsFile)).toBe(home);
    expect(mode(credentialsFile)).toBe(0o600);
    expect(readFileSync(credentialsFile, 'utf8')).toContain(credentials.secretAccessKey);
    const stateText = readFileSync(stateFile, 'utf8');
    for (const secret of [credentials.secretAccessKey, credentials.adminToken]) expect(stateText).not.toContain(secret);
  });
});
