/** Argument checks several commands share; each fails with a UsageError (exit 2) naming the bad value. */
import type { HookledgerConfig } from '../../core/config/schema';
import { UsageError } from '../../ops/errors';
import { iso, parseTime } from '../../ops/time';

/** `--from`/`--to` as a half-open window [from, to) in epoch ms. */
export function parseWindow(fromText: string, toText: string): { from: number; to: number } {
  const now = Date.now();
  const from = parseTime(fromText, now, '--from');
  const to = parseTime(toText, now, '--to');
  if (!(from < to)) throw new UsageError(`--from must be before --to (got ${iso(from)} .. ${iso(to)})`);
  return { from, to };
}

export function requireConsumer(config: HookledgerConfig, id: string): string {
  const ids = config.consumers.map((c) => c.id);
  if (!ids.includes(id)) throw new UsageError(`unknown consumer "${id}"; configured: ${ids.join(', ')}`);
  return id;
}

export function requireSource(config: HookledgerConfig, id: string): string {
  const ids = config.sources.map((s) => s.id);
  if (!ids.includes(id)) throw new UsageError(`unknown source "${id}"; configured: ${ids.join(', ')}`);
  return id;
}
