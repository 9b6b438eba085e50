/**
 * The page's charts, drawn as SVG here: stacked bars per bucket and lines per bucket. Each is one
 * image (`role="img"`) whose name (`label`) says what it shows and its totals, so a screen reader
 * gets the numbers and the table view has them all; colours come from the stylesheet's classes.
 */
import { html } from 'htm/preact';

const WIDTH = 600;
const HEIGHT = 150;
const LEFT = 44;
const BOTTOM = 18;
const TOP = 6;
const PLOT_W = WIDTH - LEFT - 4;
const PLOT_H = HEIGHT - TOP - BOTTOM;

export interface Series<V> {
  readonly name: string;
  readonly values: readonly V[];
  /** The stylesheet's class that colours it. */
  readonly className: string;
}

interface ChartProps<V> {
  /** Shown above the chart. */
  readonly title: string;
  /** The image's accessible name: what it shows and its totals. */
  readonly label: string;
  /** Each bucket's start. */
  readonly buckets: readonly number[];
  /** The window's end (the last bucket's end). */
  readonly end: number;
  readonly series: readonly Series<V>[];
  readonly format?: (value: number) => string;
}

/** A time as the axis shows it (UTC): `HH:MM` for a window within a day, else `MM-DD HH:MM`. */
const tick = (ms: number, long: boolean) =>
  new Date(ms)
    .toISOString()
    .slice(long ? 5 : 11, 16)
    .replace('T', ' ');

function Axes({ buckets, end, max, format }: { buckets: readonly number[]; end: number; max: number; format: (v: number) => string }) {
  const first = buckets[0] ?? end;
  const last = end;
  const long = last - first >= 86_400_000;
  return html`<line class="axis" x1=${LEFT} y1=${TOP + PLOT_H} x2=${LEFT + PLOT_W} y2=${TOP + PLOT_H} />
    <line class="axis" x1=${LEFT} y1=${TOP} x2=${LEFT} y2=${TOP + PLOT_H} />
    <text class="tick" x=${LEFT - 4} y=${TOP + 8} text-anchor="end">${format(max)}</text>
    <text class="tick" x=${LEFT - 4} y=${TOP + PLOT_H} text-anchor="end">0</text>
    <text class="tick" x=${LEFT} y=${HEIGHT - 4}>${tick(first, long)}</text>
    <text class="tick" x=${LEFT + PLOT_W} y=${HEIGHT - 4} text-anchor="end">${tick(last, long)}</text>`;
}

function Frame({ title, label, children }: { title: string; label: string; children: unknown }) {
  return html`<figure class="chart">
    <figcaption>${title}</figcaption>
    <svg role="img" aria-label=${label} viewBox=${`0 0 ${WIDTH} ${HEIGHT}`}>
      <title>${label}</title>
      ${children}
    </svg>
  </figure>`;
}

/** Bars per bucket, the series stacked in their order. */
export function BarChart({ title, label, buckets, end, series, format = String }: ChartProps<number>) {
  const n = Math.max(1, buckets.length);
  const totals = buckets.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const width = PLOT_W / n;
  const bars = buckets.flatMap((_, i) => {
    let base = 0;
    return series.map((s) => {
      const value = s.values[i] ?? 0;
      const h = (value / max) * PLOT_H;
      const y = TOP + PLOT_H - base - h;
      base += h;
      return value > 0
        ? html`<rect class=${s.className} x=${LEFT + i * width + width * 0.1} y=${y} width=${Math.max(1, width * 0.8)} height=${h} />`
        : null;
    });
  });
  return html`<${Frame} title=${title} label=${label}><${Axes} buckets=${buckets} end=${end} max=${max} format=${format} />${bars}</${Frame}>`;
}

/** One line per series through the buckets that have a value (a bucket without one breaks the line). */
export function LineChart({ title, label, buckets, end, series, format = String }: ChartProps<number | null>) {
  const n = Math.max(1, buckets.length);
  const max = Math.max(1, ...series.flatMap((s) => s.values.filter((v): v is number => v !== null)));
  const width = PLOT_W / n;
  const x = (i: number) => LEFT + i * width + width / 2;
  const y = (v: number) => TOP + PLOT_H - (v / max) * PLOT_H;
  const lines = series.flatMap((s) => {
    const runs: string[][] = [[]];
    s.values.forEach((v, i) => {
      if (v === null) runs.push([]);
      else runs.at(-1)?.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
    });
    return runs
      .filter((run) => run.length > 0)
      .map((run) =>
        run.length === 1
          ? html`<circle class=${s.className} cx=${run[0]?.split(',')[0]} cy=${run[0]?.split(',')[1]} r="2.5" />`
          : html`<polyline class=${s.className} points=${run.join(' ')} />`,
      );
  });
  return html`<${Frame} title=${title} label=${label}><${Axes} buckets=${buckets} end=${end} max=${max} format=${format} />${lines}</${Frame}>`;
}
