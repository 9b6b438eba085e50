/**
 * Section 3: intake latency and throughput through the HTTP gateway (the ingest path only: the caller
 * stops the pipeline first), driven by autocannon from a second process; and the emulator's floor,
 * the same two conditional PutItems per webhook written straight to DynamoDB Local with the SDK.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { payloadHmac } from '../adapters/payload-hash';
import type { EventItem, PayloadItem } from '../core/model';
import { eventKey, payloadKey } from '../core/model';
import { PROJECT_ROOT as ROOT } from '../core/paths';
import type { LocalStack } from '../local/stack';
import { localDocumentClient } from '../local/wiring';
import { BenchRunError } from './errors';
import { paymentEvent, signedPayments } from './payload';
import { SOURCE } from './units';

export interface LoadResult {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly requests: number;
  readonly seconds: number;
  readonly rps: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCodes: Record<string, number>;
  readonly bodiesUsed: number;
}

export async function intakeLoad(
  stack: LocalStack,
  secret: string,
  runId: string,
  options: { requests: number; connections: number },
): Promise<LoadResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hookledger-bench-'));
  const jobFile = path.join(dir, 'job.json');
  try {
    // Signed just before the load: Standard Webhooks rejects timestamps more than 300 s old.
    const requests = signedPayments(secret, runId, options.requests + 4 * options.connections);
    writeFileSync(
      jobFile,
      JSON.stringify({ url: stack.webhookUrl(SOURCE), connections: options.connections, amount: options.requests, requests }),
    );
    const out = await runChild(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'load.ts'), jobFile], 300_000);
    const result = JSON.parse(out.trim().split('\n').pop() ?? '{}') as LoadResult;
    const codes = Object.keys(result.statusCodes);
    if (result.errors > 0 || result.timeouts > 0 || codes.some((c) => c !== '202') || result.bodiesUsed > requests.length) {
      throw new BenchRunError(
        `intake load was not clean (every request must be a distinct first delivery answered 202): ${JSON.stringify(result)}`,
      );
    }
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface FloorResult {
  readonly webhooks: number;
  readonly seconds: number;
  readonly rps: number;
  readonly putsPerSecond: number;
}

/** What Receipts.recordEvent writes for one webhook: the payload item, then the receipt, both conditional. */
/** The floor's writes only need a hash of the same size as intake's, not intake's key. */
const HASH_KEY = randomBytes(32);

export async function dynamoFloor(
  stack: LocalStack,
  runId: string,
  options: { webhooks: number; connections: number; consumers: string[] },
): Promise<FloorResult> {
  const ddb = localDocumentClient(stack.endpoints.dynamodb);
  const table = stack.resources.tables.events;
  const now = Date.now();
  const items = Array.from({ length: options.webhooks }, (_, i) => {
    const { eventId, body } = paymentEvent(i, runId);
    const parsed = JSON.parse(body) as { type: string; tenant_id: string; key_id: string };
    const hmac = payloadHmac(HASH_KEY, Buffer.from(body));
    const payload: PayloadItem = {
      pk: payloadKey(SOURCE, eventId, hmac),
      kind: 'payload',
      encoding: 'gzip',
      body: gzipSync(body),
      expiresAt: Math.floor(now / 1000) + 30 * 86_400,
    };
    const receipt: EventItem = {
      pk: eventKey(SOURCE, eventId),
      kind: 'event',
      source: SOURCE,
      eventId,
      eventType: parsed.type,
      tenantId: parsed.tenant_id,
      keyId: parsed.key_id,
      receivedAt: now,
      consumers: options.consumers,
      payloadHmac: hmac,
      payloadBytes: body.length,
      secretVersion: 'current',
      payloadExpiresAt: now + 30 * 86_400_000,
    };
    return [payload, receipt] as const;
  });
  const put = (item: object) =>
    ddb.send(
      new PutCommand({
        TableName: table,
        Item: item as Record<string, unknown>,
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (next < items.length) {
        const [payload, receipt] = items[next++]!;
        await put(payload);
        await put(receipt);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  ddb.destroy();
  return { webhooks: items.length, seconds, rps: items.length / seconds, putsPerSecond: (2 * items.length) / seconds };
}

export interface IntakeResult {
  readonly load: LoadResult;
  /** Webhooks per second over both floor runs. */
  readonly floorRps: number;
  readonly floorRuns: FloorResult[];
}

/**
 * DynamoDB Local's speed drifts by tens of percent on 2 cores (JIT, GC, table growth), so the floor
 * is measured on both sides of the intake run, after a short warm-up, and pooled.
 */
export async function intakeAgainstFloor(
  stack: LocalStack,
  secret: string,
  runId: string,
  options: { requests: number; connections: number; consumers: string[] },
): Promise<IntakeResult> {
  const floorOptions = { webhooks: Math.ceil(options.requests / 2), connections: options.connections, consumers: options.consumers };
  await dynamoFloor(stack, `${runId}-floor0`, { ...floorOptions, webhooks: 300 });
  const before = await dynamoFloor(stack, `${runId}-floor1`, floorOptions);
  const load = await intakeLoad(stack, secret, `${runId}-intake`, options);
  const after = await dynamoFloor(stack, `${runId}-floor2`, floorOptions);
  const floorRuns = [before, after];
  const floorRps = floorRuns.reduce((s, r) => s + r.webhooks, 0) / floorRuns.reduce((s, r) => s + r.seconds, 0);
  return { load, floorRps, floorRuns };
}

function runChild(command: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new BenchRunError(`${path.basename(args[2] ?? command)} exited with ${code ?? signal}: ${stderr.slice(-2000)}`));
    });
  });
}
