import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  DescribeSecretCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { localSqsClient } from '../../local/clients';
import { freePort, startMoveTaskSqs } from '../../local/emulators';
import { FileSecrets } from '../../local/secrets-file';
import { ConflictError, NotFoundError } from '../../ops/errors';
import { issueKey, listKeys, revokeKey } from '../../ops/keys';
import { redrive } from '../../ops/redrive';
import { retireSecret, rotateSecret } from '../../ops/secrets';
import { config, freshStack, HOUR, items, OPERATOR, type OpsEnv, startOpsEnv, T0 } from './support';

let env: OpsEnv;
beforeAll(async () => {
  env = await startOpsEnv();
});
afterAll(() => env?.stop());

describe('keys', () => {
  it('issues, refuses a second issue of the same id, revokes once, and lists by tenant', async () => {
    const stack = await freshStack(env);
    let now = T0;
    const deps = { ddb: stack.ddb, tables: stack.tables, operator: OPERATOR, clock: () => now };

    const key = await issueKey(deps, { tenant: 'tenant_204', keyId: 'key_42' });
    expect(key).toEqual({ pk: 'key#key_42', kind: 'key', keyId: 'key_42', tenantId: 'tenant_204', status: 'active', createdAt: T0 });
    // The runtime's read path sees it.
    expect(await stack.store.keys.getKey('key_42')).toEqual(key);
    await expect(issueKey(deps, { tenant: 'tenant_311', keyId: 'key_42' })).rejects.toBeInstanceOf(ConflictError);
    now += 1000;
    const generated = await issueKey(deps, { tenant: 'tenant_311' });
    expect(generated.keyId).toMatch(/^key_[0-9a-z]{12}$/);

    now += 1000;
    const revoked = await revokeKey(deps, { keyId: 'key_42' });
    expect(revoked).toEqual({ alreadyRevoked: false, key: { ...key, status: 'revoked', revokedAt: T0 + 2000 } });
    now += 1000;
    expect(await revokeKey(deps, { keyId: 'key_42' })).toMatchObject({ alreadyRevoked: true, key: { revokedAt: T0 + 2000 } });
    await expect(revokeKey(deps, { keyId: 'key_nope' })).rejects.toBeInstanceOf(NotFoundError);

    expect((await listKeys(deps)).map((k) => k.keyId)).toEqual([generated.keyId, 'key_42']);
    expect((await listKeys(deps, { tenant: 'tenant_204' })).map((k) => [k.keyId, k.status])).toEqual([['key_42', 'revoked']]);
    const audit = (await items(env, stack.tables.events)).filter((i) => i.kind === 'audit').map((i) => [i.action, i.keyId]);
    expect(audit.sort()).toEqual(
      [
        ['key.issue', 'key_42'],
        ['key.issue', generated.keyId],
        ['key.revoke', 'key_42'],
      ].sort(),
    );
  });
});

describe('rotateSecret', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'hookledger-ops-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const localRotator = (secrets: FileSecrets) =>
    ({
      kind: 'local',
      rotate: (s: string, overlapMs: number) => secrets.rotate(s, overlapMs),
      retire: (s: string) => secrets.retire(s),
    }) as const;

  it('rotates the local secrets file (old value kept as previous until the overlap ends) and audits who, when and the end, never the value', async () => {
    const stack = await freshStack(env);
    const file = path.join(dir, 'secrets.json');
    const secrets = new FileSecrets({ path: file, sourceIds: ['platform'], clock: () => T0 });
    const before = await secrets.get('platform');

    const result = await rotateSecret(
      { ddb: stack.ddb, tables: stack.tables, config, operator: OPERATOR, clock: () => T0, rotator: localRotator(secrets) },
      { source: 'platform' },
    );

    const after = JSON.parse(await readFile(file, 'utf8')) as {
      sources: { platform: { current: string; previous: string; previousUntil: number } };
    };
    expect(after.sources.platform.previous).toBe(before.current);
    expect(after.sources.platform.previousUntil).toBe(T0 + 72 * HOUR);
    expect(result.previousUntil).toBe(T0 + 72 * HOUR);
    expect(after.sources.platform.current).toMatch(/^whsec_/);
    expect(after.sources.platform.current).not.toBe(before.current);
    const audits = (await items(env, stack.tables.events)).filter((i) => i.kind === 'audit');
    expect(audits).toEqual([
      {
        pk: result.auditKey,
        kind: 'audit',
        action: 'secret.rotate',
        auditId: expect.stringMatching(/^aud_/),
        at: T0,
        operator: OPERATOR,
        source: 'platform',
        where: 'local',
        overlapMs: 72 * HOUR,
        previousUntil: T0 + 72 * HOUR,
        value: 'generated',
      },
    ]);
    const stored = JSON.stringify(audits);
    expect(stored).not.toContain(after.sources.platform.current);
    expect(stored).not.toContain(before.current);
    expect(stored).not.toContain('whsec_');
  });

  it('takes an overlap override, and retire ends the overlap at once with one audit item and no value', async () => {
    const stack = await freshStack(env);
    const file = path.join(dir, 'secrets-retire.json');
    const secrets = new FileSecrets({ path: file, sourceIds: ['platform'], clock: () => T0 });
    const deps = {
      ddb: stack.ddb,
      tables: stack.tables,
      config,
      operator: OPERATOR,
      clock: () => T0 + 1000,
      rotator: localRotator(secrets),
    };

    const rotated = await rotateSecret(deps, { source: 'platform', overlapMs: 6 * HOUR });
    expect(rotated.previousUntil).toBe(T0 + 6 * HOUR);
    const during = await secrets.get('platform');
    expect(during.previousUntil).toBe(T0 + 6 * HOUR);

    const retired = await retireSecret(deps, { source: 'platform' });
    expect(retired).toMatchObject({ source: 'platform', where: 'local', retired: true, at: T0 + 1000 });
    expect(await secrets.get('platform')).toEqual({ current: during.current });
    expect(await retireSecret(deps, { source: 'platform' })).toMatchObject({ retired: false });

    const audits = (await items(env, stack.tables.events)).filter((i) => i.kind === 'audit' && i.action === 'secret.retire');
    expect(audits).toHaveLength(2); // Scan order is the table's, not time's.
    expect(audits).toEqual(
      expect.arrayContaining([
        {
          pk: retired.auditKey,
          kind: 'audit',
          action: 'secret.retire',
          auditId: expect.stringMatching(/^aud_/),
          at: T0 + 1000,
          operator: OPERATOR,
          source: 'platform',
          where: 'local',
          retired: true,
        },
        expect.objectContaining({ action: 'secret.retire', retired: false }),
      ]),
    );
    const stored = JSON.stringify(await items(env, stack.tables.events));
    expect(stored).not.toContain(during.current);
    expect(stored).not.toContain(during.previous);
    expect(stored).not.toContain('whsec_');
  });

  it('refuses an overlap outside 1 h to 720 h', async () => {
    const stack = await freshStack(env);
    const secrets = new FileSecrets({ path: path.join(dir, 'secrets-bad.json'), sourceIds: ['platform'] });
    const deps = { ddb: stack.ddb, tables: stack.tables, config, operator: OPERATOR, rotator: localRotator(secrets) };
    await expect(rotateSecret(deps, { source: 'platform', overlapMs: 59 * 60_000 })).rejects.toThrow(/overlap 59m is outside 1h to 720h/);
    await expect(rotateSecret(deps, { source: 'platform', overlapMs: 721 * HOUR })).rejects.toThrow(/outside 1h to 720h/);
    expect((await items(env, stack.tables.events)).filter((i) => i.kind === 'audit')).toEqual([]);
  });

  describe('on AWS', () => {
    const sm = mockClient(SecretsManagerClient);
    afterEach(() => sm.reset());
    const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:hookledger-platform-AbCdEf';
    const awsRotator = () =>
      ({ kind: 'aws', client: new SecretsManagerClient({ region: 'us-east-1' }), secretIds: { platform: ARN } }) as const;

    it('retires by removing AWSPREVIOUS from the version DescribeSecret names, and audits the version id only', async () => {
      const stack = await freshStack(env);
      sm.on(DescribeSecretCommand).resolves({
        ARN,
        VersionIdsToStages: { 'v-3': ['AWSCURRENT', 'AWSPENDING'], 'v-2': ['AWSPREVIOUS'], 'v-1': [] },
      });
      sm.on(UpdateSecretVersionStageCommand).resolves({ ARN });

      const result = await retireSecret(
        { ddb: stack.ddb, tables: stack.tables, config, operator: OPERATOR, clock: () => T0, rotator: awsRotator() },
        { source: 'platform' },
      );

      expect(sm.commandCalls(DescribeSecretCommand).map((c) => c.args[0].input)).toEqual([{ SecretId: ARN }]);
      expect(sm.commandCalls(UpdateSecretVersionStageCommand).map((c) => c.args[0].input)).toEqual([
        { SecretId: ARN, VersionStage: 'AWSPREVIOUS', RemoveFromVersionId: 'v-2' },
      ]);
      expect(result).toMatchObject({ source: 'platform', where: 'aws', retired: true, versionId: 'v-2' });
      const audits = (await items(env, stack.tables.events)).filter((i) => i.kind === 'audit');
      expect(audits).toEqual([
        {
          pk: result.auditKey,
          kind: 'audit',
          action: 'secret.retire',
          auditId: expect.stringMatching(/^aud_/),
          at: T0,
          operator: OPERATOR,
          source: 'platform',
          where: 'aws',
          retired: true,
          versionId: 'v-2',
        },
      ]);
    });

    it('changes nothing when no version holds AWSPREVIOUS (never rotated, or already retired)', async () => {
      const stack = await freshStack(env);
      sm.on(DescribeSecretCommand).resolves({ ARN, VersionIdsToStages: { 'v-1': ['AWSCURRENT'] } });

      const result = await retireSecret(
        { ddb: stack.ddb, tables: stack.tables, config, operator: OPERATOR, rotator: awsRotator() },
        { source: 'platform' },
      );

      expect(sm.commandCalls(UpdateSecretVersionStageCommand)).toHaveLength(0);
      expect(result).toMatchObject({ retired: false });
      expect(result.versionId).toBeUndefined();
    });

    it('refuses --overlap on AWS, where intake takes the overlap from the deployed config', async () => {
      const stack = await freshStack(env);
      await expect(
        rotateSecret(
          { ddb: stack.ddb, tables: stack.tables, config, operator: OPERATOR, rotator: awsRotator() },
          { source: 'platform', overlapMs: 6 * HOUR },
        ),
      ).rejects.toThrow(/secretOverlapHours/);
      expect(sm.commandCalls(PutSecretValueCommand)).toHaveLength(0);
    });

    it('puts a new whsec_ value (Secrets Manager moves AWSCURRENT, keeps AWSPREVIOUS) and audits without it', async () => {
      const stack = await freshStack(env);
      sm.on(PutSecretValueCommand).resolves({ VersionId: 'v-2', VersionStages: ['AWSCURRENT'] });
      const client = new SecretsManagerClient({ region: 'us-east-1' });
      const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:hookledger-platform-AbCdEf';

      const result = await rotateSecret(
        {
          ddb: stack.ddb,
          tables: stack.tables,
          config,
          operator: OPERATOR,
          clock: () => T0,
          rotator: { kind: 'aws', client, secretIds: { platform: arn } },
        },
        { source: 'platform' },
      );

      const calls = sm.commandCalls(PutSecretValueCommand);
      expect(calls).toHaveLength(1);
      const input = calls[0]!.args[0].input;
      expect(input.SecretId).toBe(arn);
      expect(input.SecretString).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect(input.VersionStages).toBeUndefined(); // default: AWSCURRENT moves, the old version becomes AWSPREVIOUS
      expect(result).toMatchObject({ source: 'platform', where: 'aws', versionId: 'v-2', previousUntil: T0 + 72 * HOUR });
      const audits = JSON.stringify((await items(env, stack.tables.events)).filter((i) => i.kind === 'audit'));
      expect(audits).toContain('"versionId":"v-2"');
      expect(audits).toContain(`"previousUntil":${T0 + 72 * HOUR}`);
      expect(audits).not.toContain(input.SecretString as string);
    });
  });

  it('refuses an unknown source', async () => {
    const stack = await freshStack(env);
    await expect(
      rotateSecret(
        {
          ddb: stack.ddb,
          tables: stack.tables,
          config,
          operator: OPERATOR,
          rotator: { kind: 'local', rotate: async () => ({}), retire: async () => ({ retired: false }) },
        },
        { source: 'stripe' },
      ),
    ).rejects.toThrow(/unknown source "stripe"/);
    await expect(
      retireSecret(
        {
          ddb: stack.ddb,
          tables: stack.tables,
          config,
          operator: OPERATOR,
          rotator: { kind: 'local', rotate: async () => ({}), retire: async () => ({ retired: false }) },
        },
        { source: 'stripe' },
      ),
    ).rejects.toThrow(/unknown source "stripe"/);
  });
});

describe('redrive', () => {
  async function fillDlq(sqs: SQSClient, dlqUrl: string, n: number) {
    for (let i = 0; i < n; i++) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: dlqUrl,
          MessageBody: JSON.stringify({ v: 1, eventId: `evt_01J8K7M2Q${i}`, consumerId: 'billing-meter' }),
          MessageAttributes: { quarantineReason: { DataType: 'String', StringValue: 'invalid_payload' } },
        }),
      );
    }
  }
  async function drain(sqs: SQSClient, url: string) {
    const bodies: string[] = [];
    for (let i = 0; i < 5; i++) {
      const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }));
      for (const m of out.Messages ?? []) bodies.push(m.Body ?? '');
      if ((out.Messages ?? []).length === 0) break;
    }
    return bodies.sort();
  }
  const depthOf = async (sqs: SQSClient, url: string) =>
    Number(
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }))).Attributes
        ?.ApproximateNumberOfMessages,
    );

  it('moves DLQ messages back by receive/send/delete where the emulator has no move task (fauxqs)', async () => {
    const stack = await freshStack(env);
    const pair = stack.queues['billing-meter']!;
    await fillDlq(env.sqs, pair.dlqUrl, 3);
    const progress: [number, number | undefined][] = [];

    const result = await redrive(
      { config, sqs: env.sqs, queues: stack.queues },
      { consumer: 'billing-meter', onProgress: (d, t) => progress.push([d, t]) },
    );

    expect(result).toEqual({ consumer: 'billing-meter', method: 'receive-send-delete', moved: 3, toMove: 3 });
    expect(progress.at(-1)).toEqual([3, 3]);
    expect(await depthOf(env.sqs, pair.dlqUrl)).toBe(0);
    expect(await drain(env.sqs, pair.url)).toEqual(
      [0, 1, 2].map((i) => JSON.stringify({ v: 1, eventId: `evt_01J8K7M2Q${i}`, consumerId: 'billing-meter' })),
    );
  });

  it('uses StartMessageMoveTask with the queue as destination where it exists (local-aws-sqs)', async () => {
    const server = await startMoveTaskSqs({ port: await freePort() });
    const sqs = localSqsClient(server.endpoint);
    try {
      const dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'billing-meter-dlq' }))).QueueUrl!;
      const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }))).Attributes!
        .QueueArn!;
      const url = (
        await sqs.send(
          new CreateQueueCommand({
            QueueName: 'billing-meter',
            Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 5 }) },
          }),
        )
      ).QueueUrl!;
      // Sent straight to the DLQ, as the runtime does for a PermanentError: no source queue recorded.
      await fillDlq(sqs, dlqUrl, 3);

      const result = await redrive(
        { config, sqs, queues: { 'billing-meter': { url, dlqUrl } } },
        { consumer: 'billing-meter', pollMs: 100 },
      );

      expect(result).toEqual({ consumer: 'billing-meter', method: 'move-task', moved: 3, toMove: 3, status: 'COMPLETED' });
      expect(await drain(sqs, url)).toHaveLength(3);
    } finally {
      sqs.destroy();
      await server.stop();
    }
  });

  it('refuses a consumer without a queue', async () => {
    await expect(redrive({ config, sqs: env.sqs, queues: {} }, { consumer: 'billing-meter' })).rejects.toThrow(/no queue for consumer/);
  });
});
