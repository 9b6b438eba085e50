/**
 * Activity (GET /api/activity): a window (the last hour, 24 hours, 7 days, or from/to) in buckets;
 * per source the events received and the requests answered as duplicates, per consumer the
 * deliveries done, retrying and quarantined and their latency (received -> acknowledged, p50 and
 * p99). Charts are SVG drawn here (no chart library), each an image with a name that says its
 * numbers; `Show as table` shows the window's totals as rows. Its first render is marked
 * (`hookledger:activity-rendered`) for the browser test.
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import type { ActivityQuery, ActivityResponse, ConsumerActivity } from '../../ops/console-api';
import { useApi } from './api';
import { BarChart, LineChart } from './charts';
import { ErrorNote, Field, iso } from './ui';

const PRESETS = [
  ['1h', 'Last hour'],
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
] as const;

/** A bucket's size in words: `1 min`, `3 h`, `1 day`. */
export function bucketLabel(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} day`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  return `${Math.round(ms / 60_000)} min`;
}

/** A latency as the page shows it: `120 ms`, `1.4 s`; `–` for none. */
export const latency = (ms?: number | null) =>
  ms === undefined || ms === null ? '–' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;

export function ActivityView() {
  const [form, setForm] = useState({ from: '', to: '' });
  const [query, setQuery] = useState<ActivityQuery>({ preset: '24h' });
  const [asTable, setAsTable] = useState(false);
  const result = useApi('/activity', query);
  const data = result.data;
  useEffect(() => {
    if (data) performance.mark('hookledger:activity-rendered');
  }, [data]);
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  return html`<section aria-labelledby="activity-h">
    <h1 id="activity-h">Activity</h1>
    <div class="filters" role="group" aria-label="window">
      ${PRESETS.map(
        ([preset, label]) =>
          html`<button type="button" aria-pressed=${query.preset === preset} onClick=${() => setQuery({ preset })}>${label}</button>`,
      )}
    </div>
    <form class="filters" onSubmit=${(e: Event) => {
      e.preventDefault();
      setQuery({ from: form.from || '-24h', to: form.to || 'now' });
    }}>
      <${Field} label="From" name="from" value=${form.from} placeholder="-24h" onInput=${set('from')} />
      <${Field} label="To" name="to" value=${form.to} placeholder="now" onInput=${set('to')} />
      <button type="submit">Show activity</button>
      <button type="button" onClick=${() => setAsTable(!asTable)}>${asTable ? 'Show as charts' : 'Show as table'}</button>
    </form>
    <${ErrorNote} error=${result.error} />
    ${data ? html`<p role="status">Events received in [${iso(data.from)}, ${iso(data.to)}), in ${bucketLabel(data.bucketMs)} buckets; deliveries counted in the bucket of their event’s receipt.</p>` : null}
    ${data ? (asTable ? html`<${ActivityTables} data=${data} />` : html`<${ActivityCharts} data=${data} />`) : null}
  </section>`;
}

function ActivityCharts({ data }: { data: ActivityResponse }) {
  const per = `per ${bucketLabel(data.bucketMs)} bucket`;
  return html`<h2>Sources</h2>
    <p class="legend"><span class="key received">received</span> <span class="key duplicates">duplicates</span></p>
    <div class="charts">${data.sources.map(
      (s) =>
        html`<${BarChart} title=${`${s.source}: received and duplicates`} buckets=${data.buckets} end=${data.to}
          label=${`Events received by ${s.source} ${per}: ${s.total} in total, ${s.duplicateTotal} ${s.duplicateTotal === 1 ? 'duplicate' : 'duplicates'}`}
          series=${[
            { name: 'received', values: s.received, className: 'received' },
            { name: 'duplicates', values: s.duplicates, className: 'duplicates' },
          ]} />`,
    )}</div>
    <p class="note">Duplicates: requests naming an event already recorded (a provider’s retry), answered 200 and stored once; counted per minute.</p>
    <h2>Consumers</h2>
    <p class="legend"><span class="key done">done</span> <span class="key retrying">retrying</span> <span class="key quarantined">quarantined</span> · latency <span class="key p50">p50</span> <span class="key p99">p99</span></p>
    <div class="charts">${data.consumers.map((c) => html`<${ConsumerCharts} c=${c} buckets=${data.buckets} end=${data.to} per=${per} />`)}</div>`;
}

function ConsumerCharts({ c, buckets, end, per }: { c: ConsumerActivity; buckets: readonly number[]; end: number; per: string }) {
  const { totals, latencyMs } = c;
  const latencyName =
    latencyMs.samples === 0
      ? `Delivery latency of ${c.consumer} ${per}: no delivery done`
      : `Delivery latency of ${c.consumer} ${per}: p50 ${latency(latencyMs.p50)}, p99 ${latency(latencyMs.p99)} over ${latencyMs.samples} deliveries`;
  return html`<${BarChart} title=${`${c.consumer}: deliveries`} buckets=${buckets} end=${end}
      label=${`Deliveries of ${c.consumer} ${per}: ${totals.done} done, ${totals.retrying} retrying, ${totals.quarantined} quarantined`}
      series=${[
        { name: 'done', values: c.done, className: 'done' },
        { name: 'retrying', values: c.retrying, className: 'retrying' },
        { name: 'quarantined', values: c.quarantined, className: 'quarantined' },
      ]} />
    <${LineChart} title=${`${c.consumer}: latency`} label=${latencyName} buckets=${buckets} end=${end} format=${latency}
      series=${[{ name: 'p50', values: c.p50, className: 'p50' }, { name: 'p99', values: c.p99, className: 'p99' }]} />`;
}

/** The window's totals: one row per source and per consumer. */
function ActivityTables({ data }: { data: ActivityResponse }) {
  return html`<table>
      <caption>Sources</caption>
      <thead><tr><th scope="col">Source</th><th scope="col">Received</th><th scope="col">Duplicates</th></tr></thead>
      <tbody>${data.sources.map((s) => html`<tr><td>${s.source}</td><td>${s.total}</td><td>${s.duplicateTotal}</td></tr>`)}</tbody>
    </table>
    <table>
      <caption>Consumers</caption>
      <thead><tr><th scope="col">Consumer</th><th scope="col">Done</th><th scope="col">Retrying</th><th scope="col">Quarantined</th><th scope="col">Latency p50</th><th scope="col">Latency p99</th></tr></thead>
      <tbody>${data.consumers.map(
        (c) =>
          html`<tr><td>${c.consumer}</td><td>${c.totals.done}</td><td>${c.totals.retrying}</td><td>${c.totals.quarantined}</td><td>${latency(c.latencyMs.p50)}</td><td>${latency(c.latencyMs.p99)}</td></tr>`,
      )}</tbody>
    </table>`;
}
