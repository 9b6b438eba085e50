/**
 * Ports whose adapter loads on first use (adapters/lazy.ts): the handlers pass the import() that
 * builds the real adapter, so its SDK client stays out of the cold start. Behaviour must be the real
 * adapter's: every call delegated with its arguments and answer, one load per environment, and a
 * failed load not remembered.
 */
import { describe, expect, it } from 'vitest';
import { lazySecretReads, lazyStreamBatches, lazyVerificationKeys, onFirstUse } from '../../adapters/lazy';

describe('onFirstUse', () => {
  it('loads once for three concurrent first calls and once more never', async () => {
    let loads = 0;
    const get = onFirstUse(async () => {
      loads += 1;
      return { id: `adapter_${loads}` };
    });
    const [a, b, c] = await Promise.all([get(), get(), get()]);
    expect([a.id, b.id, c.id]).toEqual(['adapter_1', 'adapter_1', 'adapter_1']);
    expect((await get()).id).toBe('adapter_1');
    expect(loads).toBe(1);
  });

  it('does not remember a failed load: the next call loads again (a chunk read that failed once)', async () => {
    let loads = 0;
    const get = onFirstUse(async () => {
      loads += 1;
      if (loads === 1) throw new Error('EMFILE: chunks/client-s3-X7Q2.mjs');
      return 'adapter_2';
    });
    await expect(get()).rejects.toThrow('EMFILE: chunks/client-s3-X7Q2.mjs');
    expect(await get()).toBe('adapter_2');
    expect(loads).toBe(2);
  });
});

describe('lazy ports delegate every call, loading nothing before the first', () => {
  it("secret reads: read answers as the client does, and isMissing asks the loaded reads about read's rejections", async () => {
    let loads = 0;
    const missing = new Error("Secrets Manager can't find the specified secret version");
    const reads = lazySecretReads(async () => {
      loads++;
      return {
        read: async (secretId: string, stage?: string) => {
          if (stage === 'AWSPREVIOUS') throw missing;
          return { value: `whsec_current_of_${secretId}`, createdAt: 1_733_011_200_000 };
        },
        isMissing: (error: unknown) => error === missing,
      };
    });
    // Before any read nothing is loaded, and nothing can be missing yet.
    expect(reads.isMissing(missing)).toBe(false);
    expect(loads).toBe(0);
    expect(await reads.read('hookledger/platform')).toEqual({
      value: 'whsec_current_of_hookledger/platform',
      createdAt: 1_733_011_200_000,
    });
    const rejection = await reads.read('hookledger/platform', 'AWSPREVIOUS').catch((error: unknown) => error);
    expect(rejection).toBe(missing);
    expect(reads.isMissing(rejection)).toBe(true);
    expect(reads.isMissing(new Error('ThrottlingException'))).toBe(false);
    expect(loads).toBe(1);
  });

  it('verification keys and stream batches: the request reaches the adapter unchanged', async () => {
    const seen: unknown[] = [];
    const keys = lazyVerificationKeys(async () => ({
      get: async (request) => {
        seen.push(request);
        return { kty: 'EC', kid: request.kid };
      },
    }));
    expect(await keys.get({ kid: 'kid_7Q', sourceId: 'plaid', credentials: 'secret' } as never)).toEqual({ kty: 'EC', kid: 'kid_7Q' });
    expect(seen).toEqual([{ kid: 'kid_7Q', sourceId: 'plaid', credentials: 'secret' }]);
    const streams = lazyStreamBatches(async () => ({ read: async (ref) => ({ records: [], ref }) as never }));
    expect(await streams.read({ shardId: 'shardId-000001' } as never)).toEqual({ records: [], ref: { shardId: 'shardId-000001' } });
  });
});
