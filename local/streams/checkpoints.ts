/**
 * Stream checkpoints kept in a file next to a file-backed DynamoDB Local, so that restarting
 * `npm start` resumes the fan-out where it stopped instead of re-reading the last 24 hours of the
 * stream (harmless, since consumers find those deliveries done, but noisy and slow).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Durable shard checkpoints: the last sequence number done with, per stream and shard. */
export interface CheckpointStore {
  load(streamArn: string, shardId: string): string | undefined;
  save(streamArn: string, shardId: string, sequenceNumber: string | undefined): void;
}

export function fileCheckpointStore(path: string): CheckpointStore {
  let saved: Record<string, string> = {};
  try {
    saved = JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      // A damaged file only costs a re-read from TRIM_HORIZON (at-least-once): start afresh.
      saved = {};
    }
  }
  const key = (streamArn: string, shardId: string) => `${streamArn} ${shardId}`;
  return {
    load: (streamArn, shardId) => saved[key(streamArn, shardId)],
    save(streamArn, shardId, sequenceNumber) {
      if (sequenceNumber === undefined) delete saved[key(streamArn, shardId)];
      else saved[key(streamArn, shardId)] = sequenceNumber;
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      const temporary = `${path}.${process.pid}.tmp`;
      // Its owner's only, as the rest of the data folder (local/emulators.ts).
      writeFileSync(temporary, `${JSON.stringify(saved, null, 1)}\n`, { mode: 0o600 });
      renameSync(temporary, path);
    },
  };
}
