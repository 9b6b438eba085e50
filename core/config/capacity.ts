/**
 * `capacity`: how each table (and each of its indexes) is billed. `'on-demand'` (default): per
 * request. `{ mode: 'provisioned', ... }`: capacity units per hour, kept at `targetUtilization` by
 * Application Auto Scaling between the min and the max, on the table and on every index. One setting
 * for both tables, or per table (`{ default?, eventStore?, ledger? }`). Read by the Storage construct
 * (lib/constructs/storage.ts) and by `hookledger cost`.
 */
import * as z from 'zod';
import { WINDOW_INDEX } from '../model';

/** The tables, by config key: their name in messages and the stack, and their global secondary indexes. */
export const CAPACITY_TABLES = {
  eventStore: { label: 'EventStore', indexes: [WINDOW_INDEX.name] as readonly string[] },
  ledger: { label: 'Ledger', indexes: [] as readonly string[] },
} as const;
export type CapacityTable = keyof typeof CAPACITY_TABLES;

/** The defaults of a provisioned setting: about $2.4 a month of floor per table or index (5 WCU + 5 RCU). */
export const PROVISIONED_DEFAULTS = { minWrite: 5, maxWrite: 1000, minRead: 5, maxRead: 1000, targetUtilization: 70 } as const;

/** Auto scaling bounds of one table or index: capacity units per second, and the utilization it keeps. */
export interface ScaledCapacity {
  readonly minWrite: number;
  readonly maxWrite: number;
  readonly minRead: number;
  readonly maxRead: number;
  /** Percent of the provisioned capacity auto scaling keeps in use (20-90). */
  readonly targetUtilization: number;
}
export type TableCapacity =
  | { readonly mode: 'on-demand' }
  | (ScaledCapacity & { readonly mode: 'provisioned'; readonly indexes: Readonly<Record<string, ScaledCapacity>> });
export type CapacityConfig = Readonly<Record<CapacityTable, TableCapacity>>;

/** Numbers only here: `checkScaled` checks their ranges with a message naming the table or index. */
const bounds = {
  minWrite: z.number().optional(),
  maxWrite: z.number().optional(),
  minRead: z.number().optional(),
  maxRead: z.number().optional(),
  targetUtilization: z.number().optional(),
};
/** DynamoDB's default per-table quota is 40,000 units per second each way. */
const MAX_UNITS = 40_000;
const indexSettingSchema = z.union([z.literal('on-demand'), z.object(bounds).strict()]);
const provisionedSchema = z
  .object({ mode: z.literal('provisioned'), ...bounds, indexes: z.record(z.string(), indexSettingSchema).optional() })
  .strict();
// `{ mode: 'on-demand' }` too: a validated config (the output) validates again as it is.
const modeSchema = z.union([
  z.literal('on-demand'),
  z
    .object({ mode: z.literal('on-demand') })
    .strict()
    .transform(() => 'on-demand' as const),
  provisionedSchema,
]);
type ModeInput = z.output<typeof modeSchema>;
const perTableSchema = z
  .object({ default: modeSchema.optional(), eventStore: modeSchema.optional(), ledger: modeSchema.optional() })
  .strict();

export const capacitySchema = z
  .union([modeSchema, perTableSchema], {
    error:
      "capacity must be 'on-demand', { mode: 'provisioned', minWrite, maxWrite, minRead, maxRead, targetUtilization } " +
      '(both tables), or per table { default?, eventStore?, ledger? } with one of those each',
  })
  .default('on-demand')
  .superRefine((input, ctx) => {
    const settings = settingsOf(input);
    const checked = new Set<string>();
    for (const [table, setting, path] of settings) {
      if (setting === 'on-demand') continue;
      const { label, indexes } = CAPACITY_TABLES[table];
      const tableBounds = resolve(setting, PROVISIONED_DEFAULTS);
      // A setting shared by both tables is checked once, and its messages say so.
      const sharedBy = settings.filter(([, , p]) => p.join('.') === path.join('.')).length;
      if (!checked.has(path.join('.'))) checkScaled(tableBounds, setting, sharedBy > 1 ? 'both tables' : `the ${label} table`, path, ctx);
      checked.add(path.join('.'));
      for (const [name, value] of Object.entries(setting.indexes ?? {})) {
        const at = [...path, 'indexes', name];
        if (!indexes.includes(name)) {
          // A shared setting names the indexes of every table it applies to: only a name no table has is wrong.
          const shared = path.length === 0 || path[0] === 'default';
          if (shared && Object.values(CAPACITY_TABLES).some((t) => t.indexes.includes(name))) continue;
          ctx.addIssue({
            code: 'custom',
            path: at,
            message: `the ${label} table has no index ${name} (${indexes.length > 0 ? `its indexes: ${indexes.join(', ')}` : 'it has none'}); remove it`,
          });
        } else if (value === 'on-demand') {
          ctx.addIssue({
            code: 'custom',
            path: at,
            message:
              `index ${name} of the ${label} table would be left unscaled: a provisioned table's indexes are provisioned too, ` +
              "and an index short of capacity throttles the table's writes; give it { minWrite, maxWrite, minRead, maxRead } or leave it out to scale it as its table",
          });
        } else {
          checkScaled(resolve(value, tableBounds), value, `index ${name} of the ${label} table`, at, ctx);
        }
      }
    }
  })
  .transform((input): CapacityConfig => {
    const byTable = Object.fromEntries(settingsOf(input).map(([table, setting]) => [table, setting]));
    const out = {} as Record<CapacityTable, TableCapacity>;
    for (const table of Object.keys(CAPACITY_TABLES) as CapacityTable[]) {
      const setting = byTable[table] ?? 'on-demand';
      if (setting === 'on-demand') {
        out[table] = { mode: 'on-demand' };
        continue;
      }
      const tableBounds = resolve(setting, PROVISIONED_DEFAULTS);
      const overrides = setting.indexes ?? {};
      out[table] = {
        mode: 'provisioned',
        ...tableBounds,
        // Every index of the table, scaled as the table unless overridden: none is left unscaled.
        indexes: Object.fromEntries(
          CAPACITY_TABLES[table].indexes.map((name) => {
            const o = overrides[name];
            return [name, o && o !== 'on-demand' ? resolve(o, tableBounds) : tableBounds];
          }),
        ),
      };
    }
    return out;
  });
export type CapacityInput = z.input<typeof capacitySchema>;

/** Each table's own setting and where it was written (for messages): the per-table form or the shared one. */
function settingsOf(
  input: z.output<typeof modeSchema> | z.output<typeof perTableSchema>,
): [CapacityTable, ModeInput, (string | number)[]][] {
  const tables = Object.keys(CAPACITY_TABLES) as CapacityTable[];
  if (typeof input === 'string' || 'mode' in input) return tables.map((t) => [t, input as ModeInput, []]);
  const perTable = input as z.output<typeof perTableSchema>;
  return tables.flatMap((t): [CapacityTable, ModeInput, (string | number)[]][] => {
    const own = perTable[t];
    if (own !== undefined) return [[t, own, [t]]];
    if (perTable.default !== undefined) return [[t, perTable.default, ['default']]];
    return [];
  });
}

function resolve(written: Partial<ScaledCapacity>, fallback: ScaledCapacity): ScaledCapacity {
  return {
    minWrite: written.minWrite ?? fallback.minWrite,
    maxWrite: written.maxWrite ?? fallback.maxWrite,
    minRead: written.minRead ?? fallback.minRead,
    maxRead: written.maxRead ?? fallback.maxRead,
    targetUtilization: written.targetUtilization ?? fallback.targetUtilization,
  };
}

function checkScaled(
  resolved: ScaledCapacity,
  written: Partial<ScaledCapacity>,
  what: string,
  path: (string | number)[],
  ctx: z.RefinementCtx,
): void {
  for (const field of ['minWrite', 'maxWrite', 'minRead', 'maxRead'] as const) {
    const v = written[field];
    if (v !== undefined && !(Number.isInteger(v) && v >= 1 && v <= MAX_UNITS)) {
      ctx.addIssue({
        code: 'custom',
        path: [...path, field],
        message: `${field} must be a whole number of capacity units per second, 1-${MAX_UNITS}, on ${what}`,
      });
      return;
    }
  }
  for (const [min, max] of [
    ['minWrite', 'maxWrite'],
    ['minRead', 'maxRead'],
  ] as const) {
    if (resolved[max] < resolved[min]) {
      // Point at whichever of the two was written (the other is a default or inherited).
      const at = written[max] !== undefined ? max : min;
      ctx.addIssue({
        code: 'custom',
        path: [...path, at],
        message: `${max} ${resolved[max]} is below ${min} ${resolved[min]} on ${what}; raise ${max} or lower ${min}`,
        params: { resolved: resolved[at] },
      });
    }
  }
  const t = resolved.targetUtilization;
  if (!(t >= 20 && t <= 90)) {
    ctx.addIssue({
      code: 'custom',
      path: [...path, 'targetUtilization'],
      message: `targetUtilization must be 20-90 (percent of provisioned capacity auto scaling keeps in use) on ${what}, got ${t}; 70 is a common choice`,
    });
  }
}
