/**
 * Sources (GET /api/sources): per source, the event types it declares it receives, its events by the secret that verified them and where its
 * signing-secret rotation stands (never a value), and intake's requests by outcome where the target
 * counts them (the local stack).
 */
import { html } from 'htm/preact';
import type { SourceRow, SourcesResponse } from '../../ops/console-api';
import { useApi } from './api';
import { ErrorNote, iso } from './ui';

export function SourcesView() {
  const result = useApi('/sources', {});
  const data = result.data;
  return html`<section aria-labelledby="sources-h">
    <h1 id="sources-h">Sources</h1>
    <${ErrorNote} error=${result.error} />
    ${
      data
        ? html`<table>
            <caption>Intake and signing-secret rotation (events received since ${iso(data.window.from)}; never a secret's value)</caption>
            <thead><tr><th scope="col">Source</th><th scope="col">Scheme</th><th scope="col">Receives</th><th scope="col">Events</th><th scope="col">Verified by</th><th scope="col">Rotation</th><th scope="col">Previous secret last verified</th></tr></thead>
            <tbody>${data.sources.map((s) => html`<${SourceLine} s=${s} />`)}</tbody>
          </table>
          <h2>Requests by outcome</h2>
          <${Outcomes} outcomes=${data.outcomes} />`
        : html`<p role="status">Loading…</p>`
    }
  </section>`;
}

function SourceLine({ s }: { s: SourceRow }) {
  return html`<tr>
    <th scope="row">${s.source}</th>
    <td>${s.provider ? `${s.provider} (${s.scheme})` : s.scheme}</td>
    <td>${s.declaredEvents ? s.declaredEvents.join(', ') : 'every type (no events declared)'}</td>
    <td>${s.events}</td>
    <td>${
      Object.entries(s.bySecretVersion)
        .map(([v, n]) => `${v} ${n}`)
        .join(', ') || '–'
    }</td>
    <td>${rotationText(s)}</td>
    <td>${s.previousSecretLastVerified ? iso(s.previousSecretLastVerified) : 'not in the window'}</td>
  </tr>`;
}

/** Where the source's rotation stands: a previous secret kept, verifying until when. */
function rotationText(s: SourceRow): string {
  if (!s.rotation) return `unknown: ${s.rotationError}`;
  if (!s.rotation.hasPrevious) return 'no rotation under way';
  return s.rotation.previousUntil && s.rotation.previousUntil > Date.now()
    ? `previous secret verifies until ${iso(s.rotation.previousUntil)}`
    : 'previous secret kept, no longer verifying';
}

/** Refusals store nothing: intake's counters are the only record of them (absent on a deployed stack). */
function Outcomes({ outcomes }: { outcomes: SourcesResponse['outcomes'] }) {
  return outcomes
    ? html`<table>
        <caption>Since the local stack started (refusals store nothing, so they are counted here)</caption>
        <thead><tr><th scope="col">Outcome</th><th scope="col">Requests</th></tr></thead>
        <tbody>${Object.entries(outcomes).map(([o, n]) => html`<tr><td>${o}</td><td>${n}</td></tr>`)}</tbody>
      </table>`
    : html`<p>On a deployed stack: the IntakeRequests widget of its CloudWatch dashboard.</p>`;
}
