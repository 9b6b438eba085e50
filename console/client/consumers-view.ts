/**
 * Consumers (GET /api/consumers), refreshed live: each consumer's deliveries by state, its queue and
 * DLQ, its circuit breaker and whether it is paused, with Pause (asks first), Resume and Redrive
 * (counts first; then links to the events quarantined for that consumer, which say why).
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { CircuitState, ConsumerRow, OverviewResponse, QueueDepth } from '../../ops/console-api';
import { post, useApi } from './api';
import { age, Confirmed, ErrorNote, iso } from './ui';

/**
 * Every refresh reads the window's receipts and ledger rows (status through the window index): every
 * 2 s locally, every 15 s on a deployed stack, where those reads are billed.
 */
const REFRESH_LOCAL_MS = 2000;
const REFRESH_AWS_MS = 15_000;

export function ConsumersView({ overview }: { overview: OverviewResponse }) {
  const refreshMs = overview.kind === 'aws' ? REFRESH_AWS_MS : REFRESH_LOCAL_MS;
  const result = useApi('/consumers', { since: '24h' }, refreshMs);
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
              ${data.consumers.map(
                (c) => html`<${ConsumerLine} key=${c.consumer} c=${c} circuit=${data.circuits[c.consumer]} reload=${result.reload} />`,
              )}
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
const depthText = (d?: QueueDepth) => (d ? `${d.visible}${d.inFlight > 0 ? ` +${d.inFlight} in flight` : ''}` : '');

/** After a redrive: the events whose delivery is quarantined again (a message that fails again goes back to the DLQ). */
const quarantinedHref = (consumer: string) => `#/events?consumer=${encodeURIComponent(consumer)}&state=quarantined`;

function ConsumerLine({ c, circuit, reload }: { c: ConsumerRow; circuit?: CircuitState; reload: () => void }) {
  const [redriven, setRedriven] = useState(false);
  return html`<tr>
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
          ? html`<button type="button" onClick=${() => post('/consumers/resume', { consumer: c.consumer }).then(reload)}>Resume ${c.consumer}</button>`
          : html`<${Confirmed}
              label=${`Pause ${c.consumer}`}
              plan=${async () => ({
                text: `${c.consumer} stops taking deliveries until resumed; they wait in its queue, none is lost.`,
              })}
              act=${async () => {
                await post('/consumers/pause', { consumer: c.consumer });
                return `${c.consumer} paused.`;
              }}
              onDone=${reload}
            />`
      }
      <${Confirmed}
        label=${`Redrive ${c.consumer}`}
        plan=${async () => {
          const p = await post('/consumers/redrive', { consumer: c.consumer, dryRun: true });
          return p.toMove === 0
            ? { text: `The DLQ of ${c.consumer} is empty: nothing to move.`, nothing: true }
            : { text: `${p.toMove} message(s) will move from the DLQ of ${c.consumer} to its queue.` };
        }}
        act=${async () => {
          const p = await post('/consumers/redrive', { consumer: c.consumer });
          return `${p.moved} of ${p.toMove} message(s) moved from the DLQ of ${c.consumer}.`;
        }}
        onDone=${() => {
          setRedriven(true);
          reload();
        }}
      />
      ${
        redriven
          ? html`<span class="why">A message that fails again goes back to the DLQ:
              <a href=${quarantinedHref(c.consumer)}>Events quarantined for ${c.consumer}</a></span>`
          : null
      }
    </td>
  </tr>`;
}
