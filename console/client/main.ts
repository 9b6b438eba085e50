/**
 * The console's page: Preact with htm tagged templates (no JSX build step), one view per hash route.
 * Every number and list comes from the console's own /api (the CLI's operations); nothing here
 * computes what an operation already answers. Actions that change something count first (a dry run)
 * and act only on `Confirm`.
 */
import { html, render } from 'htm/preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

// --- data ---------------------------------------------------------------------------------------

// biome-ignore lint/suspicious/noExplicitAny: the API's JSON as the views read it (its shapes are the operations' reports, ops/)
type Json = Record<string, any>;

class ApiError extends Error {}

async function api(path: string, body?: Json): Promise<Json> {
  const response = await fetch(`/api${path}`, {
    method: body ? 'POST' : 'GET',
    credentials: 'same-origin',
    headers: body ? { 'content-type': 'application/json' } : {},
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const data = (await response.json().catch(() => ({}))) as Json;
  if (!response.ok) throw new ApiError(data.message ?? `${response.status} ${response.statusText}`);
  return data;
}

const qs = (params: Record<string, string | number | undefined>) => {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') search.set(k, String(v));
  const text = search.toString();
  return text ? `?${text}` : '';
};

const iso = (ms?: number) => (ms === undefined || ms === null ? '' : new Date(ms).toISOString().replace('.000Z', 'Z'));
function age(ms?: number): string {
  if (ms === undefined || ms === null) return '';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h${String(m % 60).padStart(2, '0')}m` : `${Math.floor(h / 24)}d${h % 24}h`;
}
const eventHref = (source: string, eventId: string) => `#/event/${encodeURIComponent(source)}/${encodeURIComponent(eventId)}`;

/** One GET, re-run when `key` changes (and every `refreshMs` when given). */
function useApi(path: string | undefined, refreshMs?: number) {
  const [state, setState] = useState<{ data?: Json; error?: string; loading: boolean; at?: number }>({ loading: path !== undefined });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (path === undefined) return;
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    api(path).then(
      (data) => live && setState({ data, loading: false, at: Date.now() }),
      (error: Error) => live && setState({ error: error.message, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [path, tick]);
  useEffect(() => {
    if (!refreshMs) return;
    const timer = setInterval(() => setTick((t) => t + 1), refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs]);
  return { ...state, reload: useCallback(() => setTick((t) => t + 1), []) };
}

// --- pieces -------------------------------------------------------------------------------------

const ErrorNote = ({ error }: { error?: string }) => (error ? html`<p class="error" role="alert">${error}</p>` : null);

/**
 * An action that counts first: `label` runs `plan` (a dry run) and shows what it found with a
 * `Confirm` button (focused, so Enter confirms) and a `Cancel` button; `Confirm` runs `act`.
 */
function Confirmed(props: {
  label: string;
  plan: () => Promise<{ text: string; nothing?: boolean }>;
  act: () => Promise<string>;
  onDone?: () => void;
  className?: string;
}) {
  const [phase, setPhase] = useState<'idle' | 'planning' | 'asking' | 'acting' | 'done'>('idle');
  const [message, setMessage] = useState('');
  const [error, setError] = useState<string>();
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (phase === 'asking') confirmRef.current?.focus();
  }, [phase]);
  const start = async () => {
    setError(undefined);
    setPhase('planning');
    try {
      const plan = await props.plan();
      setMessage(plan.text);
      setPhase(plan.nothing ? 'done' : 'asking');
    } catch (e) {
      setError((e as Error).message);
      setPhase('idle');
    }
  };
  const confirm = async () => {
    setPhase('acting');
    try {
      setMessage(await props.act());
      setPhase('done');
      props.onDone?.();
    } catch (e) {
      setError((e as Error).message);
      setPhase('idle');
    }
  };
  return html`<span class=${`action ${props.className ?? ''}`}>
    <button type="button" onClick=${start} disabled=${phase === 'planning' || phase === 'acting'}>${props.label}</button>
    ${
      phase === 'asking'
        ? html`<span class="confirm" role="group" aria-label=${`${props.label}: confirm`}>
            <span>${message}</span>
            <button type="button" ref=${confirmRef} onClick=${confirm}>Confirm</button>
            <button type="button" onClick=${() => setPhase('idle')}>Cancel</button>
          </span>`
        : null
    }
    ${phase === 'acting' ? html`<span role="status">working…</span>` : null}
    ${phase === 'done' ? html`<span role="status" class="result">${message}</span>` : null}
    <${ErrorNote} error=${error} />
  </span>`;
}

function Field(props: { label: string; name: string; value: string; onInput: (v: string) => void; placeholder?: string; type?: string }) {
  const id = `f-${props.name}`;
  return html`<span class="field"><label for=${id}>${props.label}</label>
    <input id=${id} name=${props.name} type=${props.type ?? 'text'} value=${props.value} placeholder=${props.placeholder ?? ''}
      onInput=${(e: Event) => props.onInput((e.target as HTMLInputElement).value)} /></span>`;
}

function Choice(props: { label: string; name: string; value: string; options: readonly string[]; onInput: (v: string) => void }) {
  const id = `f-${props.name}`;
  return html`<span class="field"><label for=${id}>${props.label}</label>
    <select id=${id} name=${props.name} value=${props.value} onChange=${(e: Event) => props.onInput((e.target as HTMLSelectElement).value)}>
      <option value="">any</option>
      ${props.options.map((o) => html`<option value=${o}>${o}</option>`)}
    </select></span>`;
}

// --- views --------------------------------------------------------------------------------------

function EventsView({ overview, params }: { overview: Json; params: URLSearchParams }) {
  const initial = {
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
  const [query, setQuery] = useState({ ...initial, cursor: 0 });
  const result = useApi(`/events${qs(query)}`);
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
      <${Choice} label="Delivery state" name="state" value=${form.state} options=${['ready', 'leased', 'retrying', 'quarantined', 'done']} onInput=${set('state')} />
      <${Choice} label="Intake outcome" name="outcome" value=${form.outcome} options=${['recorded', 'duplicate_conflict']} onInput=${set('outcome')} />
      <${Field} label="From" name="from" value=${form.from} onInput=${set('from')} />
      <${Field} label="To" name="to" value=${form.to} onInput=${set('to')} />
      <button type="submit">Search events</button>
    </form>
    <${ErrorNote} error=${result.error} />
    ${
      data
        ? html`<p role="status">${data.total} event${data.total === 1 ? '' : 's'}${
            data.window ? ` received in [${iso(data.window.from)}, ${iso(data.window.to)})` : ''
          }${data.total > data.rows.length ? `; showing ${query.cursor + 1}–${query.cursor + data.rows.length}` : ''}</p>
          <table>
            <caption>Events, newest first</caption>
            <thead><tr><th scope="col">Received</th><th scope="col">Event</th><th scope="col">Source</th><th scope="col">Tenant</th><th scope="col">Type</th><th scope="col">Deliveries</th></tr></thead>
            <tbody>
              ${data.rows.map(
                (r: Json) => html`<tr>
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
            <button type="button" disabled=${data.next === undefined} onClick=${() => setQuery({ ...query, cursor: data.next })}>Next page</button>
          </nav>`
        : result.loading
          ? html`<p role="status">Searching…</p>`
          : null
    }
  </section>`;
}

function EventView({ source, eventId }: { source: string; eventId: string }) {
  const result = useApi(`/event${qs({ source, eventId })}`);
  const data = result.data;
  useEffect(() => {
    if (data) performance.mark('hookledger:event-rendered');
  }, [data]);
  if (result.error) return html`<section><h1>Event ${eventId}</h1><${ErrorNote} error=${result.error} /></section>`;
  if (!data) return html`<section><h1>Event ${eventId}</h1><p role="status">Loading…</p></section>`;
  const r = data.receipt;
  const payloadText = data.payload
    ? data.payload.json !== undefined
      ? JSON.stringify(data.payload.json, null, 2)
      : data.payload.text
    : undefined;
  return html`<section aria-labelledby="event-h">
    <h1 id="event-h">Event ${r.eventId}</h1>
    <h2>Receipt and attribution</h2>
    <dl class="facts">
      <dt>Source</dt><dd>${r.source}</dd>
      <dt>Type</dt><dd>${r.eventType}</dd>
      <dt>Tenant</dt><dd>${r.tenantId}</dd>
      <dt>Key</dt><dd>${r.keyId}</dd>
      <dt>Received</dt><dd>${iso(r.receivedAt)}</dd>
      <dt>Verified by</dt><dd>the ${r.secretVersion} signing secret</dd>
      <dt>Payload</dt><dd>${r.payload} · ${r.payloadBytes} bytes · kept until ${iso(r.payloadExpiresAt)}${r.payloadObject ? ` · in the payload bucket at ${r.payloadObject}` : ''}</dd>
      <dt>Keyed hash</dt><dd><code>${r.payloadHash}</code></dd>
      <dt>Delivery set</dt><dd>${r.consumers.join(', ') || '(none)'}</dd>
      <dt>Conflicts</dt><dd>${
        data.conflicts.count > 0
          ? `${data.conflicts.count} request(s) reused this event id with other bytes (answered duplicate_conflict, nothing stored)`
          : 'none'
      }</dd>
    </dl>
    <h2>Deliveries</h2>
    <table>
      <caption>Per consumer</caption>
      <thead><tr><th scope="col">Consumer</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Last error</th><th scope="col">Units</th><th scope="col">Principal</th><th scope="col">Reads</th><th scope="col">Acknowledged</th><th scope="col">Action</th></tr></thead>
      <tbody>
        ${data.deliveries.map(
          (d: Json) => html`<tr>
            <th scope="row">${d.consumer}${d.expected ? '' : ' (unexpected)'}</th>
            <td><span class=${`pill ${d.state}`}>${d.state}</span></td>
            <td>${d.attempts}</td>
            <td>${d.errors.length > 0 ? `${d.lastErrorCategory ?? ''}: ${d.errors[d.errors.length - 1].message}` : (d.lastErrorCategory ?? '')}</td>
            <td>${d.units ?? ''}</td>
            <td>${d.principal ?? ''}</td>
            <td>${d.reads.length}</td>
            <td>${iso(d.ackAt)}</td>
            <td>${
              d.expected
                ? html`<${Confirmed}
                    label=${`Replay ${d.consumer}`}
                    plan=${async () => {
                      const p = await api('/event/replay', { source: r.source, eventId: r.eventId, consumer: d.consumer, dryRun: true });
                      return {
                        text: `${p.matched} delivery to ${d.consumer} will be sent again (never adds usage).`,
                        nothing: p.matched === 0,
                      };
                    }}
                    act=${async () => {
                      const p = await api('/event/replay', { source: r.source, eventId: r.eventId, consumer: d.consumer });
                      return `Replay ${p.replayId}: ${p.requeued} requeued.`;
                    }}
                    onDone=${() => setTimeout(result.reload, 1500)}
                  />`
                : null
            }</td>
          </tr>`,
        )}
      </tbody>
    </table>
    ${data.deliveries
      .filter((d: Json) => d.errors.length > 0)
      .map(
        (d: Json) => html`<h3>Errors of ${d.consumer}</h3>
        <table>
          <thead><tr><th scope="col">Attempt</th><th scope="col">At</th><th scope="col">Category</th><th scope="col">Message</th></tr></thead>
          <tbody>${d.errors.map((e: Json) => html`<tr><td>${e.attempt}</td><td>${iso(e.at)}</td><td>${e.category}</td><td>${e.message}</td></tr>`)}</tbody>
        </table>`,
      )}
    <h2>Payload</h2>
    ${
      payloadText !== undefined
        ? html`<pre class="payload" tabindex="0" aria-label="payload">${payloadText}</pre>`
        : html`<p>${r.payload === 'present' ? 'stored in the payload bucket (not shown here)' : r.payload}: the keyed hash <code>${r.payloadHash}</code> remains (<code>hookledger verify-payload</code> checks a body against it).</p>`
    }
  </section>`;
}

/**
 * Every refresh reads the window's receipts and ledger rows (status through the window index): every
 * 2 s locally, every 15 s on a deployed stack, where those reads are billed.
 */
function ConsumersView({ overview }: { overview: Json }) {
  const refreshMs = overview.kind === 'aws' ? 15_000 : 2000;
  const result = useApi('/consumers?since=24h', refreshMs);
  const data = result.data;
  return html`<section aria-labelledby="consumers-h">
    <h1 id="consumers-h">Consumers</h1>
    <${ErrorNote} error=${result.error} />
    ${
      data
        ? html`<p role="status" class="muted">Deliveries of events received since ${iso(data.window?.from)}; queues read live; refreshed every ${refreshMs / 1000} s (last ${iso(data.at)}).</p>
          <table>
            <caption>Deliveries by state, queues and controls</caption>
            <thead><tr>
              <th scope="col">Consumer</th><th scope="col">Paused</th><th scope="col">Circuit</th><th scope="col">Ready</th><th scope="col">Leased</th><th scope="col">Retrying</th>
              <th scope="col">Quarantined</th><th scope="col">Done</th><th scope="col">Queue</th><th scope="col">DLQ</th><th scope="col">Oldest pending</th><th scope="col">Actions</th>
            </tr></thead>
            <tbody>
              ${data.consumers.map((c: Json) => {
                const circuit = data.circuits?.[c.consumer];
                return html`<tr key=${c.consumer}>
                  <th scope="row">${c.consumer}</th>
                  <td>${c.paused === undefined ? '?' : c.paused ? 'paused' : 'running'}</td>
                  <td>${circuit ? `${circuit.failures}/${circuit.breakAfter} failures` : '–'}</td>
                  <td>${c.ready}</td><td>${c.leased + c.expiredLeases}</td><td>${c.retrying}</td>
                  <td>${c.quarantined}</td><td>${c.done}</td>
                  <td>${depthText(c.queue)}</td>
                  <td data-dlq=${c.consumer}>${depthText(c.dlq)}</td>
                  <td>${age(c.oldestPendingAgeMs)}</td>
                  <td class="actions">
                    ${
                      c.paused
                        ? html`<button type="button" onClick=${() => api('/consumers/resume', { consumer: c.consumer }).then(result.reload)}>Resume ${c.consumer}</button>`
                        : html`<${Confirmed}
                            label=${`Pause ${c.consumer}`}
                            plan=${async () => ({
                              text: `${c.consumer} stops taking deliveries until resumed; they wait in its queue, none is lost.`,
                            })}
                            act=${async () => {
                              await api('/consumers/pause', { consumer: c.consumer });
                              return `${c.consumer} paused.`;
                            }}
                            onDone=${result.reload}
                          />`
                    }
                    <${Confirmed}
                      label=${`Redrive ${c.consumer}`}
                      plan=${async () => {
                        const p = await api('/consumers/redrive', { consumer: c.consumer, dryRun: true });
                        return p.toMove === 0
                          ? { text: `The DLQ of ${c.consumer} is empty: nothing to move.`, nothing: true }
                          : { text: `${p.toMove} message(s) will move from the DLQ of ${c.consumer} to its queue.` };
                      }}
                      act=${async () => {
                        const p = await api('/consumers/redrive', { consumer: c.consumer });
                        return `${p.moved} of ${p.toMove} message(s) moved from the DLQ of ${c.consumer}.`;
                      }}
                      onDone=${result.reload}
                    />
                  </td>
                </tr>`;
              })}
            </tbody>
          </table>
          <p>Intake: ${data.intake.events} events in the window${
            data.fanoutFailures ? `; fan-out on-failure queue: ${data.fanoutFailures.visible + data.fanoutFailures.inFlight} record(s)` : ''
          }.</p>`
        : html`<p role="status">Loading…</p>`
    }
  </section>`;
}

/** Visible messages, and those in flight when there are any. */
const depthText = (d?: Json) => (d ? `${d.visible}${d.inFlight > 0 ? ` +${d.inFlight} in flight` : ''}` : '');

function UsageView({ overview }: { overview: Json }) {
  const [form, setForm] = useState({ from: '-24h', to: 'now', tenant: '', consumer: '' });
  const [query, setQuery] = useState(form);
  const result = useApi(`/usage${qs(query)}`);
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
      <a class="button" href=${`/api/usage.csv${qs(query)}`} download>Download CSV</a>
    </form>
    <${ErrorNote} error=${result.error} />
    ${
      data
        ? html`<p role="status">Units of events received in [${iso(data.from)}, ${iso(data.to)}): ${data.totalUnits} in total.</p>
          <table>
            <caption>Tenant × consumer</caption>
            <thead><tr><th scope="col">Tenant</th><th scope="col">Consumer</th><th scope="col">Units</th><th scope="col">Deliveries</th></tr></thead>
            <tbody>${data.rows.map((u: Json) => html`<tr><td>${u.tenantId}</td><td>${u.consumerId}</td><td>${u.units}</td><td>${u.deliveries}</td></tr>`)}</tbody>
          </table>`
        : null
    }
  </section>`;
}

function ReconcileView() {
  const [form, setForm] = useState({ from: '-24h', to: 'now', grace: '15m' });
  const [query, setQuery] = useState<typeof form | undefined>();
  const result = useApi(query ? `/reconcile${qs(query)}` : undefined);
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  const data = result.data;
  return html`<section aria-labelledby="reconcile-h">
    <h1 id="reconcile-h">Reconcile</h1>
    <form class="filters" onSubmit=${(e: Event) => {
      e.preventDefault();
      setQuery({ ...form });
    }}>
      <${Field} label="From" name="from" value=${form.from} onInput=${set('from')} />
      <${Field} label="To" name="to" value=${form.to} onInput=${set('to')} />
      <${Field} label="Grace" name="grace" value=${form.grace} onInput=${set('grace')} />
      <button type="submit">Run reconcile</button>
    </form>
    <${ErrorNote} error=${result.error} />
    ${result.loading ? html`<p role="status">Checking…</p>` : null}
    ${
      data && query
        ? html`<p role="status">${data.receipts} receipts, ${data.expectedDeliveries} expected deliveries, ${data.ledgerItems} ledger items; ${data.quarantined} quarantined; ${data.inGrace} within the grace; ${data.violations.length} violation(s).</p>
          <table>
            <caption>Violations</caption>
            <thead><tr><th scope="col">Kind</th><th scope="col">Source</th><th scope="col">Event</th><th scope="col">Consumer</th><th scope="col">Ledger key</th></tr></thead>
            <tbody>${data.violations.map(
              (v: Json) =>
                html`<tr><td>${v.kind}</td><td>${v.source}</td><td><a href=${eventHref(v.source, v.eventId)}>${v.eventId}</a></td><td>${v.consumerId}</td><td><code>${v.ledgerKey}</code></td></tr>`,
            )}</tbody>
          </table>
          <${Confirmed}
            label="Repair missing and stalled deliveries"
            plan=${async () => {
              const p = await api('/reconcile/repair', { ...query, dryRun: true });
              return p.repaired === 0
                ? { text: `Nothing to repair (${p.unrepaired} not repairable now, ${p.notRepairable} need a person).`, nothing: true }
                : { text: `${p.repaired} deliveries will be re-queued; ${p.unrepaired} not (paused or over the limit).` };
            }}
            act=${async () => {
              const p = await api('/reconcile/repair', { ...query });
              return `Repair ${p.repairId ?? ''}: ${p.repaired} repaired (re-queued), ${p.unrepaired} not repaired.`;
            }}
          />`
        : null
    }
  </section>`;
}

function SourcesView() {
  const result = useApi('/sources');
  const data = result.data;
  return html`<section aria-labelledby="sources-h">
    <h1 id="sources-h">Sources</h1>
    <${ErrorNote} error=${result.error} />
    ${
      data
        ? html`<table>
            <caption>Intake and signing-secret rotation (events received since ${iso(data.window.from)}; never a secret's value)</caption>
            <thead><tr><th scope="col">Source</th><th scope="col">Scheme</th><th scope="col">Events</th><th scope="col">Verified by</th><th scope="col">Rotation</th><th scope="col">Previous secret last verified</th></tr></thead>
            <tbody>${data.sources.map(
              (s: Json) => html`<tr>
                <th scope="row">${s.source}</th>
                <td>${s.provider ? `${s.provider} (${s.scheme})` : s.scheme}</td>
                <td>${s.events}</td>
                <td>${
                  Object.entries(s.bySecretVersion)
                    .map(([v, n]) => `${v} ${n}`)
                    .join(', ') || '–'
                }</td>
                <td>${
                  s.rotation
                    ? s.rotation.hasPrevious
                      ? s.rotation.previousUntil && s.rotation.previousUntil > Date.now()
                        ? `previous secret verifies until ${iso(s.rotation.previousUntil)}`
                        : 'previous secret kept, no longer verifying'
                      : 'no rotation under way'
                    : `unknown: ${s.rotationError}`
                }</td>
                <td>${s.previousSecretLastVerified ? iso(s.previousSecretLastVerified) : 'not in the window'}</td>
              </tr>`,
            )}</tbody>
          </table>
          <h2>Requests by outcome</h2>
          ${
            data.outcomes
              ? html`<table>
                  <caption>Since the local stack started (refusals store nothing, so they are counted here)</caption>
                  <thead><tr><th scope="col">Outcome</th><th scope="col">Requests</th></tr></thead>
                  <tbody>${Object.entries(data.outcomes).map(([o, n]) => html`<tr><td>${o}</td><td>${n}</td></tr>`)}</tbody>
                </table>`
              : html`<p>On a deployed stack: the IntakeRequests widget of its CloudWatch dashboard.</p>`
          }`
        : html`<p role="status">Loading…</p>`
    }
  </section>`;
}

// --- shell --------------------------------------------------------------------------------------

function route(hash: string): { view: string; parts: string[]; params: URLSearchParams } {
  const [path = '', search = ''] = hash.replace(/^#\/?/, '').split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { view: parts[0] ?? 'events', parts: parts.slice(1), params: new URLSearchParams(search) };
}

const VIEWS = [
  ['events', 'Events'],
  ['consumers', 'Consumers'],
  ['usage', 'Usage'],
  ['reconcile', 'Reconcile'],
  ['sources', 'Sources'],
] as const;

function App() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  const overview = useApi('/overview');
  const { view, parts, params } = route(hash);
  let body: unknown = null;
  // The Event view needs nothing from the overview: it loads alongside it.
  if (view === 'event' && parts.length >= 2) body = html`<${EventView} key=${hash} source=${parts[0]} eventId=${parts[1]} />`;
  else if (overview.data) {
    if (view === 'consumers') body = html`<${ConsumersView} overview=${overview.data} />`;
    else if (view === 'usage') body = html`<${UsageView} overview=${overview.data} />`;
    else if (view === 'reconcile') body = html`<${ReconcileView} />`;
    else if (view === 'sources') body = html`<${SourcesView} />`;
    else body = html`<${EventsView} key=${hash} overview=${overview.data} params=${params} />`;
  }
  return html`<header>
      <a class="skip" href="#main">Skip to content</a>
      <span class="brand">hookledger</span>
      <nav aria-label="views">${VIEWS.map(
        ([id, label]) =>
          html`<a href=${`#/${id}`} aria-current=${view === id || (id === 'events' && view === 'event') ? 'page' : undefined}>${label}</a>`,
      )}</nav>
      <span class="target">${overview.data ? overview.data.target : ''}</span>
    </header>
    <main id="main">
      <${ErrorNote} error=${overview.error} />
      ${body}
    </main>`;
}

const root = document.getElementById('app')!;
root.textContent = '';
render(html`<${App} />`, root);
