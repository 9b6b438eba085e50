import { describe, expect, it } from 'vitest';
import { csvCell } from '../../../ops/csv';
import { formatUsageCsv } from '../../../ops/usage';
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

  it('neutralises tenant ids a spreadsheet would run as formulas (=, +, -, @, tab, CR): quote-prefixed and quoted', () => {
    const csv = formatUsageCsv({
      from: FROM,
      to: TO,
      rows: [
        { tenantId: '=HYPERLINK("http://x")', consumerId: 'billing-meter', units: 5, deliveries: 1 },
        { tenantId: '@SUM(A1)', consumerId: 'billing-meter', units: 5, deliveries: 1 },
        { tenantId: '+1', consumerId: 'billing-meter', units: 5, deliveries: 1 },
        { tenantId: '-1', consumerId: 'billing-meter', units: 5, deliveries: 1 },
        { tenantId: '=1+2";=1+2', consumerId: 'billing-meter', units: 5, deliveries: 1 },
        { tenantId: 'tenant_204;=1+2', consumerId: 'billing-meter', units: 5, deliveries: 1 },
      ],
      totalUnits: 30,
      attributedBy: 'receivedAt',
    });
    const window = '2026-11-01T00:00:00.000Z,2026-12-01T00:00:00.000Z';
    expect(csv.split('\r\n')).toEqual([
      'window_from,window_to,tenant_id,consumer_id,units,deliveries',
      `${window},"'=HYPERLINK(""http://x"")",billing-meter,5,1`,
      `${window},"'@SUM(A1)",billing-meter,5,1`,
      `${window},"'+1",billing-meter,5,1`,
      `${window},"'-1",billing-meter,5,1`,
      // OWASP's own example: the quote-prefix covers the first formula, the quoting the one after the `;`.
      `${window},"'=1+2"";=1+2",billing-meter,5,1`,
      // `;` separates cells in many locales' spreadsheets: quoted, so `=1+2` never starts a cell.
      `${window},"tenant_204;=1+2",billing-meter,5,1`,
      '',
    ]);
  });

  it('quote-prefixes a cell starting with a tab or carriage return; leaves numbers and ordinary ids as they are', () => {
    expect(csvCell('\t=1+2')).toBe(`"'\t=1+2"`);
    expect(csvCell('\r=1+2')).toBe(`"'\r=1+2"`);
    expect(csvCell('a\t=1+2')).toBe('"a\t=1+2"');
    expect(csvCell('tenant-204')).toBe('tenant-204');
    expect(csvCell('tenant=204')).toBe('tenant=204');
    expect(csvCell(-3)).toBe('-3');
    expect(csvCell(589)).toBe('589');
  });

  it('refuses another format with exit 2, naming the value', async () => {
    const result = await runCli(['usage', '--format', 'xlsx'], config, { USER: 'csv-test', HOOKLEDGER_STATE: '/nonexistent/state.json' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--format must be table or csv, got "xlsx"');
  });
});
