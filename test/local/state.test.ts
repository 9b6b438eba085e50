import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type LocalStackState,
  readRunningState,
  readState,
  removeState,
  StateFileError,
  webhookUrlFor,
  writeState,
} from '../../local/state';

let dir: string;
let path: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hookledger-state-'));
  path = join(dir, '.hookledger', 'state.json');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function state(overrides: Partial<LocalStackState> = {}): LocalStackState {
  return {
    version: 1,
    pid: process.pid,
    startedAt: '2026-11-29T22:00:00.000Z',
    region: 'us-east-1',
    dynamo: { endpoint: 'http://127.0.0.1:8000', port: 8000, dbPath: '.hookledger/dynamodb' },
    sqs: { endpoint: 'http://127.0.0.1:4566', port: 4566 },
    gateway: { url: 'http://127.0.0.1:4010', port: 4010 },
    webhookUrl: 'http://127.0.0.1:4010/hooks/{source}',
    adminUrl: 'http://127.0.0.1:4011',
    secretsFile: '.hookledger/secrets.json',
    tables: { events: 'hookledger-events', ledger: 'hookledger-ledger' },
    queues: {
      'billing-meter': {
        url: 'http://sqs.us-east-1.localhost:4566/000000000000/hookledger-billing-meter',
        arn: 'arn:aws:sqs:us-east-1:000000000000:hookledger-billing-meter',
        dlqUrl: 'http://sqs.us-east-1.localhost:4566/000000000000/hookledger-billing-meter-dlq',
        dlqArn: 'arn:aws:sqs:us-east-1:000000000000:hookledger-billing-meter-dlq',
      },
    },
    fanoutFailureQueue: {
      url: 'http://sqs.us-east-1.localhost:4566/000000000000/hookledger-fanout-failures',
      arn: 'arn:aws:sqs:us-east-1:000000000000:hookledger-fanout-failures',
    },
    ...overrides,
  };
}

describe('local stack state file', () => {
  it('reads back what was written', async () => {
    await writeState(path, state());

    expect(await readState(path)).toEqual(state());
    expect(await readRunningState(path)).toEqual(state());
  });

  it('reports no running stack when the file is missing or its process is gone', async () => {
    expect(await readState(path)).toBeUndefined();
    await writeState(path, state({ pid: 2 ** 22 + 1 }));

    expect(await readRunningState(path)).toBeUndefined();
    await removeState(path);
    expect(await readState(path)).toBeUndefined();
  });

  it('refuses a file that is not a state file', async () => {
    await writeState(path, state());
    await writeFile(path, JSON.stringify({ version: 2 }));

    await expect(readState(path)).rejects.toBeInstanceOf(StateFileError);
  });

  it('fills the webhook URL template for a source', () => {
    expect(webhookUrlFor(state(), 'platform')).toBe('http://127.0.0.1:4010/hooks/platform');
  });
});
