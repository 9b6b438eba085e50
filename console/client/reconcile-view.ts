/**
 * Reconcile (GET /api/reconcile): runs the checks over a window on request and lists the violations
 * by event; Repair re-queues the missing and stalled deliveries after a dry-run count.
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { ReconcileQuery, ReconcileResponse } from '../../ops/console-api';
import { post, useApi } from './api';
import { Confirmed, ErrorNote, eventHref, Field } from './ui';

type ReconcileForm = Required<ReconcileQuery>;

export function ReconcileView() {
  const [form, setForm] = useState<ReconcileForm>({ from: '-24h', to: 'now', grace: '15m' });
  const [query, setQuery] = useState<ReconcileForm | undefined>();
  const result = useApi(query ? '/reconcile' : undefined, query ?? {});
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
    ${data && query ? html`<${Findings} data=${data} query=${query} />` : null}
  </section>`;
}

/** What the run found, and Repair over the same window. */
function Findings({ data, query }: { data: ReconcileResponse; query: ReconcileForm }) {
  return html`<p role="status">${data.receipts} receipts, ${data.expectedDeliveries} expected deliveries, ${data.ledgerItems} ledger items; ${data.quarantined} quarantined; ${data.inGrace} within the grace; ${data.violations.length} violation(s).</p>
    <table>
      <caption>Violations</caption>
      <thead><tr><th scope="col">Kind</th><th scope="col">Source</th><th scope="col">Event</th><th scope="col">Consumer</th><th scope="col">Ledger key</th></tr></thead>
      <tbody>${data.violations.map(
        (v) =>
          html`<tr><td>${v.kind}</td><td>${v.source}</td><td><a href=${eventHref(v.source, v.eventId)}>${v.eventId}</a></td><td>${v.consumerId}</td><td><code>${v.ledgerKey}</code></td></tr>`,
      )}</tbody>
    </table>
    <${Confirmed}
      label="Repair missing and stalled deliveries"
      plan=${async () => {
        const p = await post('/reconcile/repair', { ...query, dryRun: true });
        return p.repaired === 0
          ? { text: `Nothing to repair (${p.unrepaired} not repairable now, ${p.notRepairable} need a person).`, nothing: true }
          : { text: `${p.repaired} deliveries will be re-queued; ${p.unrepaired} not (paused or over the limit).` };
      }}
      act=${async () => {
        const p = await post('/reconcile/repair', { ...query });
        return `Repair ${p.repairId ?? ''}: ${p.repaired} repaired (re-queued), ${p.unrepaired} not repaired.`;
      }}
    />`;
}
