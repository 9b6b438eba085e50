import { describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';

const base = (alarms: HookledgerConfigInput['alarms']): HookledgerConfigInput => ({
  sources: [
    {
      id: 'platform',
      scheme: { type: 'standard-webhooks' },
      attribution: { eventId: { body: 'id' }, eventType: { body: 'type' }, tenantId: { body: 'tenant_id' }, keyId: { body: 'key_id' } },
    },
  ],
  consumers: [{ id: 'billing-meter', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/billing-meter.ts' }],
  alarms,
});

describe('alarm destinations in the config', () => {
  it('accepts a Slack workspace and channel, and HTTPS endpoints', () => {
    const parsed = defineConfig(
      base({
        slack: { workspaceId: 'T07EA123LEP', channelId: 'G07EZ1ABC23' },
        https: ['https://events.pagerduty.com/integration/k_12/enqueue'],
      }),
    );
    expect(parsed.alarms).toEqual({
      slack: { workspaceId: 'T07EA123LEP', channelId: 'G07EZ1ABC23' },
      https: ['https://events.pagerduty.com/integration/k_12/enqueue'],
      signatureFailures: { threshold: 10, windowMinutes: 15 },
    });
  });

  it('refuses a plain http:// endpoint, naming the field and the value', () => {
    expect(() => defineConfig(base({ https: ['https://ok.example.com/hook', 'http://pager.example.com/hook'] }))).toThrow(
      /alarms\.https\[1\] \(value "http:\/\/pager\.example\.com\/hook"\): .*https:\/\//,
    );
  });

  it('refuses a value that is not a URL', () => {
    expect(() => defineConfig(base({ https: ['pager.example.com/hook'] }))).toThrow(
      /alarms\.https\[0\] \(value "pager\.example\.com\/hook"\)/,
    );
  });

  it('refuses the same endpoint twice', () => {
    expect(() => defineConfig(base({ https: ['https://a.example.com/h', 'https://a.example.com/h'] }))).toThrow(/alarms\.https .*twice/);
  });

  it('refuses a Slack channel id that is a channel name, naming the field and the value', () => {
    expect(() => defineConfig(base({ slack: { workspaceId: 'T07EA123LEP', channelId: '#alerts' } }))).toThrow(
      /alarms\.slack\.channelId \(value "#alerts"\): .*C or G/,
    );
  });

  it('refuses a Slack workspace id that does not start with T', () => {
    expect(() => defineConfig(base({ slack: { workspaceId: 'C07EZ1ABC23', channelId: 'C07EZ1ABC23' } }))).toThrow(
      /alarms\.slack\.workspaceId \(value "C07EZ1ABC23"\): .*starts with T/,
    );
  });

  it('refuses a Slack block without its channel', () => {
    expect(() => defineConfig(base({ slack: { workspaceId: 'T07EA123LEP' } } as HookledgerConfigInput['alarms']))).toThrow(
      /alarms\.slack\.channelId \(value missing\)/,
    );
  });
});
