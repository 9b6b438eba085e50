import { mkdtemp, readFile, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UnknownSecretError } from '../../lambdas/shared/secrets';
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
    it('moves current to previous and makes a new current', async () => {
      const secrets = new FileSecrets({ path, sourceIds: ['platform'] });
      const before = await secrets.get('platform');
      const rotated = await secrets.rotate('platform');

      expect(rotated.previous).toBe(before.current);
      expect(rotated.current).toMatch(WHSEC);
      expect(rotated.current).not.toBe(before.current);
      expect(await secrets.get('platform')).toEqual(rotated);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    });

    it('reaches another process only through refresh, like a cached Secrets Manager read', async () => {
      const stack = new FileSecrets({ path, sourceIds: ['platform'] });
      const cli = new FileSecrets({ path, sourceIds: ['platform'] });
      const before = await stack.get('platform');
      const rotated = await cli.rotate('platform');

      expect(await stack.get('platform')).toEqual(before);
      expect(await stack.refresh('platform')).toEqual(rotated);
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

    it('tightens a file that others can read', async () => {
      const secrets = new FileSecrets({ path, sourceIds: ['platform'] });
      await secrets.get('platform');
      await chmod(path, 0o644);

      await new FileSecrets({ path, sourceIds: ['platform'] }).get('platform');
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    });
  });
});
