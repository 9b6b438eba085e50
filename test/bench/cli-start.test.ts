/**
 * bench/cli-start.ts: what the bench reports of the CLI's start. Timings are the bench's to print, not
 * this test's to judge: it checks the rows, their samples and that each ratio is over the bare start.
 */
import { describe, expect, it } from 'vitest';
import { measureCliStart } from '../../bench/cli-start';

describe('measureCliStart', () => {
  it('reports node -e 0, --help and providers --json, each sampled `runs` times, the ratios over the bare median', async () => {
    const lines: string[] = [];

    const result = await measureCliStart({ runs: 2, log: (line) => lines.push(line) });

    expect(result.rows.map((r) => r.command)).toEqual(['node -e 0', 'hookledger --help', 'hookledger providers --json']);
    for (const row of result.rows) expect(row.samplesMs).toHaveLength(2);
    const [bare, help, providers] = result.rows;
    expect(bare?.ratio).toBeUndefined();
    expect(help?.ratio).toBeCloseTo((help?.medianMs ?? 0) / (bare?.medianMs ?? 1), 1);
    expect(result.startRatio).toBe(Math.max(help?.ratio ?? 0, providers?.ratio ?? 0));
    expect(result.statusMs).toBeUndefined();
    expect(lines).toEqual(['cli start: node -e 0, hookledger --help, providers --json, 2 rounds...']);
  });
});
