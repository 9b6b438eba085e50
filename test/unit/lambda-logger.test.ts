/**
 * The Lambda entries' logger (lambdas/shared/lambda-logger.ts) loads Powertools' Logger with the first
 * line that will be printed, so the common path (DEBUG lines only, dropped at INFO) never loads it.
 * What it prints must be what Powertools prints, in the order written, before the handler answers.
 */
import { LogLevelThreshold } from '@aws-lambda-powertools/logger';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLambdaLogger, flushingLogs, printedFrom } from '../../lambdas/shared/lambda-logger';

let printed: string[] = [];
let restore: () => void;

beforeEach(() => {
  printed = [];
  const streams = [process.stdout, process.stderr] as const;
  const originals = streams.map((s) => s.write);
  for (const stream of streams) {
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      if (text.startsWith('{')) {
        printed.push(text.trim());
        (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
        return true;
      }
      return (originals[streams.indexOf(stream)] as (...a: unknown[]) => boolean).call(stream, chunk, ...rest);
    }) as typeof stream.write;
  }
  restore = () => {
    for (const [i, s] of streams.entries()) Object.assign(s, { write: originals[i] });
  };
});

afterEach(() => {
  restore();
  vi.unstubAllEnvs();
});

const lines = () => printed.map((p) => JSON.parse(p) as Record<string, unknown>);

describe('the Lambda logger (Powertools loaded with the first printed line)', () => {
  it('drops DEBUG lines at INFO without loading the Logger: a recorded evt_01J8K7M2Q4 costs no module load', async () => {
    const logger = createLambdaLogger('hookledger-ingest', {});
    logger.debug('webhook accepted', { outcome: 'recorded', event_id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204' });
    await logger.flush();
    expect(logger.loaded).toBe(false);
    expect(printed).toEqual([]);
  });

  it('prints a duplicate and a rejection in the order written, as Powertools lines, before the handler answers', async () => {
    const logger = createLambdaLogger('hookledger-ingest', {});
    const handler = flushingLogs(logger, async (eventId: string) => {
      logger.info('webhook accepted', { outcome: 'duplicate', event_id: eventId, tenant_id: 'tenant_204' });
      logger.debug('not printed at INFO', { event_id: eventId });
      logger.warn('webhook rejected', { source: 'platform', status: 401, reason: 'signature_mismatch' });
      return 202;
    });
    expect(await handler('evt_01J8K7M2Q4')).toBe(202);
    // Answered: both lines are out already, nothing waits.
    expect(lines().map((l) => [l.level, l.message, l.event_id ?? l.reason, l.service])).toEqual([
      ['INFO', 'webhook accepted', 'evt_01J8K7M2Q4', 'hookledger-ingest'],
      ['WARN', 'webhook rejected', 'signature_mismatch', 'hookledger-ingest'],
    ]);
    expect(logger.loaded).toBe(true);
    // Loaded: the next line goes straight to Powertools.
    logger.error('event store unavailable', { source: 'platform', error: 'ProvisionedThroughputExceededException' });
    expect(lines()).toHaveLength(3);
    expect(lines()[2]).toMatchObject({ level: 'ERROR', message: 'event store unavailable', source: 'platform' });
  });

  it('rethrows the very error that escapes the handler, its lines printed first; a stack of the sources keeps its frames', async () => {
    const logger = createLambdaLogger('hookledger-fanout', {});
    const escaped = new Error('stream batch for evt_01J8K7M2Q4 not sent');
    const stack = escaped.stack;
    const handler = flushingLogs(logger, async () => {
      logger.warn('send to queue failed', { queue: 'hookledger-billing-meter', failed: 1 });
      throw escaped;
    });
    await expect(handler()).rejects.toBe(escaped);
    expect(lines().map((l) => [l.level, l.message])).toEqual([['WARN', 'send to queue failed']]);
    // Run from the sources (no .map beside them): nothing to map, nothing changed.
    expect(escaped.stack).toBe(stack);
  });

  it("follows Lambda's application log level over POWERTOOLS_LOG_LEVEL, as Powertools does", async () => {
    vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', 'DEBUG');
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'WARN');
    const logger = createLambdaLogger('hookledger-billing-meter');
    logger.debug('acknowledged', { event_id: 'evt_01J8K7M2Q4', consumer_id: 'billing-meter', units: 5 });
    await logger.flush();
    expect(lines().map((l) => [l.level, l.message, l.units])).toEqual([['DEBUG', 'acknowledged', 5]]);
  });

  it('decides the printed level as Powertools: ALC first, then POWERTOOLS_LOG_LEVEL, else INFO; sampling leaves it to Powertools', () => {
    // Powertools' own table, level by level: lambda-logger.ts keeps a copy so that deciding loads nothing.
    for (const [level, threshold] of Object.entries(LogLevelThreshold))
      expect(printedFrom({ POWERTOOLS_LOG_LEVEL: level }), level).toBe(threshold);
    expect(printedFrom({})).toBe(12);
    expect(printedFrom({ POWERTOOLS_LOG_LEVEL: 'debug' })).toBe(8);
    expect(printedFrom({ AWS_LAMBDA_LOG_LEVEL: 'ERROR', POWERTOOLS_LOG_LEVEL: 'DEBUG' })).toBe(20);
    expect(printedFrom({ POWERTOOLS_LOGGER_SAMPLE_RATE: '0.1' })).toBe(0);
    expect(printedFrom({ POWERTOOLS_LOG_LEVEL: 'LOUD' })).toBe(0);
  });

  it('prints nothing and loads nothing under AWS_LAMBDA_LOG_LEVEL=ERROR for a warning', async () => {
    const logger = createLambdaLogger('hookledger-fanout', { AWS_LAMBDA_LOG_LEVEL: 'ERROR' });
    logger.warn('payload read failed; retrying', { event_id: 'evt_01J8K7M2Q4' });
    await logger.flush();
    expect(logger.loaded).toBe(false);
    expect(printed).toEqual([]);
  });
});
