/**
 * The payload bucket behind a small port: bodies too large for a payload item (intake puts, the
 * fan-out gets) and consumers' narrowed views too large for a queue message (the fan-out puts, each
 * consumer gets its own). Keys come from core/blobs.ts. The S3 adapter serves AWS and the local stack
 * alike (fauxqs emulates S3 on its SQS endpoint; the local client is path-style).
 *
 * Errors: `get` of a missing object is `undefined` (the lifecycle has expired it, or it was never
 * written); every other S3 error becomes StorageUnavailableError, which intake answers 503 and the
 * fan-out and runtime retry.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { RETENTION_TAG } from '../core/blobs';
import { StorageUnavailableError } from './errors';
import { onFirstUse } from './lazy';

/**
 * The S3 client's module, loaded by the first call that needs the bucket, once per process. The only
 * import of the S3 client among the handlers' modules: a bundle keeps that client apart
 * (lib/constructs/hookledger-function.ts, APART_PACKAGES), so a cold start loads none of it and this
 * adapter can sit in the cold start's chunk, costing a few hundred bytes there.
 */
const loadS3 = onFirstUse(() => import('@aws-sdk/client-s3'));
type S3Module = Awaited<ReturnType<typeof loadS3>>;

/** What intake needs of the bucket: writing bodies too large for their item. */
export interface BlobWrites {
  /**
   * Writes the object (overwriting the same key is harmless: the key names the content). With
   * `retentionDays`, the object is tagged with it (RETENTION_TAG): the bucket's lifecycle rule for
   * that value expires it.
   */
  put(key: string, body: Buffer, contentType?: string, retentionDays?: number): Promise<void>;
}

export interface PayloadBlobs extends BlobWrites {
  /** The object's bytes, or undefined when there is no such object. */
  get(key: string): Promise<Buffer | undefined>;
}

/** What erasure needs of the bucket (the operator's grants: list under a prefix, delete). */
export interface ErasableBlobs {
  /** Every object key under `prefix`, all pages. */
  list(prefix: string): Promise<string[]>;
  /** Deletes these keys (up to 1,000 per request); a key that is already gone is no error. */
  delete(keys: readonly string[]): Promise<void>;
}

export interface S3PayloadBlobsOptions {
  /** The client to send with (tests, the CLI); without one, a default client is built on the first call. */
  readonly client?: S3Client;
  readonly bucket: string;
}

/**
 * The bucket through a client of its own, as the Lambdas use it: nothing of S3 loads until the first
 * body or view that needs the bucket.
 */
export function s3PayloadBlobs(bucket: string): S3PayloadBlobs {
  return new S3PayloadBlobs({ bucket });
}

/** `s3PayloadBlobs` for intake, which only writes: its bundle holds no reads, lists or deletes. */
export function s3BlobWrites(bucket: string): S3BlobWrites {
  return new S3BlobWrites({ bucket });
}

/** Puts only (intake's part); S3PayloadBlobs adds the reads, lists and deletes. */
export class S3BlobWrites implements BlobWrites {
  private client: S3Client | undefined;
  protected readonly bucket: string;

  constructor(options: S3PayloadBlobsOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
  }

  /** The SDK's module and the client, the default one built on the first call that needs it. */
  protected async s3(): Promise<{ readonly sdk: S3Module; readonly client: S3Client }> {
    const sdk = await loadS3();
    this.client ??= new sdk.S3Client({});
    return { sdk, client: this.client };
  }

  async put(key: string, body: Buffer, contentType = 'application/octet-stream', retentionDays?: number): Promise<void> {
    const { sdk, client } = await this.s3();
    try {
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: body,
          ContentType: contentType,
          ...(retentionDays !== undefined ? { Tagging: `${RETENTION_TAG}=${retentionDays}` } : {}),
        }),
      );
    } catch (error) {
      throw translateS3(error, 'put');
    }
  }
}

export class S3PayloadBlobs extends S3BlobWrites implements PayloadBlobs, ErasableBlobs {
  async get(key: string): Promise<Buffer | undefined> {
    const { sdk, client } = await this.s3();
    try {
      const out = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!out.Body) return undefined;
      return Buffer.from(await out.Body.transformToByteArray());
    } catch (error) {
      if (error instanceof sdk.NoSuchKey || (error instanceof Error && error.name === 'NoSuchKey')) return undefined;
      throw translateS3(error, 'get');
    }
  }

  async list(prefix: string): Promise<string[]> {
    const { sdk, client } = await this.s3();
    const keys: string[] = [];
    let token: string | undefined;
    try {
      do {
        const out = await client.send(new sdk.ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
        for (const o of out.Contents ?? []) if (o.Key) keys.push(o.Key);
        token = out.IsTruncated ? out.NextContinuationToken : undefined;
      } while (token);
    } catch (error) {
      throw translateS3(error, 'list');
    }
    return keys;
  }

  async delete(keys: readonly string[]): Promise<void> {
    const { sdk, client } = await this.s3();
    for (let i = 0; i < keys.length; i += 1000) {
      const chunk = keys.slice(i, i + 1000);
      let out: { Errors?: { Key?: string; Code?: string }[] };
      try {
        out = await client.send(
          new sdk.DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: chunk.map((Key) => ({ Key })), Quiet: true } }),
        );
      } catch (error) {
        throw translateS3(error, 'delete');
      }
      const failed = out.Errors ?? [];
      if (failed.length > 0) {
        throw new StorageUnavailableError(
          `payload bucket refused to delete ${failed.length} object(s) (first: ${failed[0]?.Code ?? 'unknown'})`,
        );
      }
    }
  }
}

function translateS3(error: unknown, operation: string): StorageUnavailableError {
  const name = error instanceof Error ? error.name : 'unknown';
  return new StorageUnavailableError(`payload bucket unavailable (${operation}: ${name})`, { cause: error });
}
