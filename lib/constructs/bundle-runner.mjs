/**
 * Builds one handler bundle with esbuild's asynchronous API, for HookledgerFunction's synchronous
 * bundling (bundleHandler in ./hookledger-function.ts) when the bundle needs plugins: reads
 * `{ options, plugins }` (JSON build options, plugin names of ./bundle-plugins.mjs) from stdin,
 * writes the build's metafile as JSON to stdout; esbuild's messages go to stderr.
 */
import { build } from 'esbuild';
import { pluginsNamed } from './bundle-plugins.mjs';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { options, plugins } = JSON.parse(input);
const result = await build({ ...options, plugins: pluginsNamed(plugins), metafile: true });
process.stdout.write(JSON.stringify(result.metafile));
