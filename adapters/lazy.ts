/**
 * Ports whose adapter, and the AWS SDK client under it, loads on first use: the handler passes the
 * `import()` that builds the real adapter, and code splitting (lib/constructs/hookledger-function.ts)
 * keeps that module out of the cold start. For the clients of rare paths: S3 (bodies over
 * `payloads.inlineMaxBytes`, claim-checked views), Secrets Manager, the verification-key endpoint,
 * DynamoDB Streams. Every call is the real adapter's call, with its answer and its errors; one load
 * per execution environment (the adapter's caches live in it), and a failed load is not remembered.
 * No SDK import here, on purpose.
 */
import type { SigningSecrets, VerificationKeysPort } from '../core/schemes/types';
import type { PayloadBlobs } from './payload-blobs';
import type { SecretsPort } from './secrets';
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

export function lazyPayloadBlobs(load: () => Promise<PayloadBlobs>): PayloadBlobs {
  const blobs = onFirstUse(load);
  return {
    // Every argument, the retention tag included (the bucket's lifecycle rule for it expires the object).
    put: async (...args) => (await blobs()).put(...args),
    get: async (key) => (await blobs()).get(key),
  };
}

export function lazySecrets(load: () => Promise<SecretsPort>): SecretsPort {
  const secrets = onFirstUse(load);
  return {
    get: async (sourceId): Promise<SigningSecrets> => (await secrets()).get(sourceId),
    refresh: async (sourceId): Promise<SigningSecrets> => (await secrets()).refresh(sourceId),
    payloadHashKey: async () => (await secrets()).payloadHashKey(),
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
