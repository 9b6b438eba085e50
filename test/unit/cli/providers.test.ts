import { describe, expect, it } from 'vitest';
import { PROVIDERS } from '../../../core/providers/catalog';
import { config } from '../../ops/support';
import { runCli } from '../../support/cli';

const env = { USER: 'providers-test', HOOKLEDGER_STATE: '/nonexistent/state.json' };

describe('hookledger providers', () => {
  it('--json lists every catalog entry as { name, scheme, signedParts, eventId, handshake, proof }', async () => {
    const result = await runCli(['providers', '--json'], config, env);
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.stdout) as Record<string, unknown>[];
    expect(rows).toHaveLength(PROVIDERS.length);
    expect(rows.find((r) => r.name === 'stripe')).toEqual({
      name: 'stripe',
      scheme: 'stripe',
      signedParts: 'the body and the t= timestamp of stripe-signature',
      eventId: 'body.id',
      handshake: null,
      proof: 'sdk',
    });
    expect(rows.find((r) => r.name === 'zoom')).toMatchObject({ handshake: 'zoom-url-validation' });
  });

  it('--proved leaves out the unproved entries, and the table says how many are proved', async () => {
    const proved = PROVIDERS.filter((p) => p.proof !== 'unproved').length;
    const json = JSON.parse((await runCli(['providers', '--proved', '--json'], config, env)).stdout) as { proof: string }[];
    expect(json).toHaveLength(proved);
    expect(json.every((r) => r.proof !== 'unproved')).toBe(true);
    const human = await runCli(['providers'], config, env);
    expect(human.stdout).toContain(`${PROVIDERS.length} providers, ${proved} proved (sdk or vector)`);
    expect(human.stdout).toMatch(/^PROVIDER\s+SCHEME\s+SIGNATURE COVERS/);
  });
});
