/**
 * The scheduled gap check's handler logic (lambdas/reconcile/gap-check-app.ts): which window a
 * scheduled run checks, what it publishes as ProviderGaps (missing and not recovered) and what it logs.
 */
import { describe, expect, it } from 'vitest';
import { ProviderPagingError } from '../../adapters/provider-events';
import type { GapReport } from '../../core/gaps';
import { createGapCheckHandler } from '../../lambdas/reconcile/gap-check-app';

const HOUR = 3_600_000;

function harness(report: (window: { from: number; to: number }) => GapReport, now: number, everyHours = 24) {
  const windows: { from: number; to: number }[] = [];
  const published: number[] = [];
  const warned: Record<string, unknown>[] = [];
  const errors: [unknown, Record<string, unknown>][] = [];
  const handler = createGapCheckHandler({
    sourceId: 'stripe-live',
    windowMs: everyHours * HOUR,
    run: async (window) => {
      windows.push(window);
      return report(window);
    },
    publish: (n) => published.push(n),
    logger: {
      info: () => {},
      warn: (_message: unknown, ...extra: unknown[]) => void warned.push((extra[0] as Record<string, unknown> | undefined) ?? {}),
      error: (message: unknown, ...extra: unknown[]) =>
        void errors.push([message, (extra[0] as Record<string, unknown> | undefined) ?? {}]),
    },
    clock: () => now,
  });
  return { handler, windows, published, warned, errors };
}

const reportOf = (window: { from: number; to: number }, partial: Partial<GapReport>): GapReport => ({
  source: 'stripe-live',
  api: 'stripe',
  from: new Date(window.from).toISOString(),
  to: new Date(window.to).toISOString(),
  providerEvents: 0,
  skipped: { events: 0, types: [] },
  missing: [],
  recovered: [],
  ...partial,
});

describe('scheduled gap check', () => {
  it('checks the last closed day, ending an hour ago at the latest: a run at 00:30 UTC checks the day before yesterday', async () => {
    const at = (iso: string) => Date.parse(iso);
    const late = harness((w) => reportOf(w, {}), at('2026-12-01T10:30:00Z'));
    await late.handler();
    const early = harness((w) => reportOf(w, {}), at('2026-12-01T00:30:00Z'));
    await early.handler();
    expect([...late.windows, ...early.windows].map((w) => [new Date(w.from).toISOString(), new Date(w.to).toISOString()])).toEqual([
      ['2026-11-30T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
      ['2026-11-29T00:00:00.000Z', '2026-11-30T00:00:00.000Z'],
    ]);
  });

  it('publishes the events missing and not recovered (a failed recovery counts), and logs each missing one by ids', async () => {
    const { handler, published, warned } = harness(
      (w) =>
        reportOf(w, {
          providerEvents: 40,
          missing: [
            { eventId: 'evt_1A', type: 'invoice.paid', createdAt: '2026-11-30T03:00:00.000Z' },
            { eventId: 'evt_1B', type: 'invoice.paid', createdAt: '2026-11-30T04:00:00.000Z' },
            { eventId: 'evt_1C', type: 'charge.refunded', createdAt: '2026-11-30T05:00:00.000Z' },
          ],
          recovered: [
            { eventId: 'evt_1A', outcome: 'recorded' },
            { eventId: 'evt_1B', outcome: 'failed', reason: 'missing_attribution: tenant id is missing' },
          ],
        }),
      Date.parse('2026-12-01T10:30:00Z'),
    );
    await handler();
    expect(published).toEqual([2]);
    expect(warned.map((w) => [w.event_id, w.recovery])).toEqual([
      ['evt_1A', 'recorded'],
      ['evt_1B', 'failed'],
      ['evt_1C', 'none'],
    ]);
  });

  it('publishes 0 when nothing is missing, and runs an explicit window when invoked with one', async () => {
    const { handler, published, windows } = harness((w) => reportOf(w, { providerEvents: 12 }), Date.parse('2026-12-01T10:30:00Z'), 6);
    await handler({ from: '2026-11-20T00:00:00Z', to: '2026-11-21T00:00:00Z' });
    expect(windows).toEqual([{ from: Date.parse('2026-11-20T00:00:00Z'), to: Date.parse('2026-11-21T00:00:00Z') }]);
    expect(published).toEqual([0]);
    await expect(handler({ from: '2026-11-21T00:00:00Z', to: '2026-11-20T00:00:00Z' })).rejects.toThrow(/from must be before to/);
  });

  it('logs a paging failure naming the provider and page, publishes nothing, and fails the invocation (the errors alarm sees it)', async () => {
    const stopped = new ProviderPagingError(
      'stripe',
      2,
      'every event on it was on an earlier page, yet it points to a next one: the list does not advance',
    );
    const { handler, published, errors } = harness(() => {
      throw stopped;
    }, Date.parse('2026-12-01T10:30:00Z'));
    await expect(handler()).rejects.toBe(stopped);
    expect(published).toEqual([]);
    expect(errors).toEqual([
      [
        'gap check failed',
        {
          source: 'stripe-live',
          from: '2026-11-30T00:00:00.000Z',
          to: '2026-12-01T00:00:00.000Z',
          api: 'stripe',
          page: 2,
          error:
            'the stripe API: paging stopped at page 2: every event on it was on an earlier page, yet it points to a next one: the list does not advance',
        },
      ],
    ]);
  });
});
