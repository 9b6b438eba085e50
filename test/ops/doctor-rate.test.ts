/**
 * `hookledger doctor --rate <n>/s`: the capacity rows (ops/capacity-check.ts) beside the deployment's
 * checks, on a fresh account (mocked AWS clients: no stack yet, bootstrapped, the default concurrency).
 * The rows themselves are computed offline from bench/results.json and bench/prices.json, so they are
 * printed without an AWS region or credentials too, the deployment's checks said to be skipped.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetAccountSettingsCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
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

async function doctor(
  args: string[],
  region: readonly string[] = ['--region', REGION],
): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await main(
    ['doctor', ...region, ...args],
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
    expect(r.out).not.toMatch(/^WARN {5}rate:(api|consumer|table)/m);
  });

  it('leaves the capacity rows out without --rate, and refuses a rate that is not one (exit 2)', async () => {
    const plain = JSON.parse((await doctor(['--json'])).out) as DoctorReport;
    expect(plain.checks.some((c) => c.id.startsWith('rate'))).toBe(false);
    const bad = await doctor(['--rate', 'fast']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--rate must be webhooks per second, a number above 0 like 50/s (got "fast")');
  });
});

describe('hookledger doctor --rate with no AWS region or credentials', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'doctor-rate-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  /** No region anywhere the SDK looks: not in the environment, no shared config file. */
  function noRegion(): void {
    vi.stubEnv('AWS_REGION', undefined);
    vi.stubEnv('AWS_DEFAULT_REGION', undefined);
    vi.stubEnv('AWS_PROFILE', undefined);
    vi.stubEnv('AWS_CONFIG_FILE', path.join(dir, 'no-config'));
    vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', path.join(dir, 'no-credentials'));
  }
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('prints the capacity rows for 10,000/s without a region, says the deployment checks were skipped and why, and exits 0 (warnings only)', async () => {
    noRegion();
    const r = await doctor(['--rate', '10000/s'], []);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^hookledger doctor: stack Hookledger \(no AWS region\)$/m);
    expect(r.out).toMatch(/^WARN {5}rate:apiGateway +cannot carry 10000\/s steady/m);
    expect(r.out).toMatch(
      /^info {5}aws +skipped the deployment's checks \(bootstrap, concurrency, stack, secrets, alarms, consumers, remote\): no AWS region is set/m,
    );
    expect(r.out).toMatch(/^ {34}fix: pass --region or set AWS_REGION$/m);
    expect(r.out).not.toMatch(/^\S+ +(bootstrap|concurrency|stack) /m);
    expect(cfn.commandCalls(DescribeStacksCommand)).toHaveLength(0);
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(0);
  });

  it('gives the same under --json: no region, not deployed, the rate warnings and the skipped row', async () => {
    noRegion();
    const r = await doctor(['--rate', '10000/s', '--json'], []);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as DoctorReport;
    expect(report).toMatchObject({ stack: 'Hookledger', deployed: false, problems: 0 });
    expect(report.region).toBeUndefined();
    expect(report.checks.filter((c) => c.status === 'warning').map((c) => c.id)).toContain('rate:apiGateway');
    expect(report.checks.find((c) => c.id === 'aws')?.status).toBe('info');
  });

  it('skips the same way when the region is set but no credentials load, naming the region', async () => {
    cfn
      .on(DescribeStacksCommand)
      .rejects(Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }));
    const r = await doctor(['--rate', '100/s']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^hookledger doctor: stack Hookledger in ${REGION}$`, 'm'));
    expect(r.out).toMatch(/^ok {7}rate {21}carries 100\/s steady/m);
    expect(r.out).toMatch(/^info {5}aws +skipped the deployment's checks .*: no usable AWS credentials or region/m);
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(0);
  });

  it('without --rate there is nothing to check offline: no region stays an error (exit 3) saying how to set one', async () => {
    noRegion();
    const r = await doctor([], []);
    expect(r.code).toBe(3);
    expect(r.err).toContain('no AWS region is set');
    expect(r.err).toContain('pass --region or set AWS_REGION');
  });
});
