import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { activeSecrets, UnknownSecretError } from '../../adapters/secrets';
import { FileSecrets, SecretsFileError } from '../../local/secrets-file';

let dir: string;
let path: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hookledger-secrets-'));
  path = join(dir, '.hookledger', 'secrets.json');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const WHSEC = /^whsec_[A-Za-z0-9+/]{32}$/; // base64 of 24 bytes: 32 characters, no padding
const T0 = Date.parse('2026-11-30T08:00:00Z');
const HOUR = 3_600_000;
const readJson = async () =>
  JSON.parse(await readFile(path, 'utf8')) as { sources: Record<string, Record<string, unknown>>; payloadHashKey: string };

describe('FileSecrets', () => {
  describe('on first use', () => {
    it('creates the file with a fresh Standard Webhooks secret per source, readable only by its owner', async () => {
      const secrets = new FileSecrets({ path, sourceIds: ['platform', 'stripe'] });
      const platform = await secrets.get('platform');

      expect(platform.current).toMatch(WHSEC);
      expect(platform.previous).toBeUndefined();
      expect(Buffer.from(platform.current.slice('whsec_'.length), 'base64')).toHaveLength(24);
      expect((await secrets.get('stripe')).current).not.toBe(platform.current);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect((await stat(join(dir, '.hookledger'))).mode & 0o777).toBe(0o700);
      expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
        sources: { platform: { current: platform.current }, stripe: { current: expect.stringMatching(WHSEC) } },
        payloadHashKey: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
      });
    });

    it('keeps existing secrets and adds one for a newly configured source', async () => {
      const before = await new FileSecrets({ path, sourceIds: ['platform'] }).get('platform');
      const secrets = new FileSecrets({ path, sourceIds: ['platform', 'github'] });

      expect(await secrets.get('platform')).toEqual(before);
      expect((await secrets.get('github')).current).toMatch(WHSEC);
    });
  });

  describe('rotate', () => {
    it('moves current to previous, makes a new current, and records rotatedAt and the overlap end', async () => {
      const secrets = new FileSecrets({ path, sourceIds: ['platform'], clock: () => T0 });
      const before = await secrets.get('platform');
      const rotated = await secrets.rotate('platform', 2 * HOUR);

      expect(rotated).toEqual({ current: expect.stringMatching(WHSEC), previous: before.current, previousUntil: T0 + 2 * HOUR });
      expect(rotated.current).not.toBe(before.current);
      expect((await readJson()).sources.platform).toEqual({
        current: rotated.current,
        previous: before.current,
        rotatedAt: T0,
        previousUntil: T0 + 2 * HOUR,
      });
      expect(await secrets.get('platform')).toEqual(rotated);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    });

    it('bounds the overlap to 72 h when no overlap is given', async () => {
      const secrets = new FileSecrets({ path, sourceIds: ['platform'], clock: () => T0 });
      expect((await secrets.rotate('platform')).previousUntil).toBe(T0 + 72 * HOUR);
    });

    it('keeps only the last rotation: a second one drops the oldest secret and restarts the overlap', async () => {
      let now = T0;
      const secrets = new FileSecrets({ path, sourceIds: ['platform'], clock: () => now });
      const first = await secrets.rotate('platform', HOUR);
      now = T0 + 10 * 60_000;
      const second = await secrets.rotate('platform', HOUR);
      expect(second).toEqual({ current: expect.stringMatching(WHSEC), previous: first.current, previousUntil: now + HOUR });
      expect(JSON.stringify(await readJson())).not.toContain(first.previous);
    });

    it("reaches the running stack's next get, which cached the old secret as current before the rotation", async () => {
      const stack = new FileSecrets({ path, sourceIds: ['platform'], clock: () => T0 });
      const cli = new FileSecrets({ path, sourceIds: ['platform'], clock: () => T0 });
      const before = await stack.get('platform');
      const rotated = await cli.rotate('platform', HOUR);

      expect(rotated.previous).toBe(before.current);
      expect(await stack.get('platform')).toEqual(rotated);
      // Retired by the CLI: the stack's next get no longer has it, neither as previous nor as current.
      await cli.retire('platform');
      expect(await stack.get('platform')).toEqual({ current: rotated.current });
    });

    it("rotates to the provider's value when given one, and keeps the old one as previous", async () => {
      const secrets = new FileSecrets({ path, sourceIds: ['discord'], clock: () => T0 });
      const before = await secrets.get('discord');
      const key = 'b6b5a3f1c2d4e6f8a0b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a5b7c9d1e3f5';
      expect(await secrets.rotate('discord', HOUR, 'sources', key)).toEqual({
        current: key,
        previous: before.current,
        previousUntil: T0 + HOUR,
      });
      expect((await readJson()).sources.discord).toEqual({
        current: key,
        previous: before.current,
        rotatedAt: T0,
        previousUntil: T0 + HOUR,
      });
    });
  });

  describe('retire', () => {
    it('removes previous and its end from the file at once, and says whether there was one', async () => {
      const secrets = new FileSecrets({ path, sourceIds: ['platform'], clock: () => T0 });
      const rotated = await secrets.rotate('platform', 2 * HOUR);

      expect(await secrets.retire('platform')).toEqual({ retired: true });
      expect((await readJson()).sources.platform).toEqual({ current: rotated.current, rotatedAt: T0 });
      expect(await secrets.get('platform')).toEqual({ current: rotated.current });
      expect(await secrets.retire('platform')).toEqual({ retired: false });
      await expect(secrets.retire('stripe')).rejects.toBeInstanceOf(UnknownSecretError);
    });

    it("reaches the running stack's next get while an overlap is open, without waiting for a failed verification", async () => {
      const stack = new FileSecrets({ path, sourceIds: ['platform'], clock: () => T0 + HOUR });
      const cli = new FileSecrets({ path, sourceIds: ['platform'], clock: () => T0 });
      const rotated = await cli.rotate('platform', 2 * HOUR);
      expect(await stack.get('platform')).toEqual(rotated);

      await cli.retire('platform');
      expect(await stack.get('platform')).toEqual({ current: rotated.current });
    });
  });

  describe('a file written before overlaps were recorded', () => {
    const oldFormat = (current: string, previous: string) =>
      writeFile(path, JSON.stringify({ sources: { platform: { current, previous } }, payloadHashKey: 'k'.repeat(44) }), { mode: 0o600 });
    const CURRENT = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const PREVIOUS = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';

    it('is read as it is, and its previous secret (no recorded end) counts as ended', async () => {
      await new FileSecrets({ path, sourceIds: ['platform'] }).get('platform'); // creates the folder
      await oldFormat(CURRENT, PREVIOUS);
      const secrets = new FileSecrets({ path, sourceIds: ['platform'], clock: () => T0 });

      const read = await secrets.refresh('platform');
      expect(read).toEqual({ current: CURRENT, previous: PREVIOUS });
      expect(activeSecrets(read, T0)).toEqual({ current: CURRENT });
    });

    it('rotates to a bounded overlap and retires like a new one', async () => {
      await new FileSecrets({ path, sourceIds: ['platform'] }).get('platform');
      await oldFormat(CURRENT, PREVIOUS);
      const secrets = new FileSecrets({ path, sourceIds: ['platform'], clock: () => T0 });

      expect(await secrets.rotate('platform', HOUR)).toEqual({
        current: expect.stringMatching(WHSEC),
        previous: CURRENT,
        previousUntil: T0 + HOUR,
      });
      await oldFormat(CURRENT, PREVIOUS);
      expect(await secrets.retire('platform')).toEqual({ retired: true });
      expect((await readJson()).sources.platform).toEqual({ current: CURRENT });
    });
  });

  describe('a provider API key (gap check)', () => {
    it('serves sources.<id>.apiKey, keeps it across a rotation and a retire, and names where to set it when absent', async () => {
      const secrets = new FileSecrets({ path, sourceIds: ['stripe'], clock: () => T0 });
      await secrets.get('stripe');
      await expect(secrets.apiKey('stripe')).rejects.toThrow(
        `no provider API key for source "stripe": set sources.stripe.apiKey in ${path}`,
      );
      const file = await readJson();
      await writeFile(path, JSON.stringify({ ...file, sources: { stripe: { ...file.sources.stripe, apiKey: 'rk_live_gap_204' } } }));

      expect(await secrets.apiKey('stripe')).toBe('rk_live_gap_204');
      await secrets.rotate('stripe', HOUR);
      await secrets.retire('stripe');
      expect((await readJson()).sources.stripe!.apiKey).toBe('rk_live_gap_204');
      expect(await secrets.apiKey('stripe')).toBe('rk_live_gap_204');
      // Never part of the signing secrets intake reads.
      expect(Object.keys(await secrets.get('stripe'))).toEqual(['current']);
    });

    it('refuses an apiKey that is not a non-empty string, without quoting a secret', async () => {
      const secrets = new FileSecrets({ path, sourceIds: ['stripe'] });
      await secrets.get('stripe');
      const file = await readJson();
      await writeFile(path, JSON.stringify({ ...file, sources: { stripe: { ...file.sources.stripe, apiKey: 42 } } }));
      const error = await secrets.refresh('stripe').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SecretsFileError);
      expect((error as Error).message).toContain('source "stripe" has an "apiKey" that is not a non-empty string');
      expect((error as Error).message).not.toContain('whsec_');
    });
  });

  describe('errors', () => {
    it('throws UnknownSecretError for a source that is not configured', async () => {
      const secrets = new FileSecrets({ path, sourceIds: ['platform'] });

      await expect(secrets.get('tenant_204-source')).rejects.toBeInstanceOf(UnknownSecretError);
      await expect(secrets.rotate('tenant_204-source')).rejects.toBeInstanceOf(UnknownSecretError);
    });

    it('refuses a malformed file without quoting its content', async () => {
      const secrets = new FileSecrets({ path, sourceIds: ['platform'] });
      await secrets.get('platform');
      await writeFile(path, '{"sources":{"platform":{"current":"whsec_c2VjcmV0LXZhbHVlLWxlYWs=", ');

      const error = await secrets.refresh('platform').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SecretsFileError);
      expect(String((error as Error).message)).not.toContain('whsec_');
      expect((error as Error).cause).toBeUndefined();
    });

    it('refuses a previousUntil or rotatedAt that is not a time, without quoting a secret', async () => {
      const secrets = new FileSecrets({ path, sourceIds: ['platform'] });
      await secrets.get('platform');
      for (const entry of [{ previousUntil: '2026-12-01' }, { rotatedAt: -5 }]) {
        const file = await readJson();
        await writeFile(path, JSON.stringify({ ...file, sources: { platform: { ...file.sources.platform, ...entry } } }));
        const error = await secrets.refresh('platform').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SecretsFileError);
        expect((error as Error).message).toMatch(/source "platform" has a "(previousUntil|rotatedAt)" that is not epoch ms/);
        expect((error as Error).message).not.toContain('whsec_');
        await writeFile(path, JSON.stringify(file));
      }
    });

    it('tightens a file that others can read', async () => {
      const secrets = new FileSecrets({ path, sourceIds: ['platform'] });
      await secrets.get('platform');
      await chmod(path, 0o644);

      await new FileSecrets({ path, sourceIds: ['platform'] }).get('platform');
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    });
  });
});
