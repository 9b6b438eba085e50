/**
 * Events: find events by id or id prefix, or in a window by tenant, type (`payment.*`), source,
 * consumer, delivery state and intake outcome, newest first, a page at a time (GET /api/events).
 * Every filter and the page live in the address's query (`#/events?tenant=...`): a search writes
 * them there, so Back, a reload and a shared link show the same search. `Live` re-reads the newest
 * page; `Replay matching` replays the chosen consumer's deliveries of every matching event.
 */
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { EventsQuery, EventsResponse, MatchingReplayBody, OverviewResponse, TimeWindow } from '../../ops/console-api';
import { post, qs, useApi } from './api';
import { Choice, Confirmed, ErrorNote, eventHref, Field, iso } from './ui';

const DELIVERY_STATES = ['ready', 'leased', 'retrying', 'quarantined', 'done'];
const INTAKE_OUTCOMES = ['recorded', 'duplicate_conflict'];

/**
 * How often `Live` re-reads the newest page (each read reads the window through the index): new
 * events show within 5 s; every 2 s locally, every 4 s on a deployed stack, where reads are billed.
 */
const LIVE_LOCAL_MS = 2000;
const LIVE_AWS_MS = 4000;

/** The form's fields, each as typed. */
type EventsForm = Required<Omit<EventsQuery, 'cursor' | 'limit'>>;
type EventsSearch = EventsForm & { readonly cursor: number };

const FIELDS: readonly (keyof EventsForm)[] = ['eventId', 'tenant', 'type', 'source', 'consumer', 'state', 'outcome', 'from', 'to'];
const DEFAULTS: Partial<EventsForm> = { from: '-24h', to: 'now' };

function searchOf(params: URLSearchParams): EventsSearch {
  const form = Object.fromEntries(FIELDS.map((k) => [k, params.get(k) ?? DEFAULTS[k] ?? ''])) as EventsForm;
  const cursor = Number(params.get('cursor') ?? 0);
  return { ...form, cursor: Number.isInteger(cursor) && cursor > 0 ? cursor : 0 };
}

/** Writes the search to the address (the shell shows it); the same address again reads anew. */
function go(search: EventsSearch, reload: () => void): void {
  const next = `#/events${qs({ ...search, cursor: search.cursor || undefined })}`;
  if (next === location.hash) reload();
  else location.hash = next;
}

/** Whether the tab is shown: `Live` reads nothing while it is hidden. */
function usePageVisible(): boolean {
  const [visible, setVisible] = useState(document.visibilityState === 'visible');
  useEffect(() => {
    const on = () => setVisible(document.visibilityState === 'visible');
    document.addEventListener('visibilitychange', on);
    return () => document.removeEventListener('visibilitychange', on);
  }, []);
  return visible;
}

export function EventsView({ overview, params }: { overview: OverviewResponse; params: URLSearchParams }) {
  const query = searchOf(params);
  const [form, setForm] = useState<EventsForm>(query);
  const [live, setLive] = useState(true);
  const visible = usePageVisible();
  const newest = query.cursor === 0;
  const liveMs = live && newest && visible ? (overview.kind === 'aws' ? LIVE_AWS_MS : LIVE_LOCAL_MS) : undefined;
  const result = useApi('/events', query, liveMs);
  const set = (k: keyof EventsForm) => (v: string) => setForm({ ...form, [k]: v });
  const submit = (e: Event) => {
    e.preventDefault();
    go({ ...form, cursor: 0 }, result.reload);
  };
  const data = result.data;
  return html`<section aria-labelledby="events-h">
    <h1 id="events-h">Events</h1>
    <form class="filters" role="search" onSubmit=${submit}>
      <${Field} label="Search" name="eventId" value=${form.eventId} onInput=${set('eventId')} placeholder="event id or its first 6+ characters" type="search" />
      <${Field} label="Tenant" name="tenant" value=${form.tenant} onInput=${set('tenant')} />
      <${Field} label="Type" name="type" value=${form.type} onInput=${set('type')} placeholder="payment.succeeded or payment.*" />
      <${Choice} label="Source" name="source" value=${form.source} options=${overview.sources} onInput=${set('source')} />
      <${Choice} label="Consumer" name="consumer" value=${form.consumer} options=${overview.consumers} onInput=${set('consumer')} />
      <${Choice} label="Delivery state" name="state" value=${form.state} options=${DELIVERY_STATES} onInput=${set('state')} />
      <${Choice} label="Intake outcome" name="outcome" value=${form.outcome} options=${INTAKE_OUTCOMES} onInput=${set('outcome')} />
      <${Field} label="From" name="from" value=${form.from} onInput=${set('from')} />
      <${Field} label="To" name="to" value=${form.to} onInput=${set('to')} />
      <button type="submit">Search events</button>
    </form>
    <p class="live">
      <label><input type="checkbox" checked=${live && newest} disabled=${!newest}
        onChange=${(e: Event) => setLive((e.target as HTMLInputElement).checked)} /> Live</label>
      <span class="muted">${newest ? (liveMs ? `new events show within ${liveMs / 1000} s` : live ? 'paused while the tab is hidden' : '') : 'on the newest page only'}</span>
    </p>
    ${query.consumer && data?.window ? html`<${ReplayMatching} query=${query} window=${data.window} />` : null}
    <${ErrorNote} error=${result.error} />
    ${
      data
        ? html`<${EventsPage} data=${data} query=${query} reload=${result.reload} />`
        : result.loading
          ? html`<p role="status">Searching…</p>`
          : null
    }
  </section>`;
}

/**
 * `Replay matching`: the chosen consumer's deliveries of every event the search matches in the
 * window the list shows, counted first. The count's request is the one confirmed, even if `Live`
 * has moved the list's window since.
 */
function ReplayMatching({ query, window }: { query: EventsSearch; window: TimeWindow }) {
  const planned = useRef<MatchingReplayBody | undefined>(undefined);
  const { cursor: _cursor, from: _from, to: _to, ...filters } = query;
  const body: MatchingReplayBody = { ...filters, from: iso(window.from), to: iso(window.to) };
  return html`<${Confirmed}
    label="Replay matching"
    className="bulk"
    plan=${async () => {
      planned.current = body;
      const p = await post('/events/replay', { ...body, dryRun: true });
      const left = (p.expired ?? 0) + (p.erased ?? 0);
      const leftOut = left > 0 ? ` ${left} left out: payload past retention or erased.` : '';
      return p.matched === 0
        ? { text: `No delivery of ${query.consumer} matches: nothing to replay.${leftOut}`, nothing: true }
        : {
            text: `${p.matched} deliveries of ${query.consumer} will be replayed: those of the events listed, received in [${body.from}, ${body.to}).${leftOut}`,
          };
    }}
    act=${async () => {
      const r = await post('/events/replay', planned.current ?? body);
      return `Replay ${r.replayId}: ${r.requeued} deliveries of ${r.consumer} re-queued.`;
    }}
  />`;
}

/** One page of the search: how many matched, the rows, and the pager. */
function EventsPage({ data, query, reload }: { data: EventsResponse; query: EventsSearch; reload: () => void }) {
  return html`<p role="status">${data.total} event${data.total === 1 ? '' : 's'}${
    data.idPrefix !== undefined ? ` whose id starts with ${data.idPrefix}` : ''
  }${data.window ? ` received in [${iso(data.window.from)}, ${iso(data.window.to)})` : ''}${
    data.total > data.rows.length ? `; showing ${query.cursor + 1}–${query.cursor + data.rows.length}` : ''
  }</p>
    <table>
      <caption>Events, newest first</caption>
      <thead><tr><th scope="col">Received</th><th scope="col">Event</th><th scope="col">Source</th><th scope="col">Tenant</th><th scope="col">Type</th><th scope="col">Deliveries</th></tr></thead>
      <tbody>
        ${data.rows.map(
          (r) => html`<tr key=${`${r.source}/${r.eventId}`}>
            <td>${iso(r.receivedAt)}</td>
            <td><a href=${eventHref(r.source, r.eventId)}>${r.eventId}</a></td>
            <td>${r.source}</td><td>${r.tenantId}</td><td>${r.eventType}</td>
            <td>${Object.entries(r.deliveries).map(([c, s]) => html`<span class=${`pill ${s}`}>${c}: ${s}</span> `)}</td>
          </tr>`,
        )}
      </tbody>
    </table>
    <nav class="pager" aria-label="pages">
      <button type="button" disabled=${query.cursor === 0} onClick=${() => go({ ...query, cursor: Math.max(0, query.cursor - (data.rows.length || 25)) }, reload)}>Previous page</button>
      <button type="button" disabled=${data.next === undefined} onClick=${() => go({ ...query, cursor: data.next ?? 0 }, reload)}>Next page</button>
    </nav>`;
}
