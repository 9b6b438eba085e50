/**
 * The per-source signature-failure rule (issue 43 item 2): its configuration (`alarms.signatureFailures`),
 * which intake outcomes count, the local stack's per-minute counts (local/signature-failures.ts) and
 * the Health rule computed from them (ops/health.ts), one row per source, as the deployed stack has
 * one alarm per source.
 */
import { describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../adapters/clients';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import { isSignatureFailure, type SignatureFailureCounts } from '../../core/metrics';
import { ALL_SCHEMES } from '../../core/schemes';
import baseConfig from '../../hookledger.config';
import { createIngestHandler } from '../../lambdas/ingest/app';
import { SignatureFailureLog } from '../../local/signature-failures';
import { healthRules } from '../../ops/health';
import type { StatusReport } from '../../ops/status';
import { NOW, OLD_SECRET, platformEvent, signedHeaders, TEST_HASH_KEY, TEST_SECRET } from '../support/factories';
import { hooksRequest } from '../support/ingest';
import { capturingLogger } from '../support/logs';

const MIN = 60_000;
const T = Date.parse('2026-12-01T10:00:00Z');
const platform = baseConfig.sources[0]!;
const twoSources = (alarms: HookledgerConfigInput['alarms'] = {}): HookledgerConfigInput => ({
  ...baseConfig,
  sources: [platform, { ...platform, id: 'shop' }],
  alarms,
});

describe('alarms.signatureFailures', () => {
  it('defaults to 10 failures within 15 minutes when alarms is absent or silent on it', () => {
    const { alarms: _, ...noAlarms } = twoSources();
    expect(defineConfig(noAlarms).alarms.signatureFailures).toEqual({ threshold: 10, windowMinutes: 15 });
    expect(defineConfig(twoSources({ email: 'oncall@example.com' })).alarms.signatureFailures).toEqual({
      threshold: 10,
      windowMinutes: 15,
    });
  });

  it('takes a threshold and a window of its own', () => {
    const parsed = defineConfig(twoSources({ signatureFailures: { threshold: 3, windowMinutes: 2 } }));
    expect(parsed.alarms.signatureFailures).toEqual({ threshold: 3, windowMinutes: 2 });
  });

  it('refuses a window over 60 minutes and a threshold of 0, naming the field and the value', () => {
    expect(() => defineConfig(twoSources({ signatureFailures: { windowMinutes: 61 } }))).toThrow(
      /alarms\.signatureFailures\.windowMinutes \(value 61\): .*at most 60/,
    );
    expect(() => defineConfig(twoSources({ signatureFailures: { threshold: 0 } }))).toThrow(
      /alarms\.signatureFailures\.threshold \(value 0\)/,
    );
  });
});

describe('isSignatureFailure', () => {
  it('counts the four verifier refusals and nothing else intake answers', () => {
    for (const code of ['missing_signature', 'malformed_signature', 'signature_mismatch', 'timestamp_out_of_tolerance']) {
      expect(isSignatureFailure(code), code).toBe(true);
    }
    for (const outcome of ['recorded', 'duplicate', 'unknown_source', 'verify_token_mismatch', 'toString', 'constructor']) {
      expect(isSignatureFailure(outcome), outcome).toBe(false);
    }
  });
});

describe('intake tells its observer the source of a verification failure', () => {
  it('passes shop with signature_mismatch for a forged request to /hooks/shop, and the path it named for an unknown source', async () => {
    const seen: [string, string][] = [];
    const handler = createIngestHandler({
      schemes: ALL_SCHEMES,
      config: defineConfig(twoSources()),
      // Never reached: a forged or unroutable request stores nothing.
      store: intakeStore(eventStores({ client: createDocumentClient({ region: 'us-east-1' }), tableName: 'events' })),
      secrets: {
        payloadHashKey: async () => TEST_HASH_KEY,
        get: async () => ({ current: TEST_SECRET }),
        refresh: async () => ({ current: TEST_SECRET }),
      },
      logger: capturingLogger().logger,
      clock: () => NOW,
      onOutcome: (outcome, sourceId) => seen.push([outcome, sourceId]),
    });
    const body = JSON.stringify(platformEvent());
    const forged = signedHeaders(body, { secret: OLD_SECRET, msgId: 'msg_2Kp7QeWd9' });
    expect((await handler(hooksRequest('shop', body, forged))).statusCode).toBe(401);
    expect((await handler(hooksRequest('nonexistent', body, forged))).statusCode).toBe(404);
    expect(seen).toEqual([
      ['signature_mismatch', 'shop'],
      ['unknown_source', 'nonexistent'],
    ]);
  });
});

describe('SignatureFailureLog (the local stack)', () => {
  it('counts failures per source and minute on its clock, oldest minute first', () => {
    let now = T;
    const log = new SignatureFailureLog(() => now);
    for (const at of [T + 1_000, T + 59_999, T + MIN]) {
      now = at;
      log.add('platform');
    }
    now = T + MIN + 1_000;
    log.add('shop');
    expect(log.counts()).toEqual({
      at: T + MIN + 1_000,
      bySource: {
        platform: [
          { from: T, count: 2 },
          { from: T + MIN, count: 1 },
        ],
        shop: [{ from: T + MIN, count: 1 }],
      },
    });
  });

  it('keeps the last 60 minutes only, and forgets a source with nothing left', () => {
    let now = T;
    const log = new SignatureFailureLog(() => now);
    log.add('shop');
    now = T + MIN;
    log.add('platform');
    now = T + 60 * MIN;
    expect(log.counts()).toEqual({ at: T + 60 * MIN, bySource: { platform: [{ from: T + MIN, count: 1 }] } });
    now = T + 61 * MIN;
    expect(log.counts()).toEqual({ at: T + 61 * MIN, bySource: {} });
  });
});

describe('healthRules: SignatureFailures per source', () => {
  const config = defineConfig(twoSources());
  const status: StatusReport = {
    at: T,
    consumers: [],
    intake: { events: 0, byType: {}, bySecretVersion: {}, previousSecretLastVerified: {} },
  };
  const counts = (at: number): SignatureFailureCounts => ({
    at,
    bySource: {
      // 5 more 20 minutes earlier, outside the 15-minute window.
      platform: [
        { from: T - 20 * MIN, count: 5 },
        { from: T - 2 * MIN, count: 6 },
        { from: T, count: 4 },
      ],
      shop: [{ from: T, count: 3 }],
    },
  });
  const signatureRows = (c: SignatureFailureCounts) =>
    healthRules(config, { status, circuits: {}, signatureFailures: c }).filter((r) => r.rule === 'SignatureFailures');

  it('alarms platform at 10 failures within 15 minutes, since the minute that made 10, and keeps shop with 3 OK', () => {
    expect(signatureRows(counts(T + 30_000))).toEqual([
      {
        rule: 'SignatureFailures',
        subject: 'platform',
        state: 'ALARM',
        detail: '10 verification failure(s) in the last 15 min',
        reason: '10 verification failure(s) in the last 15 min; alarms at 10 within 15 min',
        since: T,
      },
      {
        rule: 'SignatureFailures',
        subject: 'shop',
        state: 'OK',
        detail: '3 verification failure(s) in the last 15 min',
        reason: '3 verification failure(s) in the last 15 min; alarms at 10 within 15 min',
      },
    ]);
  });

  it('is OK again once the window has passed the failures', () => {
    expect(signatureRows(counts(T + 15 * MIN)).map((r) => [r.subject, r.state, r.detail])).toEqual([
      ['platform', 'OK', '0 verification failure(s) in the last 15 min'],
      ['shop', 'OK', '0 verification failure(s) in the last 15 min'],
    ]);
  });

  it('gives every configured source its row, OK, when none failed', () => {
    expect(signatureRows({ at: T, bySource: {} }).map((r) => [r.subject, r.state])).toEqual([
      ['platform', 'OK'],
      ['shop', 'OK'],
    ]);
  });

  it("has no such row where the target keeps no counts (AWS, where each source's alarm counts them)", () => {
    expect(healthRules(config, { status, circuits: {} }).some((r) => r.rule === 'SignatureFailures')).toBe(false);
  });
});
