/**
 * Step 1, the emulators: DynamoDB Local (with Streams) and fauxqs (SQS, and S3 on the same
 * endpoint). File-backed data keeps the bucket's objects beside the tables, so a body intake
 * answered 202 for survives a restart (local/durable-s3.ts).
 */
import path from 'node:path';
import { type DynamoLocal, freePort, startDynamoLocal, startSqsEmulator } from '../emulators';
import type { StopList } from './stops';

export interface EmulatorOptions {
  /** DynamoDB Local's folder; null keeps everything in memory. */
  readonly dataDir: string | null;
  /** Default: a free port. */
  readonly dynamoPort?: number;
  /** Default: a free port. */
  readonly sqsPort?: number;
}

export interface Endpoints {
  readonly dynamodb: string;
  readonly sqs: string;
  readonly s3: string;
}

export interface Emulators {
  /** The raw emulator endpoints (fauxqs serves S3 on its SQS endpoint). */
  readonly endpoints: Endpoints;
  readonly dynamoPort: number;
  readonly dataDir: string | null;
  /** SIGKILLs DynamoDB Local (no shutdown hook runs); the rest keeps running. */
  killStorage(): Promise<void>;
  /** Starts DynamoDB Local again on the same port and data folder. */
  startStorage(): Promise<void>;
}

export async function startEmulators(options: EmulatorOptions, stops: StopList): Promise<Emulators> {
  const { dataDir } = options;
  const dynamoPort = options.dynamoPort ?? (await freePort());
  let dynamo: DynamoLocal | undefined = await startDynamoLocal({ port: dynamoPort, dbPath: dataDir });
  const endpoint = dynamo.endpoint;
  stops.add(async () => dynamo?.stop());
  const fauxqs = await startSqsEmulator({
    port: options.sqsPort ?? (await freePort()),
    s3Dir: dataDir === null ? null : path.join(dataDir, 's3'),
  });
  stops.add(() => fauxqs.stop());
  return {
    endpoints: { dynamodb: endpoint, sqs: fauxqs.endpoint, s3: fauxqs.endpoint },
    dynamoPort,
    dataDir,
    async killStorage() {
      const current = dynamo;
      if (!current) return;
      dynamo = undefined;
      if (current.pid !== undefined) process.kill(current.pid, 'SIGKILL');
      await current.stop();
    },
    async startStorage() {
      dynamo ??= await startDynamoLocal({ port: dynamoPort, dbPath: dataDir });
    },
  };
}
