/**
 * Ports whose adapter, and the AWS SDK client under it, loads on first use: the handler passes the
 * `import()` that builds the real adapter, and code splitting (lib/constructs/hookledger-function.ts)
 * keeps that module out of the cold start. For the clients of rare paths: Secrets Manager's client
 * (its reads; the port itself is built at cold start), the verification-key endpoint, DynamoDB
 * Streams (S3's adapter loads its client itself, with `onFirstUse`: adapters/payload-blobs.ts). Every call is the real adapter's call, with its answer
 * and its errors; one load per execution environment (the adapter's caches live in it), and a
 * failed load is not remembered.
 * No SDK import here, on purpose.
 */
import type { VerificationKeysPort } from '../core/schemes/types';
import type { SecretReads } from './secrets-manager';
import type { StreamBatchPort } from './stream-batch';

/** `load` once; concurrent first calls share the one load; a rejected load is tried again next time. */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}

/**
 * Secrets Manager's reads, the client loaded with the first (lambdas/ingest/handler.ts). `isMissing`
 * is only ever asked about a rejection of `read`, so the reads are loaded by then.
 */
export function lazySecretReads(load: () => Promise<SecretReads>): SecretReads {
  const reads = onFirstUse(load);
  let loaded: SecretReads | undefined;
  return {
    read: async (secretId, stage) => {
      loaded = await reads();
      return loaded.read(secretId, stage);
    },
    isMissing: (error) => loaded?.isMissing(error) ?? false,
  };
}

export function lazyVerificationKeys(load: () => Promise<VerificationKeysPort>): VerificationKeysPort {
  const keys = onFirstUse(load);
  return { get: async (request) => (await keys()).get(request) };
}

export function lazyStreamBatches(load: () => Promise<StreamBatchPort>): StreamBatchPort {
  const streams = onFirstUse(load);
  return { read: async (ref) => (await streams()).read(ref) };
}
