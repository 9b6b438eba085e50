/**
 * Keys built from provider-supplied ids (core/model.ts): no tenant id can spell another tenant's
 * window partition or the day's tenant list, and ordinary ids keep the keys they always had.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dayTenantsPartition, keyPart, RESERVED_KEY_PARTS, tenantDayPartition } from '../../core/model';

/** What intake accepts as an attribute value: printable ASCII without spaces, 1-200 characters. */
const tenantId = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 200 });
/** Ids biased towards the characters and words the key format uses. */
const tricky = fc.oneof(
  tenantId,
  fc
    .array(fc.constantFrom('%', '#', '2', '3', '5', '7', '4', 't', 'enants', 'tenants', '%23', '%25', '%74', '2026-11-29', '1'), {
      minLength: 1,
      maxLength: 8,
    })
    .map((parts) => parts.join('')),
);

describe('key parts', () => {
  it("a tenant named 'tenants' does not get the day's tenant list as its window partition", () => {
    expect(tenantDayPartition('tenants', '2026-11-29')).toBe('%74enants#2026-11-29');
    expect(tenantDayPartition('tenants', '2026-11-29')).not.toBe(dayTenantsPartition('2026-11-29'));
    expect(tenantDayPartition('%74enants', '2026-11-29')).toBe('%2574enants#2026-11-29');
  });

  it("'#' and '%' in a tenant id are escaped; ordinary ids keep the keys written before the escape", () => {
    expect(tenantDayPartition('tenant#204', '2026-11-29', 2)).toBe('tenant%23204#2026-11-29#2');
    expect(tenantDayPartition('tenant%23204', '2026-11-29')).toBe('tenant%2523204#2026-11-29');
    expect(tenantDayPartition('tenant_204', '2026-11-29')).toBe('tenant_204#2026-11-29');
    expect(tenantDayPartition('acct_1Nv0FGQ9RKHgCVdK', '2026-11-29', 3)).toBe('acct_1Nv0FGQ9RKHgCVdK#2026-11-29#3');
    expect(tenantDayPartition('Tenants', '2026-11-29')).toBe('Tenants#2026-11-29');
  });

  it('no two tenant ids share a partition, none holds a #, none is a reserved word', () => {
    fc.assert(
      fc.property(fc.uniqueArray(tricky, { minLength: 2, maxLength: 40 }), (ids) => {
        const parts = ids.map(keyPart);
        expect(new Set(parts).size).toBe(ids.length);
        for (const [i, part] of parts.entries()) {
          const id = ids[i] as string;
          expect(part.includes('#')).toBe(false);
          expect(RESERVED_KEY_PARTS.has(part)).toBe(false);
          if (!/[%#]/.test(id) && !RESERVED_KEY_PARTS.has(id)) expect(part).toBe(id);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});
