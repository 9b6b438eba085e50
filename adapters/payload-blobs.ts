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
import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { StorageUnavailableError } from './errors';

export interface PayloadBlobs {
  /** Writes the object (overwriting the same key is harmless: the key names the content). */
  put(key: string, body: Buffer, contentType?: string): Promise<void>;
  /** The object's bytes, or undefined when there is no such object. */
  get(key: string): Promise<Buffer | undefined>;
}

export interface S3PayloadBlobsOptions {
  readonly client: S3Client;
  readonly bucket: string;
}

export class S3PayloadBlobs implements PayloadBlobs {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3PayloadBlobsOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
  }

  async put(key: string, body: Buffer, contentType = 'application/octet-stream'): Promise<void> {
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType }));
    } catch (error) {
      throw translateS3(error, 'put');
    }
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!out.Body) return undefined;
      return Buffer.from(await out.Body.transformToByteArray());
    } catch (error) {
      if (error instanceof NoSuchKey || (error instanceof Error && error.name === 'NoSuchKey')) return undefined;
      throw translateS3(error, 'get');
    }
  }
}

function translateS3(error: unknown, operation: string): StorageUnavailableError {
  const name = error instanceof Error ? error.name : 'unknown';
  return new StorageUnavailableError(`payload bucket unavailable (${operation}: ${name})`, { cause: error });
}
