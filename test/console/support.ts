/**
 * The console on a test stack, as `npm start` serves it: the stack's state file written, the target
 * resolved from it as the CLI does (console/serve.ts), and a client that speaks to the server over
 * HTTP with or without the token and an Origin. Shared by the API and browser tests.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PurgeQueueCommand } from '@aws-sdk/client-sqs';
import { serveConsole } from '../../console/serve';
import { TOKEN_HEADER } from '../../console/server';
import { defineConfig } from '../../core/config/schema';
import baseConfig from '../../hookledger.config';
import { handle as riskHandle } from '../../lambdas/consumers/risk-evaluator';
import { PermanentError } from '../../lambdas/runtime/errors';
import type { ConsumerHandle } from '../../lambdas/runtime/runtime';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { queueDepth, send, startTestStack } from '../support/stack';

/** Events risk-evaluator cannot score until the "fix ships" (the id leaves the set). */
export const poisoned = new Set<string>();

const risk: ConsumerHandle = async (ctx) => {
  if (poisoned.has(ctx.attribution.eventId)) {
    throw new PermanentError(`risk model v7 cannot score ${ctx.attribution.eventId}: card_last4 missing`, 'model_input_invalid');
  }
  return riskHandle(ctx);
};

export const config = defineConfig(baseConfig);

export interface ConsoleStack {
  readonly stack: LocalStack;
  readonly console: Awaited<ReturnType<typeof serveConsole>>;
  /** The stack's state file, as `npm start` writes it: `hookledger console` finds the stack through it. */
  readonly stateFile: string;
  /** Every response body the client read: the no-secret checks read them all. */
  readonly seen: string[];
  stop(): Promise<void>;
}

export async function startConsoleStack(): Promise<ConsoleStack> {
  const stack = await startTestStack({ config, handles: { 'risk-evaluator': risk }, backoffBaseMs: 200 });
  const dir = mkdtempSync(path.join(tmpdir(), 'hookledger-console-'));
  const stateFile = path.join(dir, 'state.json');
  await writeState(stateFile, stackState(stack, null));
  const running = await serveConsole({
    config: stack.config,
    root: dir,
    env: { HOOKLEDGER_STATE: stateFile },
    operator: 'ops-console (console)',
    warn: () => undefined,
  });
  return {
    stack,
    console: running,
    stateFile,
    seen: [],
    stop: async () => {
      await running.close();
      await stack.stop();
    },
  };
}

export interface CallOptions {
  readonly token?: string | null;
  readonly origin?: string | null;
  readonly body?: unknown;
  readonly host?: string;
}

/** One request to the console; `token: null` sends none, `origin: null` none on a POST. */
export async function call(env: ConsoleStack, pathAndQuery: string, options: CallOptions = {}) {
  const token = options.token === undefined ? env.console.token : options.token;
  const origin = options.origin === undefined ? env.console.origin : options.origin;
  const post = options.body !== undefined;
  const headers: Record<string, string> = {};
  if (token !== null) headers[TOKEN_HEADER] = token;
  if (post) headers['content-type'] = 'application/json';
  if (post && origin !== null) headers.origin = origin;
  if (options.host) headers.host = options.host;
  const response = await fetch(`${env.console.origin}${pathAndQuery}`, {
    method: post ? 'POST' : 'GET',
    headers,
    redirect: 'manual',
    ...(post ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  env.seen.push(text);
  // biome-ignore lint/suspicious/noExplicitAny: the API's JSON, read by the tests' own assertions
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A poisoned payment: risk-evaluator quarantines it at once (PermanentError) into its DLQ. */
export async function sendPoisoned(stack: LocalStack, eventId: string, tenant = 'tenant_204') {
  poisoned.add(eventId);
  const sent = await send(stack, {
    id: eventId,
    type: 'payment.succeeded',
    tenant_id: tenant,
    key_id: tenant === 'tenant_204' ? 'key_42' : 'key_77',
    created: Math.floor(Date.now() / 1000),
    data: { amount: 4200, currency: 'eur' },
  });
  const dlq = stack.resources.queues['risk-evaluator']!.dlqUrl;
  await waitFor('the poisoned event in the DLQ of risk-evaluator', async () => (await queueDepth(stack, dlq)) === 1);
  await stack.drain();
  return sent;
}

/** Sends while `consumer` is paused and purges its queue: the deliveries are lost (reconcile's missing_delivery). */
export async function sendAndLose(stack: LocalStack, consumer: string, events: { id: string; type: string; tenant: string }[]) {
  const url = stack.resources.queues[consumer]!.url;
  await stack.pause(consumer);
  for (const e of events) {
    await send(stack, {
      id: e.id,
      type: e.type,
      tenant_id: e.tenant,
      key_id: e.tenant === 'tenant_204' ? 'key_42' : 'key_77',
      created: Math.floor(Date.now() / 1000),
      data: { amount: 1200, currency: 'eur', card_last4: '4242' },
    });
  }
  await waitFor(`${events.length} messages on ${consumer}'s queue`, async () => (await queueDepth(stack, url)) === events.length);
  await stack.handlers.sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
  await waitFor(`${consumer}'s queue purged`, async () => (await queueDepth(stack, url)) === 0);
  stack.resume(consumer);
  await stack.drain();
}
