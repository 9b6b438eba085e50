/**
 * The console's page: Preact with htm tagged templates (no JSX build step), one view per hash route,
 * each in its own module (`*-view.ts`) over the API's types (ops/console-api.ts); the frame and the
 * routing in shell.ts, the requests in api.ts, the shared pieces in ui.ts. Every number and list
 * comes from the console's own /api (the operations, ops/); nothing here computes what an operation
 * already answers. Actions that change something count first (a dry run) and act only on `Confirm`.
 */
import { html, render } from 'htm/preact';
import { App } from './shell';

const root = document.getElementById('app')!;
root.textContent = '';
render(html`<${App} />`, root);
