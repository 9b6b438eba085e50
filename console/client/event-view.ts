/**
 * One event (GET /api/event): its receipt and attribution, each delivery with its errors and a
 * Replay that counts first (none once the payload is erased), its timeline (`hookledger trace`'s),
 * and the stored payload while it is kept. Its first render is marked (`hookledger:event-rendered`)
 * for the browser test's measurement.
 */
import { html } from 'htm/preact';
import { useEffect } from 'preact/hooks';
import type { EventDelivery, EventReceipt, EventResponse, TimelineStep } from '../../ops/console-api';
import { post, useApi } from './api';
import { Confirmed, ErrorNote, iso } from './ui';

/** How long after a replay the view reloads: time for the replayed delivery to move. */
const RELOAD_AFTER_REPLAY_MS = 1500;

export function EventView({ source, eventId }: { source: string; eventId: string }) {
  const result = useApi('/event', { source, eventId });
  const data = result.data;
  useEffect(() => {
    if (data) performance.mark('hookledger:event-rendered');
  }, [data]);
  if (result.error) return html`<section><h1 tabindex="-1">Event ${eventId}</h1><${ErrorNote} error=${result.error} /></section>`;
  if (!data) return html`<section><h1 tabindex="-1">Event ${eventId}</h1><p role="status">Loading…</p></section>`;
  const r = data.receipt;
  return html`<section aria-labelledby="event-h">
    <h1 id="event-h" tabindex="-1">Event ${r.eventId}</h1>
    <h2>Receipt and attribution</h2>
    <${ReceiptFacts} receipt=${r} conflicts=${data.conflicts.count} />
    <h2>Deliveries</h2>
    <table>
      <caption>Per consumer</caption>
      <thead><tr><th scope="col">Consumer</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Last error</th><th scope="col">Units</th><th scope="col">Principal</th><th scope="col">Reads</th><th scope="col">Acknowledged</th><th scope="col">Action</th></tr></thead>
      <tbody>
        ${data.deliveries.map((d) => html`<${DeliveryRow} receipt=${r} delivery=${d} reload=${result.reload} />`)}
      </tbody>
    </table>
    ${r.erased ? html`<p class="muted">No Replay: the payload was erased, so there is nothing to send again.</p>` : null}
    ${data.deliveries.filter((d) => d.errors.length > 0).map((d) => html`<${DeliveryErrors} delivery=${d} />`)}
    <h2 id="timeline-h">Timeline</h2>
    <${Timeline} steps=${data.timeline} />
    <h2>Payload</h2>
    <${Payload} event=${data} />
  </section>`;
}

function ReceiptFacts({ receipt: r, conflicts }: { receipt: EventReceipt; conflicts: number }) {
  return html`<dl class="facts">
    <dt>Source</dt><dd>${r.source}</dd>
    <dt>Type</dt><dd>${r.eventType}</dd>
    <dt>Tenant</dt><dd>${r.tenantId}</dd>
    <dt>Key</dt><dd>${r.keyId}</dd>
    <dt>Received</dt><dd>${iso(r.receivedAt)}</dd>
    <dt>Verified by</dt><dd>the ${r.secretVersion} signing secret</dd>
    <dt>Payload</dt><dd>${
      r.erased
        ? `erased ${iso(r.erased.at)} by ${r.erased.by} (erasure ${r.erased.erasureId}) · was ${r.payloadBytes} bytes`
        : `${r.payload} · ${r.payloadBytes} bytes · kept until ${iso(r.payloadExpiresAt)}${r.payloadObject ? ` · in the payload bucket at ${r.payloadObject}` : ''}`
    }</dd>
    <dt>Keyed hash</dt><dd><code>${r.payloadHash}</code></dd>
    <dt>Delivery set</dt><dd>${r.consumers.join(', ') || '(none)'}</dd>
    <dt>Conflicts</dt><dd>${
      conflicts > 0 ? `${conflicts} request(s) reused this event id with other bytes (answered duplicate_conflict, nothing stored)` : 'none'
    }</dd>
  </dl>`;
}

/** A delivery's row: where it stands, its last error, and Replay for a consumer of the delivery set. */
function DeliveryRow({ receipt: r, delivery: d, reload }: { receipt: EventReceipt; delivery: EventDelivery; reload: () => void }) {
  const lastError = d.errors[d.errors.length - 1];
  return html`<tr>
    <th scope="row">${d.consumer}${d.expected ? '' : ' (unexpected)'}</th>
    <td><span class=${`pill ${d.state}`}>${d.state}</span></td>
    <td>${d.attempts}</td>
    <td>${lastError ? `${d.lastErrorCategory ?? ''}: ${lastError.message}` : (d.lastErrorCategory ?? '')}</td>
    <td>${d.units ?? ''}</td>
    <td>${d.principal ?? ''}</td>
    <td>${d.reads.length}</td>
    <td>${iso(d.ackAt)}</td>
    <td>${
      d.expected && !r.erased
        ? html`<${Confirmed}
            label=${`Replay ${d.consumer}`}
            plan=${async () => {
              const p = await post('/event/replay', { source: r.source, eventId: r.eventId, consumer: d.consumer, dryRun: true });
              return {
                text: `${p.matched} delivery to ${d.consumer} will be sent again (never adds usage).`,
                nothing: p.matched === 0,
              };
            }}
            act=${async () => {
              const p = await post('/event/replay', { source: r.source, eventId: r.eventId, consumer: d.consumer });
              return `Replay ${p.replayId}: ${p.requeued} requeued.`;
            }}
            onDone=${() => setTimeout(reload, RELOAD_AFTER_REPLAY_MS)}
          />`
        : null
    }</td>
  </tr>`;
}

function DeliveryErrors({ delivery: d }: { delivery: EventDelivery }) {
  return html`<h3>Errors of ${d.consumer}</h3>
    <table>
      <thead><tr><th scope="col">Attempt</th><th scope="col">At</th><th scope="col">Category</th><th scope="col">Message</th></tr></thead>
      <tbody>${d.errors.map((e) => html`<tr><td>${e.attempt}</td><td>${iso(e.at)}</td><td>${e.category}</td><td>${e.message}</td></tr>`)}</tbody>
    </table>`;
}

/**
 * Each step with the milliseconds since receipt (its ISO time as the cell's title); a step nothing
 * times says `not recorded`, and its note why. `Took`: from the attempt's claim to its outcome.
 */
function Timeline({ steps }: { steps: readonly TimelineStep[] }) {
  return html`<table aria-labelledby="timeline-h" class="timeline">
    <thead><tr><th scope="col">Since receipt</th><th scope="col">Step</th><th scope="col">Consumer</th><th scope="col">Attempt</th><th scope="col">Category or outcome</th><th scope="col">HTTP status</th><th scope="col">Took</th><th scope="col">Note</th></tr></thead>
    <tbody>${steps.map(
      (s) => html`<tr class=${`step ${s.step}`}>
        <td title=${iso(s.at)}>${s.sinceReceiptMs === undefined ? 'not recorded' : `+${s.sinceReceiptMs} ms`}</td>
        <td>${s.step}</td>
        <td>${s.consumer ?? ''}</td>
        <td>${s.attempt ?? ''}</td>
        <td>${s.category ?? s.outcome ?? ''}</td>
        <td>${s.httpStatus ?? ''}</td>
        <td>${s.durationMs === undefined ? '' : `${s.durationMs} ms`}</td>
        <td class="muted">${[s.replayId ? `replay ${s.replayId}` : '', s.note ?? ''].filter(Boolean).join('; ')}</td>
      </tr>`,
    )}</tbody>
  </table>`;
}

/** The stored payload (JSON indented), or why it is not shown and what remains. */
function Payload({ event }: { event: EventResponse }) {
  const r = event.receipt;
  const text = event.payload
    ? event.payload.json !== undefined
      ? JSON.stringify(event.payload.json, null, 2)
      : event.payload.text
    : undefined;
  return text !== undefined
    ? html`<pre class="payload" tabindex="0" aria-label="payload">${text}</pre>`
    : html`<p>${r.payload === 'present' ? 'stored in the payload bucket (not shown here)' : r.payload}: the keyed hash <code>${r.payloadHash}</code> remains (<code>hookledger verify-payload</code> checks a body against it).</p>`;
}
