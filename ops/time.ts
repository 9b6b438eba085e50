/** Times and durations on the command line: ISO-8601 or relative to now (`-1h`, `-30m`, `now`). */
import { UsageError } from './errors';

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/;

/**
 * `now`, `-90s`, `-30m`, `-1h`, `-7d`, `-2w`, or ISO-8601 (`2026-11-29`, `2026-11-29T12:00:00Z`).
 * A date-time without an offset is read as UTC, never as the machine's zone.
 */
export function parseTime(value: string, now: number, name = 'time'): number {
  const text = value.trim();
  if (text === 'now') return now;
  if (text.startsWith('-')) return now - parseDuration(text.slice(1), name);
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const zoned = /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text) ? `${text}Z` : text;
    const ms = Date.parse(zoned);
    if (!Number.isNaN(ms)) return ms;
  }
  throw new UsageError(`${name} "${value}" is not a time; use ISO-8601 (2026-11-29T12:00:00Z) or relative to now (-30m, -1h, -7d, now)`);
}

/** `15m`, `90s`, `1h`, `0`: a length of time in ms. */
export function parseDuration(value: string, name = 'duration'): number {
  const text = value.trim();
  if (text === '0') return 0;
  const match = DURATION.exec(text);
  if (!match) throw new UsageError(`${name} "${value}" is not a duration; use a number and a unit: 90s, 15m, 1h, 7d`);
  const unit = match[2] === 'ms' ? 1 : (UNIT_MS[match[2] as string] as number);
  return Math.round(Number(match[1]) * unit);
}

/** `3d4h`, `12m05s`, `850ms`: short and exact enough for an age column. */
export function formatAge(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${h % 24}h`;
}

export const iso = (ms: number | undefined) => (ms === undefined ? '' : new Date(ms).toISOString());
