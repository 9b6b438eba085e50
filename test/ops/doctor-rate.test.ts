/**
 * `hookledger doctor --rate <n>/s`: the capacity rows (ops/capacity-check.ts) beside the deployment's
 * checks, on a fresh account (mocked AWS clients: no stack yet, bootstrapped, the default concurrency).
 * The rows themselves are computed offline from bench/results.json and bench/prices.json.
 */
import { PassThrough } from 'node:stream';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetAccountSettingsCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../bin/cli';
import defaultConfig from '../../hookledger.config';
import type { DoctorReport } from '../../ops/doctor';

const cfn = mockClient(CloudFormationClient);
const ssm = mockClient(SSMClient);
const lambda = mockClient(LambdaClient);
const REGION = 'eu-west-1';

beforeEach(() => {
  cfn.on(DescribeStacksCommand).rejects(Object.assign(new Error('Stack with id Hookledger does not exist'), { name: 'ValidationError' }));
  ssm.on(GetParameterCommand).resolves({ Parameter: { Value: '27' } });
  lambda.on(GetAccountSettingsCommand).resolves({ AccountLimit: { ConcurrentExecutions: 1000, UnreservedConcurrentExecutions: 1000 } });
});
afterEach(() => {
  for (const m of [cfn, ssm, lambda]) m.reset();
});

async function doctor(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await main(
    ['doctor', '--region', REGION, ...args],
    { stdout, stderr, stdin: new PassThrough(), env: { USER: 'doctor-rate-test' } },
    defaultConfig,
  );
  return { code, out, err };
}

describe('hookledger doctor --rate', () => {
  it("warns that the shipped configuration cannot carry 10,000/s, naming API Gateway's account quota and the consumers' maxConcurrency, and still exits 0 (warnings are not problems)", async () => {
    const r = await doctor(['--rate', '10000/s', '--json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as DoctorReport;
    expect(report.problems).toBe(0);
    const warned = report.checks.filter((c) => c.status === 'warning').map((c) => c.id);
    expect(warned).toEqual([
      'rate:consumer:billing-meter',
      'rate:consumer:audit-writer',
      'rate:consumer:risk-evaluator',
      'rate:table:ledger',
      'rate:apiGateway',
      'rate:burst',
    ]);
    expect(report.checks.find((c) => c.id === 'rate:apiGateway')?.fix).toContain("API Gateway's throttle quota per account and Region");
  });

  it('says 100/s is carried, in the human report', async () => {
    const r = await doctor(['--rate', '100/s']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ok {7}rate {21}carries 100\/s steady: the most used limit is consumer billing-meter/m);
    expect(r.out).not.toMatch(/^WARN {3}rate:(api|consumer|table)/m);
  });

  it('leaves the capacity rows out without --rate, and refuses a rate that is not one (exit 2)', async () => {
    const plain = JSON.parse((await doctor(['--json'])).out) as DoctorReport;
    expect(plain.checks.some((c) => c.id.startsWith('rate'))).toBe(false);
    const bad = await doctor(['--rate', 'fast']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--rate must be webhooks per second, a number above 0 like 50/s (got "fast")');
  });
});
