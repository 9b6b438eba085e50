/**
 * The X-Ray side of tracing (lambdas/shared/xray.ts through tracing.ts) in a process set up as Lambda
 * sets up a function with active tracing: AWS_EXECUTION_ENV, the invocation's _X_AMZN_TRACE_ID and
 * the X-Ray daemon's address, here a UDP socket of the test that reads the segment documents the
 * X-Ray SDK sends. A fresh process: the X-Ray SDK reads its Lambda mode at import.
 */
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait';

const ROOT = path.resolve(import.meta.dirname, '../..');
const INVOCATION_ROOT = '1-674d8a41-8b1c2d3e4f5a6b7c8d9e0f1a';
const INTAKE_ROOT = '1-674d8a40-3f2b9c1e7a6d5e4f3c2b1a09';

let daemon: dgram.Socket;
const documents: Record<string, unknown>[] = [];
beforeAll(async () => {
  daemon = dgram.createSocket('udp4');
  // Each datagram: the X-Ray header line, then one segment document.
  daemon.on('message', (m) => documents.push(JSON.parse(m.toString('utf8').split('\n')[1] ?? '{}') as Record<string, unknown>));
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
});
afterAll(() => daemon?.close());

/** Runs `script` (an ES module body; `tracing` is lambdas/shared/tracing.ts) in a process set up as a traced Lambda; its stdout. */
async function inTracedLambda(script: string): Promise<string> {
  const tracing = pathToFileURL(path.join(ROOT, 'lambdas/shared/tracing.ts')).href;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', `const tracing = await import('${tracing}');\n${script}`],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        AWS_REGION: 'us-east-1',
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
        AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
        LAMBDA_TASK_ROOT: ROOT,
        AWS_LAMBDA_FUNCTION_NAME: 'hookledger-ingest',
        _X_AMZN_TRACE_ID: `Root=${INVOCATION_ROOT};Parent=1111111111111111;Sampled=1`,
        AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${(daemon.address() as { port: number }).port}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`the traced process exited ${code}: ${err.slice(-1500)}`);
  return out.trim();
}

describe('a traced invocation where X-Ray runs', () => {
  it("runs the handler in its own subsegment of the invocation's trace, annotated, and hands on a header naming it", async () => {
    const out = await inTracedLambda(`
      const t = tracing.handlerTracing({ tracing: 'xray' }, 'hookledger-ingest', []);
      const handler = t.wrap(async () => { t.annotate({ event_id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204' }); return t.header(); });
      console.log(await handler({}, {}));`);
    const handler = await waitFor("the handler's subsegment", () => documents.find((d) => d.name === '## hookledger-ingest'));
    expect(handler).toMatchObject({
      type: 'subsegment',
      trace_id: INVOCATION_ROOT,
      parent_id: '1111111111111111',
      annotations: { ColdStart: true, Service: 'hookledger-ingest', event_id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204' },
    });
    // What intake writes on the receipt: this trace, this subsegment as the parent of the next hop.
    expect(out).toBe(`Root=${INVOCATION_ROOT};Parent=${handler.id};Sampled=1`);
  });

  it("gives each event of a batch a subsegment annotated with its ids and intake's trace", async () => {
    await inTracedLambda(`
      const t = tracing.handlerTracing({ tracing: 'xray' }, 'hookledger-fanout', []);
      const handler = t.wrap(async () => ({ batchItemFailures: [] }), () => [
        { event_id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204', intake_trace_id: '${INTAKE_ROOT}' },
        { event_id: 'evt_01J8K7M2Q5', tenant_id: 'tenant_311' },
      ]);
      await handler({}, {});`);
    const fanout = await waitFor("the fan-out's subsegment", () => documents.find((d) => d.name === '## hookledger-fanout'));
    expect(documents.filter((d) => String(d.name).startsWith('event ')).map((d) => [d.name, d.parent_id, d.annotations])).toEqual([
      ['event evt_01J8K7M2Q4', fanout.id, { event_id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204', intake_trace_id: INTAKE_ROOT }],
      ['event evt_01J8K7M2Q5', fanout.id, { event_id: 'evt_01J8K7M2Q5', tenant_id: 'tenant_311' }],
    ]);
  });
});
