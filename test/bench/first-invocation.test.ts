/**
 * The first-invocation runner (bench/first-invocation.ts) on tiny handler modules in fresh node
 * processes: a figure is returned only for a first request that answered as intended and left its
 * row; an error path (401, 503, a throw, a row not written) fails the bench instead of being timed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectHttp202, FirstInvocationError, firstInvocation } from '../../bench/first-invocation';

let dir: string;
const env = { PATH: process.env.PATH ?? '', HOOKLEDGER_TEST_TENANT: 'tenant_204' };

function handlerFile(name: string, body: string): string {
  const file = path.join(dir, `${name}.mjs`);
  writeFileSync(file, body);
  return file;
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'hookledger-first-invocation-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('first invocation in a fresh process (bench/first-invocation.ts)', () => {
  it('times load and first request of a handler that answered 202 and wrote its row, in its own environment', async () => {
    const file = handlerFile(
      'accepts',
      'export const handler = async (event) => ({ statusCode: 202, body: JSON.stringify({ id: event.id, tenant: process.env.HOOKLEDGER_TEST_TENANT }) });',
    );
    const written: string[] = [];
    const run = await firstInvocation(
      'ingest',
      { file, env },
      (invoke) => invoke({ id: 'evt_01J8K7M2Q4' }),
      async (answer) => {
        expectHttp202('ingest', answer);
        written.push((answer as { body: string }).body);
      },
    );
    expect(written).toEqual([JSON.stringify({ id: 'evt_01J8K7M2Q4', tenant: 'tenant_204' })]);
    expect(run.loadMs).toBeGreaterThan(0);
    expect(run.firstRequestMs).toBeGreaterThanOrEqual(0);
    expect(run.totalMs).toBeCloseTo(run.loadMs + run.firstRequestMs, 9);
  });

  it('refuses to time a first request answered 401 (an unverified webhook measures nothing)', async () => {
    const file = handlerFile(
      'unverified',
      'export const handler = async () => ({ statusCode: 401, body: \'{"error":"invalid_signature"}\' });',
    );
    const verified: unknown[] = [];
    const attempt = firstInvocation(
      'ingest',
      { file, env },
      (invoke) => invoke({ id: 'evt_01J8K7M2Q4' }),
      async (answer) => {
        expectHttp202('ingest', answer);
        verified.push(answer);
      },
    );
    await expect(attempt).rejects.toThrow(FirstInvocationError);
    await expect(attempt).rejects.toThrow(/ingest: the first request answered 401, not 202: \{"error":"invalid_signature"\}/);
    expect(verified).toEqual([]);
  });

  it('refuses a 202 whose row is not in the table (the check after the answer fails the run)', async () => {
    const file = handlerFile('no-row', 'export const handler = async () => ({ statusCode: 202 });');
    const attempt = firstInvocation(
      'floor',
      { file, env },
      (invoke) => invoke({ body: 'floor-1' }),
      async (answer) => {
        expectHttp202('floor', answer);
        throw new FirstInvocationError('floor: answered 202 but wrote no item pk=3f0a in hookledger-bench-floor');
      },
    );
    await expect(attempt).rejects.toThrow('floor: answered 202 but wrote no item pk=3f0a in hookledger-bench-floor');
  });

  it('reports a handler that throws on its first request by the error name and message, not as a time', async () => {
    const file = handlerFile(
      'throws',
      "export const handler = async () => { const e = new Error('Requested resource not found'); e.name = 'ResourceNotFoundException'; throw e; };",
    );
    const attempt = firstInvocation(
      'billing-meter',
      { file, env },
      (invoke) => invoke({ Records: [] }),
      async () => undefined,
    );
    await expect(attempt).rejects.toThrow(
      'billing-meter: the first invocation threw ResourceNotFoundException: Requested resource not found',
    );
  });

  it('reports a bundle that fails at import (its cold start) with the process output', async () => {
    const file = handlerFile('cold-start-fails', "throw new Error('environment variable EVENTS_TABLE is not set');");
    const attempt = firstInvocation(
      'fanout',
      { file, env },
      (invoke) => invoke({ Records: [] }),
      async () => undefined,
    );
    await expect(attempt).rejects.toThrow(/fanout: .*environment variable EVENTS_TABLE is not set/s);
  });

  it('refuses a run whose trigger never invoked the handler (nothing to time)', async () => {
    const file = handlerFile('idle', 'export const handler = async () => ({ statusCode: 202 });');
    const attempt = firstInvocation(
      'reconcile',
      { file, env },
      async () => 'no event',
      async () => undefined,
    );
    await expect(attempt).rejects.toThrow('reconcile: the handler was invoked 0 times, expected once');
  });
});
