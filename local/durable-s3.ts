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
import { HookledgerError } from '../core/errors';

/**
 * The local payload bucket cannot be kept on disk: the fauxqs release installed does not have its S3
 * store where this module extends it. Start-up stops; the message names the install or code to fix.
 */
export class DurableBucketError extends HookledgerError {
  override readonly name = 'DurableBucketError';
}

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
    throw new DurableBucketError(
      `fauxqs no longer has its S3Store beside ${app}, so the local payload bucket cannot be kept on disk with this fauxqs ` +
        'release; install the fauxqs version package.json pins (npm ci), or point fauxqsS3Store in local/durable-s3.ts at ' +
        'where this release keeps its S3 store',
    );
  }
  return module.S3Store;
}

/** A fauxqs S3 store whose objects live in `dir` too, and are read back from it. */
export async function durableS3Store(dir: string): Promise<S3StoreLike> {
  const Base = await fauxqsS3Store();
  const folder = new BucketFolder(dir);

  // Each change is made by fauxqs's store first, then kept in the folder, before the request is answered.
  class DurableS3Store extends Base {
    /** uploadId -> bucket, for the multipart uploads in progress (the base keeps it privately). */
    private readonly uploads = new Map<string, string>();

    constructor() {
      super();
      for (const bucket of folder.buckets()) {
        super.createBucket(bucket);
        for (const { header, body } of folder.objects(bucket)) {
          super.putObject(bucket, header.key, body, header.contentType, header.metadata);
        }
      }
    }

    override createBucket(name: string): void {
      super.createBucket(name);
      folder.addBucket(name);
    }

    override deleteBucket(name: string): void {
      super.deleteBucket(name);
      folder.removeBucket(name);
    }

    override putObject(bucket: string, key: string, body: Buffer, contentType?: string, metadata?: Record<string, string>): S3ObjectLike {
      const object = super.putObject(bucket, key, body, contentType, metadata);
      folder.keep(bucket, object);
      return object;
    }

    override deleteObject(bucket: string, key: string): void {
      super.deleteObject(bucket, key);
      folder.remove(bucket, key);
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
      if (bucket !== undefined) folder.keep(bucket, object);
      return object;
    }

    override emptyBucket(name: string): void {
      super.emptyBucket(name);
      if (this.hasBucket(name)) folder.emptyBucket(name);
    }

    override clearObjects(): void {
      super.clearObjects();
      for (const bucket of folder.buckets()) folder.emptyBucket(bucket);
    }

    override purgeAll(): void {
      super.purgeAll();
      for (const bucket of folder.buckets()) folder.removeBucket(bucket);
    }
  }

  return new DurableS3Store();
}

/** The objects on disk: `<dir>/<bucket>/<sha256 of the key>.obj`, each written whole or not at all. */
class BucketFolder {
  constructor(private readonly dir: string) {}

  /** The buckets kept (creating the folder the first time). */
  buckets(): string[] {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    return readdirSync(this.dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  }

  /** Every object kept in `bucket`, read back from its file. */
  *objects(bucket: string): Generator<{ readonly header: ObjectHeader; readonly body: Buffer }> {
    for (const file of readdirSync(this.bucketDir(bucket))) {
      if (!file.endsWith('.obj')) continue;
      const bytes = readFileSync(path.join(this.bucketDir(bucket), file));
      const eol = bytes.indexOf(0x0a);
      const header = JSON.parse(bytes.subarray(0, eol).toString('utf8')) as ObjectHeader;
      yield { header, body: Buffer.from(bytes.subarray(eol + 1)) };
    }
  }

  addBucket(bucket: string): void {
    mkdirSync(this.bucketDir(bucket), { recursive: true, mode: 0o700 });
  }

  removeBucket(bucket: string): void {
    rmSync(this.bucketDir(bucket), { recursive: true, force: true });
  }

  emptyBucket(bucket: string): void {
    for (const file of readdirSync(this.bucketDir(bucket))) rmSync(path.join(this.bucketDir(bucket), file), { force: true });
  }

  /** The object's file, whole or not at all: written aside, then renamed over any older one. */
  keep(bucket: string, object: S3ObjectLike): void {
    const header: ObjectHeader = { key: object.key, contentType: object.contentType, metadata: object.metadata };
    const file = this.objectFile(bucket, object.key);
    const partial = `${file}.partial`;
    this.addBucket(bucket);
    writeFileSync(partial, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), object.body]), { mode: 0o600 });
    renameSync(partial, file);
  }

  remove(bucket: string, key: string): void {
    rmSync(this.objectFile(bucket, key), { force: true });
  }

  private bucketDir(bucket: string): string {
    return path.join(this.dir, bucket);
  }

  private objectFile(bucket: string, key: string): string {
    return path.join(this.dir, bucket, `${createHash('sha256').update(key).digest('hex')}.obj`);
  }
}
