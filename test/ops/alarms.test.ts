/**
 * `hookledger alarms` as a user runs it: `node bin/hookledger.mjs alarms` in a child process, pointed
 * by HOOKLEDGER_STATE at a local stack's state file. risk-evaluator quarantines evt_01J8K7A501 (its
 * DLQ holds one message): DeadLetters risk-evaluator is in ALARM with its reason, the command exits 1,
 * and every other rule is OK; `--json` carries the same rows.
 *
 * Then the per-source signature-failure rule (issue 43 item 2), with the stack's own configuration (a
 * second source, shop, and `alarms.signatureFailures` of 3 within 2 minutes), so the CLI runs in-process
 * with it: forged signatures to shop make SignatureFailures shop ALARM while platform's stays OK, and
 * both are OK once the stack's clock has moved past the window.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import baseConfig from '../../hookledger.config';
import { handle as riskHandle } from '../../lambdas/consumers/risk-evaluator';
import { PermanentError } from '../../lambdas/runtime/errors';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { runCli } from '../support/cli';
import { OLD_SECRET, signedHeaders } from '../support/factories';
import { queueDepth, send, startTestStack } from '../support/stack';
import { waitFor } from '../support/wait';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/hookledger.mjs');
const POISONED = 'evt_01J8K7A501';
const platform = baseConfig.sources[0]!;
/** The stack's configuration: the repository's, a second source and a short signature-failure window. */
const config = defineConfig({
  ...baseConfig,
  sources: [platform, { ...platform, id: 'shop' }],
  alarms: { signatureFailures: { threshold: 3, windowMinutes: 2 } },
});
/** How far the stack's clock is ahead of the wall clock: moved past the window by the last test. */
let clockAheadMs = 0;

let stack: LocalStack;
let dir: string;
let statePath: string;

beforeAll(async () => {
  stack = await startTestStack({
    config,
    clock: () => Date.now() + clockAheadMs,
    backoffBaseMs: 200,
    handles: {
      'risk-evaluator': async (ctx) => {
        if (ctx.attribution.eventId === POISONED) {
          throw new PermanentError(`risk model v7 cannot score ${POISONED}: card_last4 missing`, 'model_input_invalid');
        }
        return riskHandle(ctx);
      },
    },
  });
  dir = mkdtempSync(path.join(tmpdir(), 'hookledger-alarms-'));
  statePath = path.join(dir, 'state.json');
  await writeState(statePath, stackState(stack, null));
  await send(stack, {
    id: POISONED,
    type: 'payment.succeeded',
    tenant_id: 'tenant_204',
    key_id: 'key_42',
    created: Math.floor(Date.now() / 1000),
    data: { amount: 4200, currency: 'eur' },
  });
  const dlq = stack.resources.queues['risk-evaluator']!.dlqUrl;
  await waitFor(
    'evt_01J8K7A501 in the DLQ of risk-evaluator',
    async () => ((await queueDepth(stack, dlq)) === 1 ? true : undefined),
    30_000,
  );
  await stack.drain();
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, HOOKLEDGER_STATE: statePath, USER: 'cli-test' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

interface AlarmRow {
  rule: string;
  subject: string;
  state: string;
  reason: string;
  since?: number;
}

describe('hookledger alarms', () => {
  it('lists DeadLetters risk-evaluator in ALARM with its reason, the other rules OK, and exits 1', async () => {
    const run = await cli(['alarms']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    const lines = run.stdout.split('\n');
    expect(lines.some((l) => /^RULE\s+SUBJECT\s+STATE\s+SINCE\s+REASON/.test(l))).toBe(true);
    const dead = lines.find((l) => /^DeadLetters\s+risk-evaluator\s/.test(l));
    expect(dead).toMatch(/^DeadLetters\s+risk-evaluator\s+ALARM\s+.*1 message\(s\) in its DLQ; alarms at 1 or more$/);
    const alarming = lines.filter((l) => /\sALARM\s/.test(l));
    expect(alarming).toEqual([dead]);
    expect(lines.find((l) => /^DeadLetters\s+billing-meter\s/.test(l))).toMatch(
      /\sOK\s+-\s+0 message\(s\) in its DLQ; alarms at 1 or more$/,
    );
    expect(run.stdout).toMatch(/SINCE "-": /);
  }, 60_000);

  it('--json carries the same rows with their reasons', async () => {
    const run = await cli(['alarms', '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as { rows: AlarmRow[]; notes: string[] };
    const key = (r: AlarmRow) => `${r.rule} ${r.subject}`;
    expect(report.rows.filter((r) => r.state === 'ALARM').map(key)).toEqual(['DeadLetters risk-evaluator']);
    expect(report.rows.find((r) => key(r) === 'DeadLetters risk-evaluator')?.reason).toBe('1 message(s) in its DLQ; alarms at 1 or more');
    expect(report.rows.map(key)).toEqual(
      expect.arrayContaining([
        'DeadLetters billing-meter',
        'DeadLetters audit-writer',
        'OldestMessageAge risk-evaluator',
        'Paused risk-evaluator',
        'SignatureFailures platform',
        'FanOutFailures fan-out',
        'ReconcileViolations reconcile',
      ]),
    );
    expect(report.rows.every((r) => r.reason.length > 0)).toBe(true);
  }, 60_000);
});

/** A payment signed with a secret the source does not have: intake answers 401 signature_mismatch. */
async function sendForged(source: string, id: string): Promise<number> {
  const body = JSON.stringify({ id, type: 'payment.succeeded', tenant_id: 'tenant_204', key_id: 'key_42', data: { amount: 4200 } });
  const res = await fetch(stack.webhookUrl(source), {
    method: 'POST',
    headers: signedHeaders(body, { secret: OLD_SECRET, at: Date.now(), msgId: `msg_${id}` }),
    body,
  });
  return res.status;
}

async function signatureRows(): Promise<{ code: number; rows: AlarmRow[]; notes: string[] }> {
  const run = await runCli(['alarms', '--json'], config, { ...process.env, HOOKLEDGER_STATE: statePath, USER: 'cli-test' });
  expect(run.stderr).toBe('');
  const report = JSON.parse(run.stdout) as { rows: AlarmRow[]; notes: string[] };
  return { code: run.code, rows: report.rows.filter((r) => r.rule === 'SignatureFailures'), notes: report.notes };
}

describe('hookledger alarms: a burst of signature failures on one source', () => {
  it('shows SignatureFailures shop in ALARM after 3 forged requests and platform OK with 1, then both OK once the window has passed', async () => {
    for (const id of ['evt_01J8K7F101', 'evt_01J8K7F102', 'evt_01J8K7F103']) expect(await sendForged('shop', id)).toBe(401);
    expect(await sendForged('platform', 'evt_01J8K7F104')).toBe(401);

    const burst = await signatureRows();
    expect(burst.code).toBe(1);
    expect(burst.rows.map((r) => [r.subject, r.state, r.reason])).toEqual([
      ['platform', 'OK', '1 verification failure(s) in the last 2 min; alarms at 3 within 2 min'],
      ['shop', 'ALARM', '3 verification failure(s) in the last 2 min; alarms at 3 within 2 min'],
    ]);
    const since = burst.rows.find((r) => r.subject === 'shop')?.since;
    expect(since).toBeGreaterThan(Date.now() - 3 * 60_000);
    expect(since! % 60_000).toBe(0);
    // What to run, for shop only.
    const advice = burst.notes.filter((n) => n.includes('rotated on one side only'));
    expect(advice).toHaveLength(1);
    expect(advice[0]).toMatch(
      /^SignatureFailures shop: .*`hookledger sources remote shop`.*`hookledger secrets rotate shop --value-file -`/,
    );

    // The stack's clock two minutes on: the forged requests are outside the window.
    clockAheadMs = 2 * 60_000;
    const later = await signatureRows();
    expect(later.rows.map((r) => [r.subject, r.state, r.reason])).toEqual([
      ['platform', 'OK', '0 verification failure(s) in the last 2 min; alarms at 3 within 2 min'],
      ['shop', 'OK', '0 verification failure(s) in the last 2 min; alarms at 3 within 2 min'],
    ]);
    expect(later.notes.some((n) => n.includes('rotated on one side only'))).toBe(false);
  }, 60_000);
});
