/**
 * The local payload bucket, kept on disk. fauxqs serves S3 from memory only, so without this a local
 * restart (Ctrl-C, a crash) would lose every body stored in the bucket, bodies intake had already
 * answered 202 for, while their receipts survive in the file-backed tables. This store is fauxqs's
 * own (`stores.s3Store` of its `buildApp`), with each write also made to a file before the request is
 * answered, and every file read back at start: the same S3 behaviour, durable as DynamoDB Local's
 * tables are (a process killed at any point keeps what was answered; the machine's own crash is
 * beyond both).
 *
 * On disk: `<dir>/<bucket>/<sha256 of the key>.obj`, one file an object: its metadata as one JSON
 * line (key, content type, user metadata), then the bytes. Written to a temporary name and renamed,
 * so a file is whole or absent; the folders are 0700 and the files 0600, like the rest of the local
 * data. fauxqs does not keep tags or run lifecycle rules, so nothing here expires.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** What fauxqs's S3Store offers that this store extends (fauxqs/dist/s3/s3Store.d.ts). */
interface S3StoreLike {
  createBucket(name: string): void;
  deleteBucket(name: string): void;
  hasBucket(name: string): boolean;
  putObject(bucket: string, key: string, body: Buffer, contentType?: string, metadata?: Record<string, string>): S3ObjectLike;
  deleteObject(bucket: string, key: string): void;
  createMultipartUpload(bucket: string, key: string, contentType?: string, metadata?: Record<string, string>): string;
  completeMultipartUpload(uploadId: string, parts: { partNumber: number; etag: string }[]): S3ObjectLike;
  emptyBucket(name: string): void;
  clearObjects(): void;
  purgeAll(): void;
}

interface S3ObjectLike {
  readonly key: string;
  readonly body: Buffer;
  readonly contentType: string;
  readonly metadata: Record<string, string>;
}

type S3StoreClass = new () => S3StoreLike;

/** The file's first line. */
interface ObjectHeader {
  readonly key: string;
  readonly contentType: string;
  readonly metadata: Record<string, string>;
}

/**
 * fauxqs's S3Store class. The package exports only `buildApp`; the store is read from the module
 * beside it, as `buildApp` itself imports it (test/local/durable-s3.test.ts fails if a fauxqs release
 * moves it).
 */
async function fauxqsS3Store(): Promise<S3StoreClass> {
  const app = fileURLToPath(import.meta.resolve('fauxqs'));
  const module = (await import(pathToFileURL(path.join(path.dirname(app), 's3', 's3Store.js')).href)) as { S3Store?: S3StoreClass };
  if (typeof module.S3Store !== 'function') {
    throw new Error(`fauxqs no longer has its S3Store beside ${app}; the local bucket cannot be kept on disk with this fauxqs release`);
  }
  return module.S3Store;
}

/** A fauxqs S3 store whose objects live in `dir` too, and are read back from it. */
export async function durableS3Store(dir: string): Promise<S3StoreLike> {
  const Base = await fauxqsS3Store();

  class DurableS3Store extends Base {
    /** uploadId -> bucket, for the multipart uploads in progress (the base keeps it privately). */
    private readonly uploads = new Map<string, string>();

    constructor() {
      super();
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      for (const bucket of readdirSync(dir, { withFileTypes: true })) {
        if (!bucket.isDirectory()) continue;
        super.createBucket(bucket.name);
        for (const file of readdirSync(path.join(dir, bucket.name))) {
          if (!file.endsWith('.obj')) continue;
          const bytes = readFileSync(path.join(dir, bucket.name, file));
          const eol = bytes.indexOf(0x0a);
          const header = JSON.parse(bytes.subarray(0, eol).toString('utf8')) as ObjectHeader;
          super.putObject(bucket.name, header.key, Buffer.from(bytes.subarray(eol + 1)), header.contentType, header.metadata);
        }
      }
    }

    override createBucket(name: string): void {
      super.createBucket(name);
      mkdirSync(bucketDir(name), { recursive: true, mode: 0o700 });
    }

    override deleteBucket(name: string): void {
      super.deleteBucket(name);
      rmSync(bucketDir(name), { recursive: true, force: true });
    }

    override putObject(bucket: string, key: string, body: Buffer, contentType?: string, metadata?: Record<string, string>): S3ObjectLike {
      const object = super.putObject(bucket, key, body, contentType, metadata);
      keep(bucket, object);
      return object;
    }

    override deleteObject(bucket: string, key: string): void {
      super.deleteObject(bucket, key);
      rmSync(objectFile(bucket, key), { force: true });
    }

    override createMultipartUpload(bucket: string, key: string, contentType?: string, metadata?: Record<string, string>): string {
      const uploadId = super.createMultipartUpload(bucket, key, contentType, metadata);
      this.uploads.set(uploadId, bucket);
      return uploadId;
    }

    override completeMultipartUpload(uploadId: string, parts: { partNumber: number; etag: string }[]): S3ObjectLike {
      const bucket = this.uploads.get(uploadId);
      const object = super.completeMultipartUpload(uploadId, parts);
      this.uploads.delete(uploadId);
      if (bucket !== undefined) keep(bucket, object);
      return object;
    }

    override emptyBucket(name: string): void {
      super.emptyBucket(name);
      if (this.hasBucket(name)) emptyDir(bucketDir(name));
    }

    override clearObjects(): void {
      super.clearObjects();
      for (const bucket of readdirSync(dir, { withFileTypes: true })) if (bucket.isDirectory()) emptyDir(path.join(dir, bucket.name));
    }

    override purgeAll(): void {
      super.purgeAll();
      for (const bucket of readdirSync(dir, { withFileTypes: true }))
        if (bucket.isDirectory()) rmSync(path.join(dir, bucket.name), { recursive: true, force: true });
    }
  }

  const bucketDir = (bucket: string) => path.join(dir, bucket);
  const objectFile = (bucket: string, key: string) => path.join(dir, bucket, `${createHash('sha256').update(key).digest('hex')}.obj`);

  /** The object's file, whole or not at all: written aside, then renamed over any older one. */
  function keep(bucket: string, object: S3ObjectLike): void {
    const header: ObjectHeader = { key: object.key, contentType: object.contentType, metadata: object.metadata };
    const file = objectFile(bucket, object.key);
    const partial = `${file}.partial`;
    mkdirSync(bucketDir(bucket), { recursive: true, mode: 0o700 });
    writeFileSync(partial, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), object.body]), { mode: 0o600 });
    renameSync(partial, file);
  }

  function emptyDir(folder: string): void {
    for (const file of readdirSync(folder)) rmSync(path.join(folder, file), { force: true });
  }

  return new DurableS3Store();
}
