/**
 * One assembly function in its own process (local/assembly/functions.ts + runner.mjs), on bundles
 * written here: what a cold start that cannot find its handler says (Lambda's own error types), and
 * the invocations a sandbox runs, fails, times out and exits.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { HookledgerError } from '../../../core/errors';
import { FunctionError, type LocalFunction, startLocalFunction } from '../../../local/assembly/functions';

const folders: string[] = [];
const started: LocalFunction[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((fn) => fn.stop()));
});

afterAll(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

/** A bundle folder holding `files` (name to source). */
function bundle(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hl-fn-'));
  folders.push(dir);
  for (const [name, source] of Object.entries(files)) writeFileSync(path.join(dir, name), source);
  return dir;
}

function start(codeDir: string, overrides: { handler?: string; timeoutSeconds?: number } = {}): LocalFunction {
  const fn = startLocalFunction({
    logicalId: 'BillingMeterWorker',
    functionName: 'hookledger-billing-meter',
    functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:hookledger-billing-meter',
    codeDir,
    handler: overrides.handler ?? 'index.handler',
    environment: { AWS_LAMBDA_FUNCTION_NAME: 'hookledger-billing-meter', TENANT: 'tenant_204' },
    timeoutSeconds: overrides.timeoutSeconds ?? 10,
    memorySize: 128,
  });
  started.push(fn);
  return fn;
}

describe('a cold start that cannot find its handler', () => {
  it('fails ready() with FunctionError Runtime.ImportModuleError when the folder has no index.mjs, .js or .cjs', async () => {
    const dir = bundle({ 'other.mjs': 'export const handler = async () => 1;' });
    const ready = start(dir).ready();
    await expect(ready).rejects.toBeInstanceOf(FunctionError);
    await expect(ready).rejects.toBeInstanceOf(HookledgerError);
    await expect(ready).rejects.toMatchObject({ errorName: 'Runtime.ImportModuleError' });
    await expect(ready).rejects.toThrow(
      `BillingMeterWorker failed at cold start: Runtime.ImportModuleError: no index.mjs, .js or .cjs in ${dir}`,
    );
    await expect(ready).rejects.toThrow('synthesize the assembly again');
  });

  it('fails ready() with FunctionError Runtime.HandlerNotFound when the module does not export the handler', async () => {
    const dir = bundle({ 'index.mjs': 'export const handle = async () => 1;' });
    const ready = start(dir).ready();
    await expect(ready).rejects.toMatchObject({ name: 'FunctionError', errorName: 'Runtime.HandlerNotFound' });
    await expect(ready).rejects.toThrow(`${path.join(dir, 'index.mjs')} does not export a function named "handler"`);
  });

  it("fails ready() with the module scope's own error when the bundle throws at cold start", async () => {
    const dir = bundle({
      'index.mjs': "class ConfigMissing extends Error { name = 'ConfigMissing'; }\nthrow new ConfigMissing('no TABLE');",
    });
    await expect(start(dir).ready()).rejects.toMatchObject({
      errorName: 'ConfigMissing',
      message: 'BillingMeterWorker failed at cold start: ConfigMissing: no TABLE',
    });
  });
});

describe('invocations', () => {
  const handlers = bundle({
    'index.mjs': [
      'export const handler = async (event, context) => {',
      "  if (event.kind === 'fail') { const e = new Error('card declined'); e.name = 'PaymentError'; throw e; }",
      "  if (event.kind === 'throw-string') throw 'evt_01J8K7M2Q4 refused';",
      "  if (event.kind === 'hang') return new Promise(() => {});",
      "  if (event.kind === 'exit') process.exit(3);",
      '  return { eventId: event.eventId, tenant: process.env.TENANT, functionName: context.functionName, pid: process.pid };',
      '};',
    ].join('\n'),
  });

  it("returns the handler's result, run with the template's environment and a Lambda context", async () => {
    const fn = start(handlers);
    await fn.ready();
    expect(await fn.invoke({ eventId: 'evt_01J8K7M2Q4' })).toMatchObject({
      eventId: 'evt_01J8K7M2Q4',
      tenant: 'tenant_204',
      functionName: 'hookledger-billing-meter',
    });
  });

  it('rejects with a FunctionError named as the thrown error, and with Error for a thrown string', async () => {
    const fn = start(handlers);
    await expect(fn.invoke({ kind: 'fail' })).rejects.toMatchObject({ errorName: 'PaymentError', message: 'PaymentError: card declined' });
    await expect(fn.invoke({ kind: 'throw-string' })).rejects.toMatchObject({
      errorName: 'Error',
      message: 'Error: evt_01J8K7M2Q4 refused',
    });
  });

  it('times out as Sandbox.Timedout, and the next invocation starts a new sandbox', async () => {
    const fn = start(handlers, { timeoutSeconds: 1 });
    const first = (await fn.invoke<{ pid: number }>({ eventId: 'evt_01J8K7M2Q4' })).pid;
    await expect(fn.invoke({ kind: 'hang' })).rejects.toMatchObject({
      errorName: 'Sandbox.Timedout',
      message: 'Task timed out after 1.00 seconds',
    });
    const second = (await fn.invoke<{ pid: number }>({ eventId: 'evt_01J8K7M2Q4' })).pid;
    expect(second).not.toBe(first);
  });

  it('rejects an invocation whose process exits with Runtime.ExitError, and refuses invocations once stopped', async () => {
    const fn = start(handlers);
    await expect(fn.invoke({ kind: 'exit' })).rejects.toMatchObject({
      errorName: 'Runtime.ExitError',
      message: 'BillingMeterWorker exited (3)',
    });
    await fn.stop();
    await expect(fn.invoke({ eventId: 'evt_01J8K7M2Q4' })).rejects.toMatchObject({ errorName: 'Stopped' });
  });
});
