/**
 * The page's script: console/client/main.ts (Preact + htm, no JSX step) bundled with esbuild in
 * memory when the console starts (once per process), with the stylesheet next to it. Nothing is
 * fetched from anywhere else: the bundle holds Preact and htm themselves. Of ours outside the page's
 * folder it holds only the error base (core/errors.ts, which imports nothing); the API's types
 * (ops/console-api.ts) are `import type` and leave nothing. A Node module cannot slip in: for the
 * browser platform esbuild resolves no Node built-in (`node:fs`, `path`), and the build fails.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export interface ConsoleBundle {
  readonly js: string;
  readonly css: string;
  readonly buildMs: number;
}

const CLIENT = path.join(import.meta.dirname, 'client');
let built: Promise<ConsoleBundle> | undefined;

export function buildBundle(): Promise<ConsoleBundle> {
  built ??= (async () => {
    const t0 = performance.now();
    // Loaded here, not at the top: every other CLI command stays free of esbuild's start-up cost.
    const { build } = await import('esbuild');
    const [out, css] = await Promise.all([
      build({
        entryPoints: [path.join(CLIENT, 'main.ts')],
        bundle: true,
        write: false,
        format: 'esm',
        platform: 'browser',
        target: 'es2022',
        minify: true,
        legalComments: 'none',
        logLevel: 'silent',
      }),
      readFile(path.join(CLIENT, 'style.css'), 'utf8'),
    ]);
    return { js: out.outputFiles[0]?.text ?? '', css, buildMs: Math.round(performance.now() - t0) };
  })().catch((error: unknown) => {
    built = undefined;
    throw error;
  });
  return built;
}
