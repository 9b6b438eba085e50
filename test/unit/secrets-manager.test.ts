/**
 * SecretsManagerPort with a mocked Secrets Manager client: the overlap's end from the AWSCURRENT
 * version's CreatedDate, the short cache while an overlap is open (so a retire is seen), and the
 * bounded serving of last known values while Secrets Manager cannot be read.
 */
import {
  GetSecretValueCommand,
  InternalServiceError,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { activeSecrets } from '../../adapters/secrets';
import { overlapMsBySource, type SecretRefreshFailure, SecretsManagerPort } from '../../adapters/secrets-manager';
import { clientReads } from '../../adapters/secrets-manager-client';
import { signatureHeaders, verifierFor } from '../../core/schemes';

const sm = mockClient(SecretsManagerClient);
afterEach(() => sm.reset());

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:hookledger-platform-AbCdEf';
const ARN_GITHUB = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:hookledger-github-GhIjKl';
const CURRENT = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const PREVIOUS = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
const T0 = Date.parse('2026-11-30T08:00:00Z');
const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;

const notFound = () =>
  new ResourceNotFoundException({
    message: "Secrets Manager can't find the specified secret value for staging label: AWSPREVIOUS",
    $metadata: {},
  });
const outage = () => new InternalServiceError({ message: 'An error occurred on the server side.', $metadata: {} });

function stages(secretId: string, current: string, createdAt: number, previous?: string) {
  sm.on(GetSecretValueCommand, { SecretId: secretId, VersionStage: 'AWSCURRENT' }).resolves({
    SecretString: current,
    VersionId: 'v-current',
    CreatedDate: new Date(createdAt),
  });
  const prev = sm.on(GetSecretValueCommand, { SecretId: secretId, VersionStage: 'AWSPREVIOUS' });
  if (previous) prev.resolves({ SecretString: previous, VersionId: 'v-previous', CreatedDate: new Date(createdAt - 30 * 86_400_000) });
  else prev.rejects(notFound());
}

function port(now: () => number, options: { overlapMs?: Record<string, number>; failures?: SecretRefreshFailure[] } = {}) {
  return new SecretsManagerPort({
    reads: clientReads(new SecretsManagerClient({ region: 'eu-west-1' })),
    secretIds: { platform: ARN, github: ARN_GITHUB },
    overlapMs: options.overlapMs ?? { platform: 2 * HOUR, github: 72 * HOUR },
    clock: now,
    onRefreshFailure: (failure) => options.failures?.push(failure),
  });
}

const calls = () => sm.commandCalls(GetSecretValueCommand).length;

describe('SecretsManagerPort', () => {
  describe('the rotation overlap', () => {
    it("ends previous at the AWSCURRENT version's CreatedDate plus the source's overlap", async () => {
      stages(ARN, CURRENT, T0 - 30 * MIN, PREVIOUS);
      stages(ARN_GITHUB, 'gh-current', T0 - 30 * MIN, 'gh-previous');
      const secrets = port(() => T0);

      expect(await secrets.get('platform')).toEqual({ current: CURRENT, previous: PREVIOUS, previousUntil: T0 - 30 * MIN + 2 * HOUR });
      expect(await secrets.get('github')).toEqual({
        current: 'gh-current',
        previous: 'gh-previous',
        previousUntil: T0 - 30 * MIN + 72 * HOUR,
      });
    });

    it('returns current alone for a secret never rotated (no AWSPREVIOUS stage)', async () => {
      stages(ARN, CURRENT, T0 - HOUR);
      expect(await port(() => T0).get('platform')).toEqual({ current: CURRENT });
    });

    it('gives previous no end, so it verifies nothing, when the source has no overlap configured', async () => {
      stages(ARN, CURRENT, T0 - MIN, PREVIOUS);
      const value = await port(() => T0, { overlapMs: {} }).get('platform');
      expect(value).toEqual({ current: CURRENT, previous: PREVIOUS });
      expect(activeSecrets(value, T0)).toEqual({ current: CURRENT });
    });

    it('re-reads an open overlap after 30 s instead of 5 minutes, so a retire (AWSPREVIOUS removed) is seen', async () => {
      let now = T0;
      stages(ARN, CURRENT, T0 - MIN, PREVIOUS);
      const secrets = port(() => now);
      await secrets.get('platform');
      expect(calls()).toBe(2);

      now = T0 + 29 * SEC;
      await secrets.get('platform');
      expect(calls()).toBe(2);

      sm.reset();
      stages(ARN, CURRENT, T0 - MIN); // retired
      now = T0 + 31 * SEC;
      expect(await secrets.get('platform')).toEqual({ current: CURRENT });
      expect(calls()).toBe(2);
      // No overlap any more: the normal 5-minute cache.
      now = T0 + 4 * MIN;
      await secrets.get('platform');
      expect(calls()).toBe(2);
    });
  });

  describe('a retired secret on a container whose cache predates the rotation', () => {
    const OLD = CURRENT;
    const NEW = 'whsec_bmV3LWN1cnJlbnQtdmFsdWUtMDEyMzQ1Njc4';
    const BODY = Buffer.from('{"id":"evt_01J8K7M2Q4","type":"invoice.paid","tenant_id":"tenant_204","key_id":"key_42"}');
    /** What intake answers a request signed with `secret` at `now`: verify, and on a mismatch refresh once. */
    async function answer(secrets: SecretsManagerPort, secret: string, now: number): Promise<number> {
      const headers = signatureHeaders({ type: 'standard-webhooks' }, { body: BODY, secret, now, messageId: 'msg_7Qm2' });
      const input = { rawBody: BODY, headers, now, toleranceSeconds: 300 };
      const verifier = verifierFor({ type: 'standard-webhooks' });
      if (verifier.verify(input, activeSecrets(await secrets.get('platform'), now)).ok) return 202;
      return verifier.verify(input, activeSecrets(await secrets.refresh('platform'), now)).ok ? 202 : 401;
    }

    it('stops verifying within 5 minutes of the rotation (the TTL of the read before it); a mismatch refresh never brings it back', async () => {
      let now = T0;
      stages(ARN, OLD, T0 - 10 * HOUR);
      const secrets = port(() => now);
      expect(await answer(secrets, OLD, now)).toBe(202); // read and cached: OLD is current

      sm.reset();
      stages(ARN, NEW, T0 + MIN, OLD); // secrets rotate at T0 + 1 min
      sm.reset();
      stages(ARN, NEW, T0 + MIN); // secrets retire at T0 + 2 min: no AWSPREVIOUS
      now = T0 + 2 * MIN + SEC;
      // Inside the bound this container still has OLD as current from its read at T0 (documented).
      expect(await answer(secrets, OLD, now)).toBe(202);
      expect(calls()).toBe(0);

      now = T0 + 5 * MIN; // the read's TTL ends, before the rotation's 5 minutes do
      expect(await answer(secrets, OLD, now)).toBe(401);
      expect(await answer(secrets, NEW, now)).toBe(202);
      for (const later of [20 * SEC, 31 * SEC, 10 * MIN]) {
        now = T0 + 5 * MIN + later;
        expect(await answer(secrets, OLD, now)).toBe(401); // the mismatch refresh reads NEW alone again
      }
      expect(await secrets.get('platform')).toEqual({ current: NEW });
    });

    it('one read during the overlap is enough: the retire is seen within 30 s of it', async () => {
      let now = T0;
      stages(ARN, NEW, T0 - MIN, OLD);
      const secrets = port(() => now);
      expect(await answer(secrets, OLD, now)).toBe(202);
      sm.reset();
      stages(ARN, NEW, T0 - MIN); // retired at T0 + 1 s
      now = T0 + 30 * SEC;
      expect(await answer(secrets, OLD, now)).toBe(401);
    });
  });

  describe('Secrets Manager unavailable', () => {
    it('serves the last known values up to 1 h past the 5-minute TTL, reporting each failed refresh without a secret', async () => {
      let now = T0;
      const failures: SecretRefreshFailure[] = [];
      stages(ARN, CURRENT, T0 - 10 * HOUR, PREVIOUS);
      const secrets = port(() => now, { overlapMs: { platform: 72 * HOUR }, failures });
      const known = await secrets.get('platform');
      sm.reset();
      sm.on(GetSecretValueCommand).rejects(outage());

      now = T0 + 5 * MIN + 1;
      expect(await secrets.get('platform')).toEqual(known);
      now = T0 + 65 * MIN - 1;
      expect(await secrets.get('platform')).toEqual(known);
      expect(failures).toEqual([
        { sourceId: 'platform', error: 'InternalServiceError', servedStale: true, ageMs: 5 * MIN + 1 },
        { sourceId: 'platform', error: 'InternalServiceError', servedStale: true, ageMs: 65 * MIN - 1 },
      ]);

      now = T0 + 65 * MIN;
      await expect(secrets.get('platform')).rejects.toBeInstanceOf(InternalServiceError);
      expect(failures).toHaveLength(3);
      expect(failures[2]).toEqual({ sourceId: 'platform', error: 'InternalServiceError', servedStale: false, ageMs: 65 * MIN });
      expect(JSON.stringify(failures)).not.toMatch(/whsec_|MfKQ9r8G|C2FVsBQI/);
    });

    it('tries Secrets Manager again at most every 30 s while serving stale values, then recovers', async () => {
      let now = T0;
      const failures: SecretRefreshFailure[] = [];
      stages(ARN, CURRENT, T0 - 10 * HOUR);
      const secrets = port(() => now, { failures });
      await secrets.get('platform');
      sm.reset();
      sm.on(GetSecretValueCommand).rejects(outage());

      now = T0 + 6 * MIN;
      await secrets.get('platform');
      now += 10 * SEC;
      await secrets.get('platform');
      await secrets.refresh('platform');
      expect(calls()).toBe(2); // one attempt: AWSCURRENT and AWSPREVIOUS
      expect(failures).toHaveLength(1);

      sm.reset();
      stages(ARN, 'whsec_bmV3LWN1cnJlbnQtdmFsdWUtMDEyMzQ1Njc4', T0 + 5 * MIN, CURRENT);
      now += 21 * SEC;
      expect(await secrets.get('platform')).toEqual({
        current: 'whsec_bmV3LWN1cnJlbnQtdmFsdWUtMDEyMzQ1Njc4',
        previous: CURRENT,
        previousUntil: T0 + 5 * MIN + 2 * HOUR,
      });
      expect(failures).toHaveLength(1);
    });

    it('answers a forced refresh inside the TTL with the cached values (the request then gets 401, not 503)', async () => {
      let now = T0;
      const failures: SecretRefreshFailure[] = [];
      stages(ARN, CURRENT, T0 - 10 * HOUR);
      const secrets = port(() => now, { failures });
      await secrets.get('platform');
      sm.reset();
      sm.on(GetSecretValueCommand).rejects(outage());

      now = T0 + MIN;
      expect(await secrets.refresh('platform')).toEqual({ current: CURRENT });
      expect(failures).toEqual([{ sourceId: 'platform', error: 'InternalServiceError', servedStale: true, ageMs: MIN }]);
    });

    it('keeps the recorded end of the overlap while serving stale values: an ended previous stays ended', async () => {
      let now = T0;
      stages(ARN, CURRENT, T0 - 90 * MIN, PREVIOUS); // overlap 2 h: ends at T0 + 30 min
      const secrets = port(() => now);
      expect(activeSecrets(await secrets.get('platform'), now)).toEqual({
        current: CURRENT,
        previous: PREVIOUS,
        previousUntil: T0 + 30 * MIN,
      });
      sm.reset();
      sm.on(GetSecretValueCommand).rejects(outage());

      now = T0 + 40 * MIN;
      const stale = await secrets.get('platform');
      expect(stale).toEqual({ current: CURRENT, previous: PREVIOUS, previousUntil: T0 + 30 * MIN });
      expect(activeSecrets(stale, now)).toEqual({ current: CURRENT });
    });

    it('throws, reporting the failure, when nothing was ever read (intake answers 503)', async () => {
      const failures: SecretRefreshFailure[] = [];
      sm.on(GetSecretValueCommand).rejects(outage());
      await expect(port(() => T0, { failures }).get('platform')).rejects.toBeInstanceOf(InternalServiceError);
      expect(failures).toEqual([{ sourceId: 'platform', error: 'InternalServiceError', servedStale: false }]);
    });
  });

  it('maps each source to its overlap in ms', () => {
    expect(
      overlapMsBySource([
        { id: 'platform', secretOverlapHours: 72 },
        { id: 'github', secretOverlapHours: 1 },
      ]),
    ).toEqual({
      platform: 72 * HOUR,
      github: HOUR,
    });
  });
});

describe('SecretsManagerPort: the first read of an environment', () => {
  const HASH_KEY_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:hookledger-payload-hash-key-MnOpQr';
  const hashKeyPort = () =>
    new SecretsManagerPort({
      reads: clientReads(new SecretsManagerClient({ region: 'eu-west-1' })),
      secretIds: { platform: ARN },
      overlapMs: { platform: 2 * HOUR },
      payloadHashKeySecretId: HASH_KEY_ARN,
      clock: () => T0,
    });

  it("starts the payload-hash key's read alongside the source's: its first webhook waits one round trip, then no further call", async () => {
    stages(ARN, CURRENT, T0 - HOUR);
    sm.on(GetSecretValueCommand, { SecretId: HASH_KEY_ARN }).resolves({ SecretString: 'phk_tenant_204_bucket_key' });
    const secrets = hashKeyPort();
    expect(await secrets.get('platform')).toEqual({ current: CURRENT });
    // AWSCURRENT, AWSPREVIOUS and the key, all sent by the first get.
    expect(
      sm
        .commandCalls(GetSecretValueCommand)
        .map((c) => c.args[0].input.SecretId)
        .sort(),
    ).toEqual([HASH_KEY_ARN, ARN, ARN]);
    expect((await secrets.payloadHashKey()).toString('utf8')).toBe('phk_tenant_204_bucket_key');
    expect(calls()).toBe(3);
  });

  it('keeps no failed early read of the key: the read the request makes tries again and succeeds', async () => {
    stages(ARN, CURRENT, T0 - HOUR);
    sm.on(GetSecretValueCommand, { SecretId: HASH_KEY_ARN }).rejectsOnce(outage()).resolves({ SecretString: 'phk_tenant_204_bucket_key' });
    const secrets = hashKeyPort();
    expect(await secrets.get('platform')).toEqual({ current: CURRENT });
    await new Promise((resolve) => setImmediate(resolve));
    expect((await secrets.payloadHashKey()).toString('utf8')).toBe('phk_tenant_204_bucket_key');
    expect(sm.commandCalls(GetSecretValueCommand, { SecretId: HASH_KEY_ARN })).toHaveLength(2);
  });
});
