/**
 * The scheduled provider drift check's handler logic (lambdas/reconcile/drift-check-app.ts): the
 * source's endpoint found among the provider's, each difference logged, their number published as
 * ProviderDrift (0 when it matches), a provider failure logged and thrown with nothing published.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ProviderAuthError } from '../../adapters/provider-events';
import type { RemoteEndpoint } from '../../core/endpoint-drift';
import { createDriftCheckHandler } from '../../lambdas/reconcile/drift-check-app';
import { createProviderDriftMetric } from '../../lambdas/shared/metrics';

const URL_ON_STACK = 'https://abc123.execute-api.eu-west-1.amazonaws.com/hooks/square-shop';
const EXPECTED = { url: URL_ON_STACK, events: ['payment.created', 'refund.created'] };

function harness(list: () => Promise<RemoteEndpoint[]>) {
  const published: number[] = [];
  const warned: Record<string, unknown>[] = [];
  const errors: [unknown, Record<string, unknown>][] = [];
  const handler = createDriftCheckHandler({
    sourceId: 'square-shop',
    expected: EXPECTED,
    list,
    publish: (n) => published.push(n),
    logger: {
      info: () => {},
      warn: (_message: unknown, ...extra: unknown[]) => void warned.push((extra[0] as Record<string, unknown> | undefined) ?? {}),
      error: (message: unknown, ...extra: unknown[]) =>
        void errors.push([message, (extra[0] as Record<string, unknown> | undefined) ?? {}]),
    },
  });
  return { handler, published, warned, errors };
}

const endpoint = (overrides: Partial<RemoteEndpoint>): RemoteEndpoint => ({
  id: 'wbhk_0000000000000000000204',
  url: URL_ON_STACK,
  enabled: true,
  events: ['payment.created', 'refund.created'],
  ...overrides,
});

describe('drift check handler', () => {
  it('publishes 0 and warns of nothing when the endpoint matches the configuration', async () => {
    const other = endpoint({ id: 'wbhk_other', url: 'https://elsewhere.example.com/hooks/billing', events: ['order.created'] });
    const { handler, published, warned } = harness(async () => [other, endpoint({})]);
    const report = await handler();
    expect(report.endpoint?.id).toBe('wbhk_0000000000000000000204');
    expect(report.drift).toEqual([]);
    expect(published).toEqual([0]);
    expect(warned).toEqual([]);
  });

  it('publishes one per difference of an endpoint moved to another host, missing an event type and disabled', async () => {
    const moved = endpoint({ url: 'https://old-tunnel.example.com/hooks/square-shop', events: ['payment.created'], enabled: false });
    const { handler, published, warned } = harness(async () => [moved]);
    const report = await handler();
    expect(report.drift.map((d) => d.kind)).toEqual(['url', 'missing_events', 'disabled']);
    expect(published).toEqual([3]);
    expect(warned.map((w) => [w.kind, w.endpoint_id])).toEqual([
      ['url', 'wbhk_0000000000000000000204'],
      ['missing_events', 'wbhk_0000000000000000000204'],
      ['disabled', 'wbhk_0000000000000000000204'],
    ]);
    expect(warned[1]!.detail).toBe('event types not subscribed: refund.created');
  });

  it('publishes 1 (not_connected) when the provider lists no endpoint for the source', async () => {
    const { handler, published, warned } = harness(async () => [
      endpoint({ id: 'wbhk_other', url: 'https://elsewhere.example.com/hooks/billing' }),
    ]);
    expect((await handler()).drift).toEqual([{ kind: 'not_connected' }]);
    expect(published).toEqual([1]);
    expect(warned[0]!.kind).toBe('not_connected');
  });

  it('logs a refused credential with the provider and source, throws it, and publishes nothing', async () => {
    const refused = new ProviderAuthError('square', 401, 'the secret arn:aws:secretsmanager:eu-west-1:123456789012:secret:sq');
    const { handler, published, errors } = harness(async () => {
      throw refused;
    });
    await expect(handler()).rejects.toBe(refused);
    expect(published).toEqual([]);
    expect(errors).toEqual([['drift check failed', { source: 'square-shop', api: 'square', error: refused.message }]]);
  });
});

describe('createProviderDriftMetric', () => {
  afterEach(() => vi.restoreAllMocks());

  it('emits ProviderDrift with the number of differences, by Stack and Source only (the dimensions its alarm names)', () => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    createProviderDriftMetric('Hookledger', 'square-shop')(2);
    vi.restoreAllMocks();
    const [line] = lines.flatMap((l) => l.split('\n')).filter((l) => l.includes('"_aws"'));
    expect(JSON.parse(line!)).toMatchObject({
      _aws: { CloudWatchMetrics: [{ Namespace: 'Hookledger', Dimensions: [['Stack', 'Source']], Metrics: [{ Name: 'ProviderDrift' }] }] },
      Stack: 'Hookledger',
      Source: 'square-shop',
      ProviderDrift: 2,
    });
  });
});
