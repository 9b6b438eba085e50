/**
 * Writes the limits table of docs/scale.md (between its scale-table markers) from ops/capacity-check.ts
 * on the shipped configuration: bench/results.json's measured units, bench/prices.json's durations and
 * AWS's published limits (ops/aws-limits.ts). Run after a bench run: npx tsx scripts/scale-table.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from '../core/config/schema';
import baseConfig from '../hookledger.config';
import { type CapacityCheck, checkCapacity, type LimitRow } from '../ops/capacity-check';
import { benchFiles } from '../ops/cost';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TARGET = resolve(ROOT, 'docs', 'scale.md');
const START = '<!-- scale-table:start (npx tsx scripts/scale-table.ts) -->';
const END = '<!-- scale-table:end -->';
const RATES = [100, 1_000, 10_000];

const n = (v: number) => v.toLocaleString('en-US', { maximumFractionDigits: v < 10 ? 1 : 0 });
const cell = (r: LimitRow) => `${r.limit}: ${n(r.load)} of ${n(r.capacity)} ${r.unit} (${(100 * r.utilization).toFixed(0)}%)`;

function rowsOf(c: CapacityCheck): string[] {
  const met = c.exceeded.length > 0 ? c.exceeded.map((r) => r.id).join(', ') : 'none';
  return [
    `| ${n(c.ratePerSecond)}/s steady | ${cell(c.first.steady)} | ${met} | ${c.first.steady.raisedBy} |`,
    `| 50x burst on ${n(c.ratePerSecond)}/s (${n(c.ratePerSecond * c.burstFactor)}/s at once) | ${cell(c.first.burst)} | ${
      c.burst
        .filter((r) => r.utilization >= 1)
        .map((r) => r.id)
        .join(', ') || 'none'
    } | ${c.first.burst.raisedBy} |`,
  ];
}

export function scaleTable(): string {
  const config = defineConfig(baseConfig);
  const checks = RATES.map((rate) => checkCapacity(config, rate, benchFiles(ROOT)));
  return [
    '| load | first limit met (the most used) | every limit met | what raises the first |',
    '|---|---|---|---|',
    ...checks.flatMap(rowsOf),
  ].join('\n');
}

const doc = readFileSync(TARGET, 'utf8');
const [before, rest] = doc.split(START);
const after = rest?.split(END)[1];
if (before === undefined || after === undefined) {
  console.error(`docs/scale.md has no ${START} ... ${END} block`);
  process.exit(1);
}
writeFileSync(TARGET, `${before}${START}\n${scaleTable()}\n${END}${after}`);
console.log(`wrote the limits table of ${TARGET}`);
