/**
 * The page's frame: the header with one link per view, the hash route (`#/<view>/<parts>?<params>`)
 * and which view it shows. The views get the overview (the target, its sources and consumers) once
 * it has loaded; the Event view loads alongside it.
 */
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { OverviewResponse } from '../../ops/console-api';
import { ActivityView } from './activity-view';
import { useApi } from './api';
import { ConsumersView } from './consumers-view';
import { EventView } from './event-view';
import { EventsView } from './events-view';
import { HealthView } from './health-view';
import { ReconcileView } from './reconcile-view';
import { SourcesView } from './sources-view';
import { ErrorNote } from './ui';
import { UsageView } from './usage-view';

interface Route {
  readonly view: string;
  readonly parts: string[];
  readonly params: URLSearchParams;
}

function route(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#\/?/, '').split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { view: parts[0] ?? 'events', parts: parts.slice(1), params: new URLSearchParams(search) };
}

const VIEWS = [
  ['events', 'Events'],
  ['activity', 'Activity'],
  ['consumers', 'Consumers'],
  ['health', 'Health'],
  ['usage', 'Usage'],
  ['reconcile', 'Reconcile'],
  ['sources', 'Sources'],
] as const;

/** The view a route shows; nothing until the overview has loaded, except the Event view. */
function viewOf({ view, parts, params }: Route, hash: string, overview?: OverviewResponse): unknown {
  if (view === 'event' && parts.length >= 2) return html`<${EventView} key=${hash} source=${parts[0]} eventId=${parts[1]} />`;
  if (!overview) return null;
  if (view === 'consumers') return html`<${ConsumersView} overview=${overview} />`;
  if (view === 'usage') return html`<${UsageView} overview=${overview} />`;
  if (view === 'reconcile') return html`<${ReconcileView} />`;
  if (view === 'sources') return html`<${SourcesView} />`;
  if (view === 'activity') return html`<${ActivityView} />`;
  if (view === 'health') return html`<${HealthView} />`;
  return html`<${EventsView} key=${hash} overview=${overview} params=${params} />`;
}

/** How long after a navigation the view's heading is waited for (a view may show it once its data loads). */
const HEADING_WAIT_MS = 5000;

/**
 * Moves the focus to the view's heading when the view (its path, not its query: a filter keeps the
 * focus where it is) changes, so a screen reader announces where the operator now is. Not on the
 * first load, where the skip link comes first. The heading gets `tabindex=-1` if its view gave none.
 */
function useFocusOnNavigation(viewPath: string): void {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const main = document.getElementById('main');
    if (!main) return;
    const focus = () => {
      const heading = main.querySelector('h1');
      if (!heading) return false;
      if (!heading.hasAttribute('tabindex')) heading.setAttribute('tabindex', '-1');
      heading.focus();
      return true;
    };
    if (focus()) return;
    const observer = new MutationObserver(() => focus() && observer.disconnect());
    observer.observe(main, { childList: true, subtree: true });
    const timer = setTimeout(() => observer.disconnect(), HEADING_WAIT_MS);
    return () => {
      observer.disconnect();
      clearTimeout(timer);
    };
  }, [viewPath]);
}

export function App() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  const overview = useApi('/overview', {});
  const current = route(hash);
  useFocusOnNavigation([current.view, ...current.parts].join('/'));
  const { view } = current;
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
      ${viewOf(current, hash, overview.data)}
    </main>`;
}
