/**
 * Health (GET /api/health): one row per rule and its state, OK or ALARM, since when and why (the
 * reason, with the threshold), refreshed every few seconds, with what the rules could not see here. Its first render is marked
 * (`hookledger:health-rendered`) for the browser test.
 */
import { html } from 'htm/preact';
import { useEffect } from 'preact/hooks';
import { useApi } from './api';
import { ErrorNote, iso } from './ui';

/** How often the rules are read again: each read is a status over 7 days (the index), so not every 2 s as Consumers. */
const REFRESH_MS = 15_000;

export function HealthView() {
  const result = useApi('/health', {}, REFRESH_MS);
  const data = result.data;
  useEffect(() => {
    if (data) performance.mark('hookledger:health-rendered');
  }, [data]);
  const alarms = data?.rows.filter((r) => r.state === 'ALARM').length ?? 0;
  return html`<section aria-labelledby="health-h">
    <h1 id="health-h">Health</h1>
    <${ErrorNote} error=${result.error} />
    ${
      data
        ? html`<p role="status">${alarms === 0 ? 'Every rule is OK' : `${alarms} of ${data.rows.length} rules in ALARM`} (read ${iso(data.at)}).</p>
          <table>
            <caption>Rules</caption>
            <thead><tr><th scope="col">Rule</th><th scope="col">Subject</th><th scope="col">State</th><th scope="col">Since</th><th scope="col">Reason</th></tr></thead>
            <tbody>${data.rows.map(
              (r) =>
                html`<tr><td>${r.rule}</td><td>${r.subject}</td><td><span class=${`pill ${r.state === 'ALARM' ? 'alarm' : 'ok'}`}>${r.state}</span></td><td>${r.since === undefined ? '-' : iso(r.since)}</td><td>${r.reason}</td></tr>`,
            )}</tbody>
          </table>
          <p>Since “-”: the rule is OK, or its data records no start time (a DLQ message, the breaker and a pause keep none).</p>
          <ul class="notes">${data.notes.map((n) => html`<li>${n}</li>`)}</ul>`
        : html`<p role="status">Reading the rules…</p>`
    }
  </section>`;
}
