/**
 * A circuit breaker that opens while the local stack is still starting: the start-up repair has
 * re-queued an HTTP consumer's unfinished delivery, its poller runs it as soon as it starts, and its
 * destination refuses the connection, so the breaker opens (breakAfterFailures 1) at the first
 * failure, possibly before `startLocalStack` has returned. Its pause must reach the stack like any
 * later one: one failed delivery, one opening, one pause. (When the handlers' pause named the stack
 * before it was declared, the pause asked for during the start threw a ReferenceError and was lost;
 * the delivery ran again after its backoff and only the second opening paused crm-sync. The
 * consumers left paused at start then held the start open for a long-poll each.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import defaultConfig from '../../hookledger.config';
import type { LocalStack, LocalStackOptions } from '../../local/stack';
import { platformEvent } from '../support/factories';
import { crmSyncConsumer } from '../support/receiver';
import { queueDepth, send, startTestStack } from '../support/stack';
import { waitFor } from '../support/wait';

const LAMBDA_CONSUMERS = defaultConfig.consumers.map((c) => c.id);
const EVENT = platformEvent({ id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204' });

let home: string;
let config: HookledgerConfig;
let stack: LocalStack | undefined;

/** A loopback port nothing listens on: every POST to it is refused (a breaker failure). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function start(options: LocalStackOptions): Promise<LocalStack> {
  return startTestStack({
    config,
    dataDir: path.join(home, 'data'),
    secretsFile: path.join(home, 'secrets.json'),
    pollerLogger: () => ({ warn: () => undefined, error: () => undefined }),
    ...options,
  });
}

beforeAll(async () => {
  home = mkdtempSync(path.join(tmpdir(), 'hookledger-breaker-start-'));
  const crm = crmSyncConsumer(`http://127.0.0.1:${await closedPort()}/hooks`);
  config = defineConfig({
    sources: defaultConfig.sources,
    // crm-sync first: its poller starts before the paused consumers hold the start open.
    consumers: [{ ...crm, http: { ...crm.http, breakAfterFailures: 1 } }, ...defaultConfig.consumers],
  });
  // An earlier run: the event fanned out while every consumer was paused, so crm-sync's delivery is unfinished.
  const earlier = await start({ paused: ['crm-sync', ...LAMBDA_CONSUMERS], repairOnStart: false });
  try {
    expect((await send(earlier, EVENT)).status).toBe(202);
    const queueUrl = earlier.resources.queues['crm-sync']!.url;
    await waitFor(
      "the fan-out to queue crm-sync's delivery",
      async () => ((await queueDepth(earlier, queueUrl)) > 0 ? true : undefined),
      30_000,
    );
  } finally {
    await earlier.stop();
  }
});

afterAll(async () => {
  await stack?.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('local stack start', () => {
  it("pauses crm-sync at its circuit breaker's first opening when the start-up repair re-queued the failing delivery", async () => {
    const opened: string[] = [];
    let invocations = 0;
    stack = await start({
      paused: LAMBDA_CONSUMERS,
      onBreakerOpen: (consumerId) => opened.push(consumerId),
      wrapConsumer: (consumerId, handler) =>
        consumerId === 'crm-sync'
          ? (event, context) => {
              invocations++;
              return handler(event, context);
            }
          : handler,
    });
    expect(stack.startupRepair?.repaired).toBe(1);
    await waitFor('crm-sync to be paused by its breaker', () => (stack?.paused().includes('crm-sync') ? true : undefined), 20_000);
    expect(stack.paused()).toEqual(['audit-writer', 'billing-meter', 'crm-sync', 'risk-evaluator']);
    // One failed delivery, one opening, one pause: the pause asked for during the start was not lost.
    expect({ invocations, opened }).toEqual({ invocations: 1, opened: ['crm-sync'] });
  });
});
