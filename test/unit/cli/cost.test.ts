/**
 * `hookledger cost`: the monthly bill of the configured stack from the bench's measured units
 * (bench/results.json) and list prices (bench/prices.json). Expected figures are computed here from
 * those two files' numbers, not copied from the command's output.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineConfig } from '../../../core/config/schema';
import { config } from '../../ops/support';
import { runCli } from '../../support/cli';

const env = { USER: 'cost-test', HOOKLEDGER_STATE: '/nonexistent/state.json' };
const ROOT = path.resolve(import.meta.dirname, '../../..');
// biome-ignore lint/suspicious/noExplicitAny: the two JSON files as they are
const readJson = (file: string): any => JSON.parse(readFileSync(path.join(ROOT, 'bench', file), 'utf8'));
const prices = readJson('prices.json');
const results = readJson('results.json');
const P = prices.prices;
const A = prices.assumptions;

interface Mode {
  monthlyUsd: number;
  perMillionUsd: number;
  services: Record<string, { monthlyUsd: number; perMillionUsd: number }>;
}

describe('hookledger cost --rate 50/s --json (the shipped config: 3 Lambda consumers, one source, on demand)', () => {
  it('prices every service as a hand computation from bench/prices.json and the measured units of bench/results.json (--burstiness low)', async () => {
    const r = await runCli(['cost', '--rate', '50/s', '--burstiness', 'low', '--json'], config, env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { onDemand: Mode; provisioned: Mode; breakEvenPerSecond: number; webhooksPerMonth: number };

    const hours = A.hoursPerMonth;
    const webhooks = 50 * 3600 * hours;
    const millions = webhooks / 1e6;
    expect(out.webhooksPerMonth).toBe(webhooks);

    // One webhook at low traffic (--burstiness low), as the bench measured it for N = 3.
    const low = results.details.low;
    const n = 3;
    const ops = low.capacityByOperation;
    const wru = ops.putPayload.writeUnits + ops.putEvent.writeUnits + ops.claim.writeUnits + ops.acknowledge.writeUnits;
    const rru = ops.getPayload.readUnits;
    const inv = low.invocations;
    const f = A.functions;
    const gbSeconds =
      inv.ingest * (f.ingest.memoryMb / 1024) * (f.ingest.durationMsPerInvocation / 1000) +
      inv.fanout * (f.fanout.memoryMb / 1024) * (f.fanout.durationMsPerInvocation / 1000) +
      inv.consumers * (f.consumer.memoryMb / 1024) * (f.consumer.durationMsPerInvocation / 1000);
    const logBytes = results.logBytesPerWebhook.low + A.logs.apiGatewayAccessBytesPerRequest; // platform level WARN: no platform lines
    // Secrets: the source's signing secret and the payload hash key.
    const secrets = 2;
    const perWebhookServices = {
      apiGateway: inv.ingest * P.apiGatewayHttpPerMillionRequests.usd * millions,
      lambdaRequests: (inv.ingest + inv.fanout + inv.consumers) * P.lambdaPerMillionRequests.usd * millions,
      lambdaCompute: gbSeconds * P.lambdaArm64PerGbSecond.usd * webhooks,
      dynamodbStreams: 0,
      sqs: low.sqsRequests * P.sqsStandardPerMillionRequests.usd * millions,
      secretsManager: secrets * P.secretsManagerPerSecretMonth.usd,
      cloudwatchLogs: ((logBytes * webhooks) / A.bytesPerGb) * P.cloudwatchLogsPerGbIngested.usd,
      s3: 0,
    };
    const onDemand = {
      ...perWebhookServices,
      dynamodbWrites: wru * P.dynamodbOnDemandPerMillionWriteUnits.usd * millions,
      dynamodbReads: rru * P.dynamodbOnDemandPerMillionReadUnits.usd * millions,
    };
    // Provisioned (default settings: 70% target, at least 5 WCU / 5 RCU per table and index), all month:
    // EventStore 2 WRU (payload, receipt) and 1 RRU per webhook, its window index 1 WRU, the Ledger 2 WRU per delivery.
    const wcu = (50 * 2) / 0.7 + (50 * 1) / 0.7 + (50 * 2 * n) / 0.7;
    const rcu = (50 * 1) / 0.7 + 5 + 5;
    const provisioned = {
      ...perWebhookServices,
      dynamodbWrites: wcu * hours * P.dynamodbProvisionedPerWcuHour.usd,
      dynamodbReads: rcu * hours * P.dynamodbProvisionedPerRcuHour.usd,
    };

    for (const [mode, expected] of [
      ['onDemand', onDemand],
      ['provisioned', provisioned],
    ] as const) {
      const got = out[mode];
      expect(Object.keys(got.services).sort()).toEqual(Object.keys(expected).sort());
      for (const [service, usd] of Object.entries(expected)) {
        expect(got.services[service]!.monthlyUsd, `${mode} ${service}`).toBeCloseTo(usd, 6);
        expect(got.services[service]!.perMillionUsd, `${mode} ${service} per million`).toBeCloseTo(usd / millions, 6);
      }
      const total = Object.values(expected).reduce((s, v) => s + v, 0);
      expect(got.monthlyUsd).toBeCloseTo(total, 6);
      expect(got.perMillionUsd).toBeCloseTo(total / millions, 6);
    }
    expect(out.provisioned.monthlyUsd).toBeLessThan(out.onDemand.monthlyUsd);
    expect(out.breakEvenPerSecond).toBeGreaterThan(0);
    expect(out.breakEvenPerSecond).toBeLessThan(50);
  });

  it('prints the services side by side, the break-even rate and its assumptions for people', async () => {
    const r = await runCli(['cost', '--rate', '50/s'], config, env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^SERVICE\s+ON-DEMAND \$\/MONTH\s+\$\/MILLION\s+PROVISIONED \$\/MONTH\s+\$\/MILLION/m);
    expect(r.stdout).toMatch(/^dynamodbWrites\s/m);
    expect(r.stdout).toMatch(/^total\s/m);
    expect(r.stdout).toContain('131,400,000 webhooks a month at 50/s');
    expect(r.stdout).toContain('3 deliveries per webhook (billing-meter, audit-writer, risk-evaluator)');
    expect(r.stdout).toMatch(/provisioned pays off above a steady [\d.]+ webhooks\/s/);
    expect(r.stdout).toContain('prices: bench/prices.json of 2026-11-30');
    expect(r.stdout).toContain('throttled');
  });
});

describe('hookledger cost --rate 50/s --json: SQS and Lambda from the batching modelled at the rate', () => {
  // The shipped fan-out: 4 polls a second per shard, 30 ms per batch (bench/prices.json), parallelization
  // factor 1; the shipped consumers: batches of up to 10, no batching window.
  // Polls 0.25 s apart after an empty poll, 0.25 s + the fan-out's time after a batch (ops/batching.ts).
  const fanoutFill = (shards: number) => {
    const lambda = 50 / shards / 1;
    const idle = 0.25;
    const busy = 0.25 + A.functions.fanout.durationMsPerInvocation / 1000;
    const a = 1 - Math.exp(-lambda * idle);
    const b = 1 - Math.exp(-lambda * busy);
    const pi = a / (1 - b + a);
    return (lambda * ((1 - pi) * idle + pi * busy)) / pi;
  };
  interface Modelled {
    perWebhook: { sqsRequests: number; lambdaInvocations: number };
    onDemand: Mode;
    webhooksPerMonth: number;
    assumptions: {
      batching: {
        source: string;
        stream: { shards: number; parallelizationFactor: number };
        lambda: { fanoutRecordsPerInvocation: number; consumerRecordsPerInvocation: Record<string, number> };
        sqs: {
          messagesPerSendMessageBatch: number;
          messagesPerReceive: Record<string, number>;
          requestsPerWebhook: Record<string, number>;
        };
      };
    };
  }

  it('on an on-demand EventStore (about 4 stream shards): 3.60 records per fan-out batch, 2.50 SQS requests (below 3) and 2.11 invocations per webhook', async () => {
    const r = await runCli(['cost', '--rate', '50/s', '--json'], config, env);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Modelled;
    const k = fanoutFill(4);
    expect(k).toBeCloseTo(3.599, 3);
    const b = out.assumptions.batching;
    expect(b.source).toBe('modelled at a steady 50 webhooks/s (ops/batching.ts)');
    expect(b.stream).toMatchObject({ shards: 4, parallelizationFactor: 1 });
    expect(b.lambda.fanoutRecordsPerInvocation).toBeCloseTo(k, 10);
    // Each fan-out batch is one SendMessageBatch per queue (two for about one poll in a thousand, past
    // 10 records), each send received whole and deleted in one call.
    const perSend = b.sqs.messagesPerSendMessageBatch;
    expect(perSend).toBeCloseTo(3.595, 3);
    expect(perSend).toBeLessThan(k);
    for (const id of ['billing-meter', 'audit-writer', 'risk-evaluator']) {
      expect(b.sqs.messagesPerReceive[id]).toBeCloseTo(perSend, 4);
      expect(b.lambda.consumerRecordsPerInvocation[id]).toBeCloseTo(perSend, 4);
    }
    expect(b.sqs.requestsPerWebhook.emptyReceives).toBe(0);
    expect(out.perWebhook.sqsRequests).toBeCloseTo(9 / perSend, 4);
    expect(out.perWebhook.sqsRequests).toBeCloseTo(2.503, 3);
    expect(out.perWebhook.sqsRequests).toBeLessThan(3);
    expect(out.perWebhook.lambdaInvocations).toBeCloseTo(1 + 1 / k + 3 / perSend, 4);
    const millions = out.webhooksPerMonth / 1e6;
    expect(out.onDemand.services.sqs!.monthlyUsd).toBeCloseTo(
      out.perWebhook.sqsRequests * P.sqsStandardPerMillionRequests.usd * millions,
      6,
    );
  });

  it('with --stream-shards 1: 14.0 records per fan-out batch, 1.20 SQS requests per webhook', async () => {
    const out = JSON.parse((await runCli(['cost', '--rate', '50/s', '--stream-shards', '1', '--json'], config, env)).stdout) as Modelled;
    const k = fanoutFill(1);
    expect(k).toBeCloseTo(14.0, 3);
    expect(out.assumptions.batching.stream.shards).toBe(1);
    // Most polls find more than 10 records: two SendMessageBatch calls per queue, two receives.
    expect(out.perWebhook.sqsRequests).toBeCloseTo(1.204, 3);
    expect(out.perWebhook.lambdaInvocations).toBeCloseTo(1.473, 3);
  });

  it('prints the batch fills it used for people', async () => {
    const r = await runCli(['cost', '--rate', '50/s'], config, env);
    expect(r.stdout).toContain('2.50 SQS requests, 2.11 Lambda invocations (batching modelled at 50/s)');
    expect(r.stdout).toContain(
      '  Lambda: 3.6 records per fan-out invocation; per consumer invocation: billing-meter 3.6, audit-writer 3.6, risk-evaluator 3.6',
    );
    expect(r.stdout).toMatch(/ {2}SQS: 3\.6 messages per SendMessageBatch; .* 0\.00 empty receives/);
  });
});

describe('hookledger cost: the configured stack', () => {
  it('counts deliveries of one event type, HTTP destinations and the configured provisioned bounds', async () => {
    const cfg = defineConfig({
      ...config,
      consumers: [
        ...config.consumers,
        { id: 'crm-sync', kind: 'http', url: 'https://crm.example.com/hooks', subscribes: ['invoice.*'], fields: ['id'] },
      ],
      capacity: { mode: 'provisioned', minWrite: 50, maxWrite: 2000, minRead: 20, maxRead: 400, targetUtilization: 50 },
    });
    const r = await runCli(['cost', '--rate', '10/s', '--event-type', 'invoice.paid', '--json'], cfg, env);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      deliveries: string[];
      provisioned: Mode & { capacity: Record<string, { write: number; read: number }> };
    };
    // invoice.paid: billing-meter and audit-writer (*), crm-sync (invoice.*); not risk-evaluator.
    expect(out.deliveries).toEqual(['billing-meter', 'audit-writer', 'crm-sync']);
    // The Ledger needs 2 WRU x 3 deliveries x 10/s / 50% = 120 WCU; the EventStore 2 x 10 / 0.5 = 40, below its min of 50.
    expect(out.provisioned.capacity.ledger).toEqual({ write: 120, read: 20, aboveMax: false });
    expect(out.provisioned.capacity.eventStore).toEqual({ write: 50, read: 20, aboveMax: false });
    expect(out.provisioned.capacity.byTenantDay).toEqual({ write: 50, read: 20, aboveMax: false });
  });

  it('warns when the configured maxWrite cannot carry the rate (the excess would be throttled), and prices the capped capacity', async () => {
    const cfg = defineConfig({ ...config, capacity: { ledger: { mode: 'provisioned', maxWrite: 100 } } });
    const json = JSON.parse((await runCli(['cost', '--rate', '50/s', '--json'], cfg, env)).stdout) as {
      throttled: string[];
      provisioned: { capacity: Record<string, { write: number; aboveMax: boolean }> };
    };
    // The Ledger needs 2 x 3 x 50 / 0.7 = 429 WCU; the EventStore (on demand) is priced with room for its load.
    expect(json.throttled).toEqual(['ledger']);
    expect(json.provisioned.capacity.ledger).toMatchObject({ write: 100, aboveMax: true });
    expect(json.provisioned.capacity.eventStore!.write).toBeCloseTo((50 * 2) / 0.7, 10);
    const human = await runCli(['cost', '--rate', '50/s'], cfg, env);
    expect(human.stdout).toContain('WARNING: at 50/s ledger need more capacity than their configured max');
    const fine = await runCli(['cost', '--rate', '50/s'], config, env);
    expect(fine.stdout).not.toContain('WARNING');
  });

  it('counts a consumer with a content filter as receiving every webhook of its types, and says so', async () => {
    const cfg = defineConfig({
      ...config,
      consumers: config.consumers.map((c) => (c.id === 'risk-evaluator' ? { ...c, filter: { tenantId: ['tenant_204'] } } : c)),
    });
    const out = JSON.parse((await runCli(['cost', '--rate', '5/s', '--json'], cfg, env)).stdout) as {
      deliveries: string[];
      filteredConsumers: string[];
      assumptions: { notes: string[] };
    };
    expect(out.deliveries).toEqual(['billing-meter', 'audit-writer', 'risk-evaluator']);
    expect(out.filteredConsumers).toEqual(['risk-evaluator']);
    expect(out.assumptions.notes).toContainEqual(
      expect.stringContaining('risk-evaluator has a content filter: counted as matching every webhook'),
    );
  });

  it('moves the payload units with --body-bytes (a 64 KiB body as the bench measured it)', async () => {
    const big = results.largeBodies.find((b: { bytes: number }) => b.bytes === 65536);
    const r = await runCli(['cost', '--rate', '5/s', '--body-bytes', '65536', '--json'], config, env);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { onDemand: Mode; webhooksPerMonth: number };
    const millions = out.webhooksPerMonth / 1e6;
    expect(out.onDemand.services.dynamodbWrites!.monthlyUsd).toBeCloseTo(
      big.writeUnitsPerWebhook * P.dynamodbOnDemandPerMillionWriteUnits.usd * millions,
      6,
    );
  });
});

describe('hookledger cost: bad input', () => {
  it.each([
    [['--rate', 'fast'], /--rate must be webhooks per second, a number above 0 like 50\/s \(got "fast"\)/],
    [['--rate=-5/s'], /--rate must be webhooks per second, a number above 0 like 50\/s \(got "-5\/s"\)/],
    [['--rate', '0/s'], /--rate must be .* \(got "0\/s"\)/],
    [['--rate', '50/s', '--body-bytes', 'big'], /--body-bytes must be a whole number of bytes, 1-4194304 \(got "big"\)/],
    [['--rate', '50/s', '--burstiness', 'spiky'], /--burstiness must be one of low, high, backlog \(got "spiky"\)/],
    [['--rate', '50/s', '--stream-shards', '0'], /--stream-shards must be a whole number of shards, at least 1 \(got "0"\)/],
  ])('refuses %j with a usage error, exit 2', async (args, message) => {
    const r = await runCli(['cost', ...args, '--json'], config, env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });

  it('refuses an --event-type no consumer subscribes to, naming the patterns', async () => {
    const payments = defineConfig({ ...config, consumers: config.consumers.filter((c) => c.id === 'risk-evaluator') });
    const r = await runCli(['cost', '--rate', '50/s', '--event-type', 'invoice.paid'], payments, env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'no consumer subscribes to invoice.paid: nothing would be delivered; configured patterns: payment.*, scoped_key.*',
    );
  });

  it('requires --rate', async () => {
    const r = await runCli(['cost'], config, env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("required option '--rate <n>/s' not specified");
  });
});
