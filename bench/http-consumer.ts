/**
 * `npx tsx bench/http-consumer.ts [events]`: deliveries per second of one consumer run as an HTTP
 * destination (the shared worker POSTing to a local endpoint) against the same consumer as a Lambda
 * handler, on the local stack, as a ratio. Both consumers get the same events, fields, batch size
 * and concurrency; each starts paused, its queue is filled, then it alone is resumed and timed until
 * its queue is empty. Prints one JSON line.
 */
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '../core/config/schema';
import baseConfig from '../hookledger.config';
import { createLogger } from '../lambdas/shared/logger';
import { startLocalStack } from '../local/stack';
import { paymentEvent, signRequest } from './payload';
import { post } from './units';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const EVENTS = Number(process.argv[2] ?? 400);

const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'hookledger-units': '1' }).end());
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const shared = { subscribes: ['*'], fields: ['id', 'type', 'tenant_id', 'data.amount'], batchSize: 10, maxConcurrency: 4 } as const;
const config = defineConfig({
  sources: baseConfig.sources,
  consumers: [
    {
      id: 'as-lambda',
      entry: 'lambdas/consumers/audit-writer.ts',
      ...shared,
      subscribes: [...shared.subscribes],
      fields: [...shared.fields],
    },
    {
      id: 'as-http',
      kind: 'http',
      url,
      http: { ratePerSecond: 10_000 },
      ...shared,
      subscribes: [...shared.subscribes],
      fields: [...shared.fields],
    },
  ],
});
const stack = await startLocalStack({
  config,
  dataDir: null,
  httpPort: 0,
  secretsFile: path.join(mkdtempSync(path.join(os.tmpdir(), 'hookledger-bench-http-')), 'secrets.json'),
  logger: (service) => createLogger(service, { silent: true }),
  ttlSweepIntervalMs: null,
  paused: ['as-lambda', 'as-http'],
  // The same trivial work on both sides: acknowledge with 1 unit.
  handles: { 'as-lambda': async () => ({ units: 1 }) },
});
try {
  const secret = (await stack.secrets.get('platform')).current;
  const runId = Date.now().toString(36);
  for (let i = 0; i < EVENTS; i++) {
    const { eventId, body } = paymentEvent(i, runId);
    await post(stack, signRequest(secret, eventId, body));
  }
  await stack.drain({ timeoutMs: 120_000 });
  const rate: Record<string, number> = {};
  for (const id of ['as-lambda', 'as-http']) {
    const started = performance.now();
    stack.resume(id);
    await stack.drain({ timeoutMs: 300_000 });
    // drain waits ~400 ms of quiet at the end; take it off.
    const seconds = (performance.now() - started - 400) / 1000;
    rate[id] = Math.round((EVENTS / seconds) * 10) / 10;
  }
  const ratio = Math.round(((rate['as-http'] ?? 0) / (rate['as-lambda'] ?? 1)) * 100) / 100;
  console.log(JSON.stringify({ events: EVENTS, deliveriesPerSecond: rate, httpToLambdaRatio: ratio }));
} finally {
  await stack.stop();
  receiver.close();
}
