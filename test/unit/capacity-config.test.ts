/** `capacity`: on-demand (default) or provisioned with auto scaling, per table, validated at synth. */
import { describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import config from '../../hookledger.config';

const withCapacity = (capacity: unknown): HookledgerConfigInput => ({ ...config, capacity }) as HookledgerConfigInput;

describe('capacity mode', () => {
  it('defaults both tables to on-demand', () => {
    const parsed = defineConfig(config);
    expect(parsed.capacity).toEqual({ eventStore: { mode: 'on-demand' }, ledger: { mode: 'on-demand' } });
  });

  it("applies one provisioned setting to both tables and the EventStore's window index, with the defaults filled in", () => {
    const parsed = defineConfig(withCapacity({ mode: 'provisioned', minWrite: 10, maxWrite: 400, targetUtilization: 70 }));
    const scaled = { minWrite: 10, maxWrite: 400, minRead: 5, maxRead: 1000, targetUtilization: 70 };
    expect(parsed.capacity).toEqual({
      eventStore: { mode: 'provisioned', ...scaled, indexes: { byTenantDay: scaled } },
      ledger: { mode: 'provisioned', ...scaled, indexes: {} },
    });
  });

  it('lets each table override the shared setting, and an index override its table', () => {
    const parsed = defineConfig(
      withCapacity({
        default: { mode: 'provisioned', minWrite: 20, maxWrite: 200, minRead: 5, maxRead: 50, targetUtilization: 60 },
        eventStore: {
          mode: 'provisioned',
          minWrite: 30,
          maxWrite: 300,
          minRead: 10,
          maxRead: 100,
          targetUtilization: 70,
          indexes: { byTenantDay: { minWrite: 15, maxWrite: 150 } },
        },
      }),
    );
    expect(parsed.capacity.eventStore).toEqual({
      mode: 'provisioned',
      minWrite: 30,
      maxWrite: 300,
      minRead: 10,
      maxRead: 100,
      targetUtilization: 70,
      indexes: { byTenantDay: { minWrite: 15, maxWrite: 150, minRead: 10, maxRead: 100, targetUtilization: 70 } },
    });
    expect(parsed.capacity.ledger).toMatchObject({ mode: 'provisioned', minWrite: 20, maxWrite: 200, targetUtilization: 60 });
    const ledgerOnly = defineConfig(withCapacity({ ledger: { mode: 'provisioned' } }));
    expect(ledgerOnly.capacity.eventStore).toEqual({ mode: 'on-demand' });
    expect(ledgerOnly.capacity.ledger).toMatchObject({ mode: 'provisioned', minWrite: 5, maxWrite: 1000 });
  });

  it("takes a shared setting's index bounds for the table that has the index, and none for the Ledger", () => {
    const parsed = defineConfig(withCapacity({ mode: 'provisioned', indexes: { byTenantDay: { minWrite: 20, maxWrite: 80 } } }));
    expect(parsed.capacity.eventStore).toMatchObject({ minWrite: 5, indexes: { byTenantDay: { minWrite: 20, maxWrite: 80, minRead: 5 } } });
    expect(parsed.capacity.ledger).toMatchObject({ minWrite: 5, indexes: {} });
  });

  it('validates its own output again unchanged (a validated config passed to defineConfig)', () => {
    const once = defineConfig(withCapacity({ ledger: { mode: 'provisioned', minWrite: 7 } }));
    expect(defineConfig(once).capacity).toEqual(once.capacity);
  });

  it('refuses a maxWrite below minWrite on the Ledger, naming the table and the field', () => {
    expect(() => defineConfig(withCapacity({ ledger: { mode: 'provisioned', minWrite: 50, maxWrite: 40 } }))).toThrow(
      /capacity\.ledger\.maxWrite \(value 40\): maxWrite 40 is below minWrite 50 on the Ledger table/,
    );
  });

  it('refuses a maxRead below minRead on the window index, naming the table, the index and the field', () => {
    expect(() =>
      defineConfig(withCapacity({ eventStore: { mode: 'provisioned', indexes: { byTenantDay: { minRead: 30, maxRead: 20 } } } })),
    ).toThrow(
      /capacity\.eventStore\.indexes\.byTenantDay\.maxRead \(value 20\): maxRead 20 is below minRead 30 on index byTenantDay of the EventStore table/,
    );
  });

  it.each([
    [95, 'capacity.targetUtilization (value 95)'],
    [15, 'capacity.targetUtilization (value 15)'],
  ])('refuses a target utilization of %i%% (outside 20-90), once for the setting both tables share', (target, where) => {
    const attempt = () => defineConfig(withCapacity({ mode: 'provisioned', targetUtilization: target }));
    expect(attempt).toThrow(
      new RegExp(`${where.replace(/[.()]/g, '\\$&')}: targetUtilization must be 20-90 .* on both tables, got ${target}`),
    );
    expect(() => attempt()).toThrow(/^invalid hookledger config:\n[^\n]+$/);
  });

  it('refuses an index left unscaled (on-demand inside a provisioned table)', () => {
    expect(() => defineConfig(withCapacity({ eventStore: { mode: 'provisioned', indexes: { byTenantDay: 'on-demand' } } }))).toThrow(
      /capacity\.eventStore\.indexes\.byTenantDay \(value "on-demand"\): index byTenantDay of the EventStore table would be left unscaled/,
    );
  });

  it('refuses index settings for an index the table does not have', () => {
    expect(() => defineConfig(withCapacity({ ledger: { mode: 'provisioned', indexes: { byTenantDay: { minWrite: 5 } } } }))).toThrow(
      /capacity\.ledger\.indexes\.byTenantDay .*the Ledger table has no index byTenantDay \(it has none\)/,
    );
    expect(() => defineConfig(withCapacity({ eventStore: { mode: 'provisioned', indexes: { byTenant: { minWrite: 5 } } } }))).toThrow(
      /the EventStore table has no index byTenant \(its indexes: byTenantDay\)/,
    );
  });

  it('refuses an unknown mode and a capacity below 1', () => {
    expect(() => defineConfig(withCapacity('provisioned'))).toThrow(/capacity \(value "provisioned"\)/);
    expect(() => defineConfig(withCapacity({ mode: 'provisioned', minWrite: 0 }))).toThrow(/capacity\.minWrite \(value 0\)/);
  });
});
