/**
 * `hookledger gaps --recover` refuses, before it connects to anything, a source that does not declare
 * the event types its endpoint receives (`events`): recovery would record every type the provider's
 * list holds. A usage error (exit 2) naming the field and the fix, like the command's other usage errors.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { runCli } from '../support/cli';

const config = defineConfig({
  sources: [
    {
      id: 'stripe-live',
      provider: 'stripe',
      attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } },
      gapCheck: { api: 'stripe', baseUrl: 'http://127.0.0.1:9' },
    },
    {
      id: 'stripe-all',
      provider: 'stripe',
      events: ['*'],
      attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } },
      gapCheck: { api: 'stripe', baseUrl: 'http://127.0.0.1:9' },
    },
  ],
  consumers: [{ id: 'billing-meter', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/billing-meter.ts' }],
});
// No stack anywhere: a refusal must come before the command connects.
const env = { USER: 'ops-test', HOOKLEDGER_STATE: path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-gaps-ops-')), 'none.json') };

describe('hookledger gaps --recover', () => {
  it('refuses a source that declares no events: exit 2, naming events and the fix, before connecting', async () => {
    const out = await runCli(['gaps', '--source', 'stripe-live', '--from', '-1h', '--recover'], config, env);
    expect(out.stdout).toBe('');
    expect(out.stderr).toBe(
      'error: --recover records what the stripe API lists as if source "stripe-live" had received it, and the list holds every event type: ' +
        "the source declares no events; add events: ['invoice.paid', ...] (the types its endpoint receives) to it in the configuration\n",
    );
    expect(out.code).toBe(2);
  });

  it('refuses a source whose events are "*": exit 2', async () => {
    const out = await runCli(['gaps', '--source', 'stripe-all', '--from', '-1h', '--recover'], config, env);
    expect(out.stderr).toBe(
      'error: --recover records what the stripe API lists as if source "stripe-all" had received it, and the list holds every event type: ' +
        'the source declares events ["*"]; list the types its endpoint receives by name in the configuration\n',
    );
    expect(out.code).toBe(2);
  });
});
