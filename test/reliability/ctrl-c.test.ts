/**
 * Ctrl-C on `npm start` (issue 22): the terminal sends SIGINT to the whole foreground job, DynamoDB
 * Local's JVM included. The stack must stop in the reverse order of start, its pollers first and
 * storage last, and print nothing after "hookledger: stopping...": no poller still reading a
 * DynamoDB Local that is going (the ECONNREFUSED on every shard this used to print).
 *
 * Run as the `start` script execs it (Node with tsx's loader), three times on the same data
 * (each run with an event delivered, so the stream has records and checkpoints to read).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../local/emulators';
import { readState } from '../../local/state';
import { waitFor } from '../support/wait';
import { answers, doneBy, type NpmStart, npmStart, postSigned, statePathOf } from './npm-start';

describe('Ctrl-C on npm start', () => {
  let current: NpmStart | undefined;
  const home = mkdtempSync(path.join(tmpdir(), 'hookledger-ctrl-c-'));
  afterAll(async () => {
    current?.signal('SIGKILL');
    await current?.exited;
    current?.ddb.destroy();
    rmSync(home, { recursive: true, force: true });
  });

  it('stops silently, storage last: nothing printed after "stopping...", exit 0, every port released, state file removed (3 runs on the same data)', async () => {
    const port = await freePort();
    for (const [run, eventId] of ['evt_01J8K7CC01', 'evt_01J8K7CC02', 'evt_01J8K7CC03'].entries()) {
      const started = await npmStart(home, port);
      current = started;
      expect(await postSigned(home, port, eventId)).toBe(202);
      // Done, and reported: npm start prints one line per delivery once its ledger row is written.
      const reported = () =>
        started
          .output()
          .split('\n')
          .filter((line) => line.includes(eventId) && /^\s+ok\s/.test(line)).length;
      const done = await waitFor(`run ${run + 1}: ${eventId} done by all three`, doneBy(started, eventId, 3), 60_000);
      expect(done).toEqual(['audit-writer', 'billing-meter', 'risk-evaluator']);
      await waitFor(`run ${run + 1}: three delivery lines`, () => (reported() === 3 ? true : undefined), 10_000);
      started.ddb.destroy();

      // Ctrl-C: SIGINT to the foreground process group.
      started.signal('SIGINT');
      const code = await started.exited;
      current = undefined;
      const output = started.output();
      const after = output.slice(output.indexOf('hookledger: stopping...') + 'hookledger: stopping...'.length);
      expect(output).toContain('hookledger: stopping...');
      expect({ run: run + 1, after: after.trim() }).toEqual({ run: run + 1, after: '' });
      expect(output).not.toContain('ECONNREFUSED');
      expect(code).toBe(0);
      expect(await answers(started.state.dynamo.port)).toBe(false);
      expect(await answers(started.state.sqs.port)).toBe(false);
      expect(await answers(port)).toBe(false);
      const consoleUrl = /console URL\s+(\S+)/.exec(output)?.[1];
      expect(consoleUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?code=/);
      expect(await answers(Number(new URL(consoleUrl as string).port))).toBe(false);
      expect(await readState(statePathOf(home))).toBeUndefined();
    }
  }, 300_000);
});
