/**
 * The local payload bucket kept on disk (local/durable-s3.ts): fauxqs's S3 behind the real S3 client,
 * whose objects a second emulator started on the same folder serves again, byte for byte, with their
 * content types; deletes are kept too, and the files are the owner's alone.
 */
import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it } from 'vitest';
import { localS3Client } from '../../local/clients';
import { freePort, type SqsEmulator, startSqsEmulator } from '../../local/emulators';

const BUCKET = 'hookledger-payloads';
const running: { emulator: SqsEmulator; s3: S3Client }[] = [];
afterEach(async () => {
  for (const { emulator, s3 } of running.splice(0)) {
    s3.destroy();
    await emulator.stop();
  }
});

async function start(s3Dir: string | null) {
  const emulator = await startSqsEmulator({ port: await freePort(), s3Dir });
  const s3 = localS3Client(emulator.endpoint);
  running.push({ emulator, s3 });
  return s3;
}

async function read(s3: S3Client, key: string) {
  const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return { contentType: out.ContentType, body: Buffer.from(await out.Body!.transformToByteArray()) };
}

async function keys(s3: S3Client): Promise<string[]> {
  return ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((o) => o.Key!).sort();
}

describe('the local payload bucket kept on disk', () => {
  it('serves after a restart the objects written before it, less the ones deleted, byte for byte', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hookledger-s3-'));
    const s3Dir = path.join(dir, 's3');
    const gzipped = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0x00, 0x0a, 0x0d]);
    let s3 = await start(s3Dir);
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: 'payloads/platform/evt_01J8K7S001/ab12',
        Body: gzipped,
        ContentType: 'application/gzip',
      }),
    );
    await s3.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: 'views/risk-evaluator/evt_01J8K7S001/cd34', Body: '{"id":"evt_01J8K7S001"}' }),
    );
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'payloads/platform/evt_01J8K7S002/ef56', Body: 'gone' }));
    await s3.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: 'payloads/platform/evt_01J8K7S002/ef56' }] } }));
    // A multipart upload (one part) is kept once completed.
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'payloads/platform/evt_01J8K7S003/0a0b' }));
    const { ETag } = await s3.send(
      new UploadPartCommand({ Bucket: BUCKET, Key: 'payloads/platform/evt_01J8K7S003/0a0b', UploadId, PartNumber: 1, Body: 'part one' }),
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key: 'payloads/platform/evt_01J8K7S003/0a0b',
        UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag }] },
      }),
    );
    // A write cut short by a kill leaves only its temporary file, which the next start ignores.
    writeFileSync(path.join(s3Dir, BUCKET, `${'f'.repeat(64)}.obj.partial`), '{"key":"payloads/platform/evt_torn/00"');
    await running.splice(0)[0]!.emulator.stop();

    s3 = await start(s3Dir);
    expect(await keys(s3)).toEqual([
      'payloads/platform/evt_01J8K7S001/ab12',
      'payloads/platform/evt_01J8K7S003/0a0b',
      'views/risk-evaluator/evt_01J8K7S001/cd34',
    ]);
    expect(await read(s3, 'payloads/platform/evt_01J8K7S001/ab12')).toEqual({ contentType: 'application/gzip', body: gzipped });
    expect((await read(s3, 'views/risk-evaluator/evt_01J8K7S001/cd34')).body.toString()).toBe('{"id":"evt_01J8K7S001"}');
    expect((await read(s3, 'payloads/platform/evt_01J8K7S003/0a0b')).body.toString()).toBe('part one');
    await expect(read(s3, 'payloads/platform/evt_01J8K7S002/ef56')).rejects.toThrow(expect.objectContaining({ name: 'NoSuchKey' }));

    // Owner-only, like the tables: folders 0700, files 0600.
    expect(statSync(s3Dir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(s3Dir, BUCKET)).mode & 0o777).toBe(0o700);
    const objects = readdirSync(path.join(s3Dir, BUCKET)).filter((f) => f.endsWith('.obj'));
    expect(objects).toHaveLength(3);
    for (const file of objects) expect(statSync(path.join(s3Dir, BUCKET, file)).mode & 0o777).toBe(0o600);
  });

  it('without a folder keeps nothing across a restart, as fauxqs does', async () => {
    let s3 = await start(null);
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'payloads/platform/evt_01J8K7S004/aa', Body: 'x' }));
    expect(await keys(s3)).toEqual(['payloads/platform/evt_01J8K7S004/aa']);
    await running.splice(0)[0]!.emulator.stop();
    s3 = await start(null);
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    expect(await keys(s3)).toEqual([]);
  });
});
