/**
 * Section 5c: what `tracing: 'xray'` costs, against the same function with tracing off. Intake and
 * the fan-out are bundled twice as lib/constructs/hookledger-function.ts bundles them (handlerBuildOptions,
 * the configuration inlined): once from the shipped configuration (tracing off: no tracer code,
 * core/bundled-features.ts) and once with `tracing: 'xray'`. Each build's sizes (what a cold start
 * loads; everything, chunks loaded later included), then fresh `node` processes run round robin,
 * each set up as Lambda sets up a traced function (AWS_EXECUTION_ENV, a sampled _X_AMZN_TRACE_ID, the
 * X-Ray daemon's address: a UDP socket of this process that counts the segment documents sent):
 * the module load (timed around `await import`), the first invocation (the traced bundle loads the
 * Tracer and the X-Ray SDK then: lambdas/shared/tracing.ts), and the median of the next invocations.
 *
 * The invocations touch nothing: intake answers a request to no configured source (404), the fan-out
 * a batch of 10 records of an event's acknowledgement (nothing to send). So the per-request figure is
 * tracing's own work (a handler subsegment, one per event, their annotations, each sent over UDP),
 * without the subsegment each AWS SDK call adds on a real request, and with a daemon on loopback as
 * Lambda's is; X-Ray's own price per trace is not in it.
 *
 * `npx tsx bench/tracing.ts` runs it alone and merges `tracing` into bench/results.json.
 */

import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { PROJECT_ROOT as ROOT } from '../core/paths';
import baseConfig from '../hookledger.config';
import { bundleApart, bundledDefines, coldStartOutputs, handlerBuildOptions } from '../lib/constructs/hookledger-function';
import { loaderNode } from './bundles';
import { BenchRunError, runToExit } from './errors';
import { fmt, mergeResults, printNotes, printTable } from './report';
import { median, round } from './stats';

export const TRACING_PLAN = {
  /** Fresh processes per function and mode. */
  processes: 15,
  /** Invocations after the first in each process; the per-request figure is their median. */
  invocations: 200,
  /** Records in each fan-out batch. */
  batch: 10,
};

const DIR = path.join(ROOT, 'bench', 'bundles', 'tracing');
const MODES = ['off', 'xray'] as const;
type Mode = (typeof MODES)[number];

/** The functions measured: entry, the event each invocation gets (a JS expression), their environment. */
const FUNCTIONS = {
  ingest: {
    entry: 'lambdas/ingest/handler.ts',
    event:
      "({ version: '2.0', rawPath: '/hooks/none', rawQueryString: '', headers: { 'content-type': 'application/json' }, body: '{}', " +
      "isBase64Encoded: false, pathParameters: { source: 'none' }, requestContext: { http: { method: 'POST', path: '/hooks/none' }, requestId: 'r' } })",
    expect: 'r.statusCode === 404',
  },
  fanout: {
    entry: 'lambdas/fanout/handler.ts',
    event:
      `({ Records: Array.from({ length: ${TRACING_PLAN.batch} }, (_, i) => ({ eventName: 'MODIFY', dynamodb: { SequenceNumber: String(i), ` +
      "NewImage: { kind: { S: 'event' }, eventId: { S: 'evt_bench_' + i }, tenantId: { S: 'tenant_204' }, " +
      "traceHeader: { S: 'Root=1-674d8a40-3f2b9c1e7a6d5e4f3c2b1a09;Parent=53995c3f42cd8ad8;Sampled=1' } } } })) })",
    expect: 'r.batchItemFailures.length === 0',
  },
} as const;
type Fn = keyof typeof FUNCTIONS;

/** The child: load, first invocation, then the next ones; one JSON line of times (ms). */
const runner = (fn: Fn) => `
const t0 = performance.now();
const { handler } = await import(process.argv[1]);
const loadMs = performance.now() - t0;
const event = () => ${FUNCTIONS[fn].event};
const context = { awsRequestId: 'req-1', getRemainingTimeInMillis: () => 10000 };
const call = async () => {
  const t = performance.now();
  const r = await handler(event(), context);
  if (!(${FUNCTIONS[fn].expect})) { console.error('unexpected answer ' + JSON.stringify(r)); process.exit(1); }
  return performance.now() - t;
};
const firstMs = await call();
const next = [];
for (let i = 0; i < ${TRACING_PLAN.invocations}; i++) next.push(await call());
next.sort((a, b) => a - b);
process.stdout.write('\\nTIMES ' + JSON.stringify({ loadMs, firstMs, requestMs: next[Math.floor(next.length / 2)] }) + '\\n');
`;

interface Times {
  readonly loadMs: number;
  readonly firstMs: number;
  readonly requestMs: number;
}

export interface TracingRow {
  readonly fn: Fn;
  readonly mode: Mode;
  readonly bytesAtColdStart: number;
  readonly bytesTotal: number;
  readonly loadMs: number;
  readonly firstInvocationMs: number;
  readonly requestMs: number;
}

export interface TracingResult {
  readonly rows: readonly TracingRow[];
  /** Segment documents the traced processes sent to the stand-in daemon (proof that tracing was on). */
  readonly segmentsSent: number;
}

/** One build of `entry` for `mode` into DIR/<fn>-<mode>: its index.mjs and sizes. */
async function bundleFor(fn: Fn, mode: Mode): Promise<{ file: string; bytesAtColdStart: number; bytesTotal: number }> {
  const outdir = path.join(DIR, `${fn}-${mode}`);
  mkdirSync(outdir, { recursive: true });
  const { entry } = FUNCTIONS[fn];
  const define = bundledDefines(JSON.stringify({ ...baseConfig, tracing: mode }));
  const result = await build({ ...handlerBuildOptions(define, entry), entryPoints: [path.join(ROOT, entry)], outdir, metafile: true });
  const apart = bundleApart(result.metafile, outdir).reduce((sum, f) => sum + statSync(f).size, 0);
  const atStart = coldStartOutputs(result.metafile);
  const mjs = Object.entries(result.metafile.outputs).filter(([f]) => f.endsWith('.mjs'));
  return {
    file: path.join(outdir, 'index.mjs'),
    bytesAtColdStart: mjs.filter(([f]) => atStart.has(f)).reduce((sum, [, o]) => sum + o.bytes, 0),
    bytesTotal: mjs.reduce((sum, [, o]) => sum + o.bytes, 0) + apart,
  };
}

/** The environment of a traced Lambda, the daemon on `port`; the same for both modes (off ignores it). */
function tracedLambdaEnv(fn: Fn, port: number): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'not-a-secret',
    AWS_LAMBDA_FUNCTION_NAME: `hookledger-${fn}`,
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    LAMBDA_TASK_ROOT: DIR,
    _X_AMZN_TRACE_ID: 'Root=1-674d8a41-8b1c2d3e4f5a6b7c8d9e0f1a;Parent=1111111111111111;Sampled=1',
    AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${port}`,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    POWERTOOLS_SERVICE_NAME: `hookledger-${fn}`,
    EVENTS_TABLE: 'hookledger-events',
    STACK_NAME: 'hookledger',
    PAYLOAD_BUCKET: 'hookledger-payloads',
    SOURCE_SECRETS: JSON.stringify({ platform: 'hookledger/platform' }),
    PAYLOAD_HASH_KEY_SECRET: 'hookledger/payload-hash-key',
    QUEUE_URLS: '{}',
  };
}

/** One fresh process: its load, first invocation and median next invocation (ms). Asynchronous, so the daemon's socket is read meanwhile. */
async function timeOnce(fn: Fn, file: string, env: Record<string, string>): Promise<Times> {
  const child = spawn(loaderNode().path, ['--input-type=module', '-e', runner(fn), pathToFileURL(file).href], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString('utf8')).slice(-1500)));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const line = out.split('\n').find((l) => l.startsWith('TIMES '));
  if (code !== 0 || !line) throw new BenchRunError(`${fn}: the timed process failed (exit ${code}): ${err}`);
  return JSON.parse(line.slice('TIMES '.length)) as Times;
}

/** Both modes of both functions: built, then TRACING_PLAN.processes fresh processes each, round robin. */
export async function measureTracing(): Promise<TracingResult> {
  rmSync(DIR, { recursive: true, force: true });
  const daemon = dgram.createSocket('udp4');
  let segmentsSent = 0;
  daemon.on('message', () => segmentsSent++);
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  try {
    const port = (daemon.address() as { port: number }).port;
    const targets = [];
    for (const fn of Object.keys(FUNCTIONS) as Fn[]) {
      for (const mode of MODES) targets.push({ fn, mode, ...(await bundleFor(fn, mode)), runs: [] as Times[] });
    }
    for (let run = 0; run < TRACING_PLAN.processes; run++) {
      for (let i = 0; i < targets.length; i++) {
        const t = targets[(run + i) % targets.length]!;
        t.runs.push(await timeOnce(t.fn, t.file, tracedLambdaEnv(t.fn, port)));
      }
    }
    // The last datagrams read before the count is taken.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const rows = targets.map(({ fn, mode, bytesAtColdStart, bytesTotal, runs }) => ({
      fn,
      mode,
      bytesAtColdStart,
      bytesTotal,
      loadMs: round(median(runs.map((r) => r.loadMs))),
      firstInvocationMs: round(median(runs.map((r) => r.firstMs))),
      requestMs: round(median(runs.map((r) => r.requestMs)) * 1000) / 1000,
    }));
    return { rows, segmentsSent };
  } finally {
    daemon.close();
  }
}

export function printTracing(result: TracingResult): void {
  printTable(
    "5c. Tracing on (`tracing: 'xray'`) against off, same function",
    ['function', 'tracing', 'cold start bytes', 'all bytes', 'load', 'first invocation', 'per request (median)'],
    result.rows.map((r) => [
      r.fn,
      r.mode,
      fmt.kb(r.bytesAtColdStart),
      fmt.kb(r.bytesTotal),
      fmt.ms(r.loadMs),
      fmt.ms(r.firstInvocationMs),
      `${(r.requestMs * 1000).toFixed(0)} µs`,
    ]),
  );
  printNotes([
    `medians of ${TRACING_PLAN.processes} fresh processes per row (node ${loaderNode().version}), set up as a traced Lambda; per request: the median of ${TRACING_PLAN.invocations} invocations after the first`,
    `ingest: a request to no configured source (404, no AWS call); fanout: ${TRACING_PLAN.batch} records with nothing to send (one subsegment per event traced); a real request adds one subsegment per AWS SDK call`,
    `${result.segmentsSent} segment documents reached the stand-in X-Ray daemon (UDP on loopback, as Lambda's daemon is)`,
  ]);
}

/** Section 5c as bench/run.ts and `npx tsx bench/tracing.ts` run it: measure, print, merge `tracing` into bench/results.json. */
export async function tracingSection(): Promise<TracingResult> {
  console.log(`5c. bundling intake and the fan-out with tracing off and on; ${TRACING_PLAN.processes} fresh processes each...`);
  const result = await measureTracing();
  if (result.segmentsSent === 0) throw new BenchRunError('no segment reached the stand-in X-Ray daemon: the traced bundles did not trace');
  printTracing(result);
  mergeResults({ tracing: { plan: TRACING_PLAN, node: loaderNode().version, ...result } });
  console.log('merged tracing into bench/results.json');
  return result;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runToExit(tracingSection);
}
