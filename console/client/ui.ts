/**
 * What every view renders with: times and ages as the page shows them, links to an event, the error
 * note, the form fields, and `Confirmed`, the action that counts before it acts.
 */
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** An ISO time without zero milliseconds; '' for none. */
export const iso = (ms?: number) => (ms === undefined || ms === null ? '' : new Date(ms).toISOString().replace('.000Z', 'Z'));

/** A duration as its two largest units: `42s`, `3m05s`, `7h02m`, `3d4h`; '' for none. */
export function age(ms?: number): string {
  if (ms === undefined || ms === null) return '';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h${String(m % 60).padStart(2, '0')}m` : `${Math.floor(h / 24)}d${h % 24}h`;
}

export const eventHref = (source: string, eventId: string) => `#/event/${encodeURIComponent(source)}/${encodeURIComponent(eventId)}`;

export const ErrorNote = ({ error }: { error?: string }) => (error ? html`<p class="error" role="alert">${error}</p>` : null);

type Phase = 'idle' | 'planning' | 'asking' | 'acting' | 'done';

export interface ConfirmedProps {
  label: string;
  plan: () => Promise<{ text: string; nothing?: boolean }>;
  act: () => Promise<string>;
  onDone?: () => void;
  className?: string;
}

/**
 * An action that counts first: `label` runs `plan` (a dry run) and shows what it found with a
 * `Confirm` button (focused, so Enter confirms) and a `Cancel` button; `Confirm` runs `act`.
 */
export function Confirmed(props: ConfirmedProps) {
  const [phase, setPhase] = useState<Phase>('idle');
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

export function Field(props: {
  label: string;
  name: string;
  value: string;
  onInput: (v: string) => void;
  placeholder?: string;
  type?: string;
}) {
  const id = `f-${props.name}`;
  return html`<span class="field"><label for=${id}>${props.label}</label>
    <input id=${id} name=${props.name} type=${props.type ?? 'text'} value=${props.value} placeholder=${props.placeholder ?? ''}
      onInput=${(e: Event) => props.onInput((e.target as HTMLInputElement).value)} /></span>`;
}

/** A select of `options` with `any` (the empty value) first. */
export function Choice(props: { label: string; name: string; value: string; options: readonly string[]; onInput: (v: string) => void }) {
  const id = `f-${props.name}`;
  return html`<span class="field"><label for=${id}>${props.label}</label>
    <select id=${id} name=${props.name} value=${props.value} onChange=${(e: Event) => props.onInput((e.target as HTMLSelectElement).value)}>
      <option value="">any</option>
      ${props.options.map((o) => html`<option value=${o}>${o}</option>`)}
    </select></span>`;
}
