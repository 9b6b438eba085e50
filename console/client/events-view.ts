/**
 * Events: find events by id, or in a window by tenant, type, source, consumer, delivery state and
 * intake outcome, newest first, a page at a time (GET /api/events). The filters start from the
 * address's query (`#/events?tenant=...`).
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { EventsQuery, EventsResponse, OverviewResponse } from '../../ops/console-api';
import { useApi } from './api';
import { Choice, ErrorNote, eventHref, Field, iso } from './ui';

const DELIVERY_STATES = ['ready', 'leased', 'retrying', 'quarantined', 'done'];
const INTAKE_OUTCOMES = ['recorded', 'duplicate_conflict'];

/** The form's fields, each as typed. */
type EventsForm = Required<Omit<EventsQuery, 'cursor' | 'limit'>>;
type EventsSearch = EventsForm & { readonly cursor: number };

export function EventsView({ overview, params }: { overview: OverviewResponse; params: URLSearchParams }) {
  const initial: EventsForm = {
    eventId: params.get('eventId') ?? '',
    tenant: params.get('tenant') ?? '',
    type: params.get('type') ?? '',
    source: params.get('source') ?? '',
    consumer: params.get('consumer') ?? '',
    state: params.get('state') ?? '',
    outcome: params.get('outcome') ?? '',
    from: params.get('from') ?? '-24h',
    to: params.get('to') ?? 'now',
  };
  const [form, setForm] = useState(initial);
  const [query, setQuery] = useState<EventsSearch>({ ...initial, cursor: 0 });
  const result = useApi('/events', query);
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  const submit = (e: Event) => {
    e.preventDefault();
    setQuery({ ...form, cursor: 0 });
  };
  const data = result.data;
  return html`<section aria-labelledby="events-h">
    <h1 id="events-h">Events</h1>
    <form class="filters" role="search" onSubmit=${submit}>
      <${Field} label="Search" name="eventId" value=${form.eventId} onInput=${set('eventId')} placeholder="event id, e.g. evt_01J8K7M2Q4" type="search" />
      <${Field} label="Tenant" name="tenant" value=${form.tenant} onInput=${set('tenant')} />
      <${Field} label="Type" name="type" value=${form.type} onInput=${set('type')} />
      <${Choice} label="Source" name="source" value=${form.source} options=${overview.sources} onInput=${set('source')} />
      <${Choice} label="Consumer" name="consumer" value=${form.consumer} options=${overview.consumers} onInput=${set('consumer')} />
      <${Choice} label="Delivery state" name="state" value=${form.state} options=${DELIVERY_STATES} onInput=${set('state')} />
      <${Choice} label="Intake outcome" name="outcome" value=${form.outcome} options=${INTAKE_OUTCOMES} onInput=${set('outcome')} />
      <${Field} label="From" name="from" value=${form.from} onInput=${set('from')} />
      <${Field} label="To" name="to" value=${form.to} onInput=${set('to')} />
      <button type="submit">Search events</button>
    </form>
    <${ErrorNote} error=${result.error} />
    ${
      data
        ? html`<${EventsPage} data=${data} query=${query} setQuery=${setQuery} />`
        : result.loading
          ? html`<p role="status">Searching…</p>`
          : null
    }
  </section>`;
}

/** One page of the search: how many matched, the rows, and the pager. */
function EventsPage({ data, query, setQuery }: { data: EventsResponse; query: EventsSearch; setQuery: (q: EventsSearch) => void }) {
  return html`<p role="status">${data.total} event${data.total === 1 ? '' : 's'}${
    data.window ? ` received in [${iso(data.window.from)}, ${iso(data.window.to)})` : ''
  }${data.total > data.rows.length ? `; showing ${query.cursor + 1}–${query.cursor + data.rows.length}` : ''}</p>
    <table>
      <caption>Events, newest first</caption>
      <thead><tr><th scope="col">Received</th><th scope="col">Event</th><th scope="col">Source</th><th scope="col">Tenant</th><th scope="col">Type</th><th scope="col">Deliveries</th></tr></thead>
      <tbody>
        ${data.rows.map(
          (r) => html`<tr>
            <td>${iso(r.receivedAt)}</td>
            <td><a href=${eventHref(r.source, r.eventId)}>${r.eventId}</a></td>
            <td>${r.source}</td><td>${r.tenantId}</td><td>${r.eventType}</td>
            <td>${Object.entries(r.deliveries).map(([c, s]) => html`<span class=${`pill ${s}`}>${c}: ${s}</span> `)}</td>
          </tr>`,
        )}
      </tbody>
    </table>
    <nav class="pager" aria-label="pages">
      <button type="button" disabled=${query.cursor === 0} onClick=${() => setQuery({ ...query, cursor: Math.max(0, query.cursor - (data.rows.length || 25)) })}>Previous page</button>
      <button type="button" disabled=${data.next === undefined} onClick=${() => setQuery({ ...query, cursor: data.next ?? 0 })}>Next page</button>
    </nav>`;
}
