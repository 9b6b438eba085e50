/**
 * `npx hookledger send --provider <name>` against the running local stack: the provider's sample,
 * signed as that provider signs with the secret the stack made for the source, goes through the HTTP
 * gateway to the real intake; 202 and a receipt (`trace`) for Stripe (JSON, `t=,v1=` header),
 * Twilio (a form body signed over the URL) and Clerk (Svix headers, the event id a signed header).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import defaults from '../../hookledger.config';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { runCli } from '../support/cli';
import { startTestStack } from '../support/stack';

let stack: LocalStack;
let config: HookledgerConfig;
let statePath: string;

/** `npx hookledger <argv>` in-process against this stack's state file. */
function cli(argv: string[]) {
  return runCli(argv, config, { USER: 'e2e', HOOKLEDGER_STATE: statePath });
}

beforeAll(async () => {
  config = defineConfig({
    sources: [
      { id: 'stripe', provider: 'stripe', attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } } },
      { id: 'twilio', provider: 'twilio', attribution: { keyId: { body: 'MessagingServiceSid' } } },
      { id: 'clerk', provider: 'clerk', attribution: { tenantId: { body: 'data.organization_id' }, keyId: { body: 'data.id' } } },
    ],
    consumers: [{ ...defaults.consumers.find((c) => c.id === 'audit-writer')!, subscribes: ['*'] }],
  });
  stack = await startTestStack({ config });
  statePath = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-send-provider-')), 'state.json');
  await writeState(statePath, stackState(stack, null));
}, 120_000);
afterAll(() => stack?.stop());

describe('send --provider through HTTP to the local stack', () => {
  it.each([
    ['stripe', 'stripe', 'invoice.paid', 'tenant_204', 'in_8Rt2Lm'],
    ['twilio', 'twilio', 'delivered', 'AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c', 'key_42'],
    ['clerk', 'clerk', 'user.created', 'tenant_204', 'user_2NNEqL2nrIRdJ194ndJqAHwEfxC'],
  ])('%s: 202, and trace shows its receipt', async (provider, source, eventType, tenantId, keyId) => {
    const sent = await cli(['send', '--provider', provider, '--json']);
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    const result = JSON.parse(sent.stdout) as { status: number; eventId: string; source: string; provider: string; body: unknown };
    expect(result).toMatchObject({ status: 202, source, provider, body: { event_id: result.eventId, deliveries: 1 } });

    const traced = await cli(['trace', result.eventId, '--source', source, '--json']);
    expect(traced.code).toBe(0);
    expect(JSON.parse(traced.stdout).receipt).toMatchObject({
      source,
      eventId: result.eventId,
      eventType,
      tenantId,
      keyId,
      payload: 'present',
      secretVersion: 'current',
      consumers: ['audit-writer'],
    });
  });

  it('a second send is a new event, not a duplicate of the first', async () => {
    const first = JSON.parse((await cli(['send', '--provider', 'stripe', '--json'])).stdout) as { eventId: string; status: number };
    const second = JSON.parse((await cli(['send', '--provider', 'stripe', '--json'])).stdout) as { eventId: string; status: number };
    expect([first.status, second.status]).toEqual([202, 202]);
    expect(second.eventId).not.toBe(first.eventId);
  });
});
