/**
 * Usage (GET /api/usage): units by tenant and consumer for events received in a window, and the same
 * report as the CLI's CSV to download.
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { OverviewResponse, UsageQuery } from '../../ops/console-api';
import { apiHref, useApi } from './api';
import { Choice, ErrorNote, Field, iso } from './ui';

export function UsageView({ overview }: { overview: OverviewResponse }) {
  const [form, setForm] = useState<Required<UsageQuery>>({ from: '-24h', to: 'now', tenant: '', consumer: '' });
  const [query, setQuery] = useState(form);
  const result = useApi('/usage', query);
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  const data = result.data;
  return html`<section aria-labelledby="usage-h">
    <h1 id="usage-h">Usage</h1>
    <form class="filters" onSubmit=${(e: Event) => {
      e.preventDefault();
      setQuery(form);
    }}>
      <${Field} label="From" name="from" value=${form.from} onInput=${set('from')} />
      <${Field} label="To" name="to" value=${form.to} onInput=${set('to')} />
      <${Field} label="Tenant" name="tenant" value=${form.tenant} onInput=${set('tenant')} />
      <${Choice} label="Consumer" name="consumer" value=${form.consumer} options=${overview.consumers} onInput=${set('consumer')} />
      <button type="submit">Show usage</button>
      <a class="button" href=${apiHref('/usage.csv', query)} download>Download CSV</a>
    </form>
    <${ErrorNote} error=${result.error} />
    ${
      data
        ? html`<p role="status">Units of events received in [${iso(data.from)}, ${iso(data.to)}): ${data.totalUnits} in total.</p>
          <table>
            <caption>Tenant × consumer</caption>
            <thead><tr><th scope="col">Tenant</th><th scope="col">Consumer</th><th scope="col">Units</th><th scope="col">Deliveries</th></tr></thead>
            <tbody>${data.rows.map((u) => html`<tr><td>${u.tenantId}</td><td>${u.consumerId}</td><td>${u.units}</td><td>${u.deliveries}</td></tr>`)}</tbody>
          </table>`
        : null
    }
  </section>`;
}
