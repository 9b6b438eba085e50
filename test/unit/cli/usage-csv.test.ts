import { describe, expect, it } from 'vitest';
import { formatUsageCsv } from '../../../cli/commands/usage';
import { config } from '../../ops/support';
import { runCli } from '../../support/cli';

const FROM = Date.parse('2026-11-01T00:00:00Z');
const TO = Date.parse('2026-12-01T00:00:00Z');

describe('usage --format csv', () => {
  it('writes one RFC 4180 row per tenant and consumer with the window, units and deliveries', () => {
    const csv = formatUsageCsv({
      from: FROM,
      to: TO,
      rows: [
        { tenantId: 'tenant_204', consumerId: 'billing-meter', units: 589, deliveries: 131 },
        { tenantId: 'tenant_311', consumerId: 'audit-writer', units: 0, deliveries: 12 },
        { tenantId: 'acme, "north"', consumerId: 'billing-meter', units: 7, deliveries: 2 },
      ],
      totalUnits: 596,
      attributedBy: 'receivedAt',
    });
    expect(csv.split('\r\n')).toEqual([
      'window_from,window_to,tenant_id,consumer_id,units,deliveries',
      '2026-11-01T00:00:00.000Z,2026-12-01T00:00:00.000Z,tenant_204,billing-meter,589,131',
      '2026-11-01T00:00:00.000Z,2026-12-01T00:00:00.000Z,tenant_311,audit-writer,0,12',
      '2026-11-01T00:00:00.000Z,2026-12-01T00:00:00.000Z,"acme, ""north""",billing-meter,7,2',
      '',
    ]);
  });

  it('refuses another format with exit 2, naming the value', async () => {
    const result = await runCli(['usage', '--format', 'xlsx'], config, { USER: 'csv-test', HOOKLEDGER_STATE: '/nonexistent/state.json' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--format must be table or csv, got "xlsx"');
  });
});
