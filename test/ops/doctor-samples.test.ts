/**
 * Sources that explain themselves at config load: each attribution path of a source naming a preset
 * is read in the provider's sample event (the one `send --provider` posts) as intake reads it, and a
 * path the sample does not have is a warning naming the source, the field, the path and the sample's
 * fields: from `sampleFindings` (what `npm start` prints) and as `hookledger doctor` rows (WARN, not a
 * problem: the exit code is the other checks'). Doctor's AWS calls are mocked as in doctor.test.ts.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetAccountSettingsCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import defaultConfig from '../../hookledger.config';
import { doctor, doctorClients } from '../../ops/doctor';
import { SAMPLE_FIELDS_SHOWN, sampleFindings, sampleWarnings, shownFields } from '../../ops/source-check';
import { runCli } from '../support/cli';

const cfn = mockClient(CloudFormationClient);
const ssm = mockClient(SSMClient);
const lambda = mockClient(LambdaClient);
const REGION = 'eu-west-1';

const config = defineConfig({
  sources: [
    ...defaultConfig.sources,
    // Stripe's events name a connected account only for Connect: its sample has no `account`.
    { id: 'stripe-live', provider: 'stripe', attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } } },
    { id: 'github', provider: 'github', attribution: { tenantId: { body: 'installation.id' }, keyId: { header: 'x-github-hook-id' } } },
    { id: 'slack', provider: 'slack', attribution: { keyId: { body: 'event' } } },
    { id: 'twitch', provider: 'twitch', attribution: { keyId: { value: 'twitch' } } },
    { id: 'notion', provider: 'notion', attribution: { keyId: { body: 'subscription_id' } } },
  ],
  consumers: defaultConfig.consumers,
});

const STRIPE_MESSAGE =
  'source "stripe-live" reads tenantId from body.account, which the stripe sample event does not have: a delivery without it ' +
  "is refused (400 missing_attribution); the sample's fields: id, object, type, data.object.id";

describe('sampleFindings (printed by npm start)', () => {
  it('names the source, the field, the path and the fields the sample has, for a path the sample lacks', () => {
    const findings = sampleFindings(config);
    expect(findings.find((f) => f.source === 'stripe-live')).toEqual({
      source: 'stripe-live',
      provider: 'stripe',
      field: 'tenantId',
      location: 'body.account',
      sampleFields: ['id', 'object', 'type', 'data.object.id'],
      message: STRIPE_MESSAGE,
    });
  });

  it('checks a header against the headers the sample sends beside its signature', () => {
    const github = sampleFindings(config).filter((f) => f.source === 'github');
    expect(github).toEqual([
      {
        source: 'github',
        provider: 'github',
        field: 'keyId',
        location: 'header x-github-hook-id',
        sampleFields: ['x-github-delivery', 'x-github-event'],
        message:
          'source "github" reads keyId from header x-github-hook-id, which the github sample event does not send: a delivery without it ' +
          "is refused (400 missing_attribution); the sample's headers: x-github-delivery, x-github-event",
      },
    ]);
  });

  it('flags a path that reaches an object, not an id', () => {
    const slack = sampleFindings(config).find((f) => f.source === 'slack');
    expect(slack?.message).toBe(
      'source "slack" reads keyId from body.event, which is an object in the slack sample event, not an id (a string or a whole number): ' +
        "a delivery like it is refused (400 invalid_attribution); the sample's fields: token, team_id, api_app_id, type, event_id, event_time, event.type, event.user, event.text, event.ts, event.channel",
    );
  });

  it('says once that a preset has no sample to check against, not once per field', () => {
    const twitch = sampleFindings(config).filter((f) => f.source === 'twitch');
    expect(twitch).toEqual([
      {
        source: 'twitch',
        provider: 'twitch',
        sampleFields: [],
        message:
          'source "twitch": twitch has no sample event in hookledger, so its attribution paths are checked only when a real delivery arrives',
      },
    ]);
  });

  it(`lists at most ${SAMPLE_FIELDS_SHOWN} of the sample's fields and says how many more`, () => {
    const all = Array.from({ length: 25 }, (_, i) => `data.f${i}`);
    const listed = shownFields(all);
    expect(listed.shown).toEqual(all.slice(0, 20));
    expect(listed.text).toBe(`${all.slice(0, 20).join(', ')} (and 5 more)`);
    expect(shownFields(['id', 'type'])).toEqual({ shown: ['id', 'type'], text: 'id, type' });
  });

  it('gives npm start its warning lines: one per finding, then once where the entries that resolve come from', () => {
    const lines = sampleWarnings(config);
    expect(lines[0]).toBe(`warning: ${STRIPE_MESSAGE}`);
    expect(lines).toHaveLength(5);
    expect(lines[4]).toBe(
      '  the samples are examples: your deliveries may carry a field they lack; `npx hookledger sources add --provider <name>` prints paths that resolve in them',
    );
    expect(sampleWarnings(defaultConfig)).toEqual([]);
  });

  it('finds nothing for sources whose paths resolve, nor for sources without a preset (the shipped config)', () => {
    expect(sampleFindings(defaultConfig)).toEqual([]);
    expect(sampleFindings(config).map((f) => f.source)).toEqual(['stripe-live', 'github', 'slack', 'twitch']);
  });
});

describe('hookledger doctor', () => {
  afterEach(() => {
    for (const m of [cfn, ssm, lambda]) m.reset();
  });
  beforeEach(() => {
    cfn.on(DescribeStacksCommand).rejects(Object.assign(new Error('Stack with id Hookledger does not exist'), { name: 'ValidationError' }));
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: '27' } });
    lambda.on(GetAccountSettingsCommand).resolves({ AccountLimit: { ConcurrentExecutions: 1000, UnreservedConcurrentExecutions: 1000 } });
  });

  it('adds a warning row per finding and an ok row per source that resolves, before the AWS checks; warnings are not problems', async () => {
    const clients = doctorClients(REGION);
    try {
      const report = await doctor(clients, {
        config,
        stackName: 'Hookledger',
        bootstrap: { parameter: '/cdk-bootstrap/hnb659fds/version', minVersion: 6, from: 'test' },
      });
      expect(report.checks.slice(0, 6).map((c) => [c.id, c.status])).toEqual([
        ['sample:stripe-live', 'warning'],
        ['sample:github', 'warning'],
        ['sample:slack', 'warning'],
        ['sample:twitch', 'info'],
        ['sample:notion', 'ok'],
        ['bootstrap', 'ok'],
      ]);
      expect(report.checks[0]).toEqual({
        id: 'sample:stripe-live',
        status: 'warning',
        message: STRIPE_MESSAGE,
        fix: 'read tenantId from a field your stripe deliveries carry; `npx hookledger sources add --provider stripe` prints an entry whose paths resolve in the sample',
      });
      expect(report.checks[4]!.message).toBe('the attribution of notion resolves in the notion sample event');
      expect(report).toMatchObject({ problems: 0, warnings: 3 });
    } finally {
      clients.destroy();
    }
  });

  it('prints the warnings as WARN rows and exits 0 when nothing else is wrong', async () => {
    const run = await runCli(['doctor', '--region', REGION], config, { USER: 'doctor-samples-test' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(`WARN     sample:stripe-live       ${STRIPE_MESSAGE}`);
    expect(run.stdout).toContain('no problems found; 3 warning(s)');
    expect(run.code).toBe(0);
  });
});
