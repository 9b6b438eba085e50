#!/usr/bin/env node
// `npx hookledger`: runs the prebuilt CLI (bin/build-cli.mjs: bin/cli.ts bundled once, rebuilt when a
// source changes), so a command starts without compiling any TypeScript.
import module from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cliEntry } from './build-cli.mjs';

/** As the CLI's own EXIT.failed (ops/errors.ts): the CLI could not run. */
const EXIT_FAILED = 3;

// The SDK's Node-20 support notice would open every command's output; set it to 'false' to see it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

let entry;
try {
  // A note on a terminal only: scripts and tests read the command's own output, unchanged.
  entry = await cliEntry({ onBuild: (why) => process.stderr.isTTY && process.stderr.write(`building the CLI (${why}) ...\n`) });
} catch (error) {
  // esbuild has printed what failed (file, line, message) above.
  process.stderr.write(
    `error: the CLI could not be built from its sources: ${error instanceof Error ? error.message.split('\n')[0] : error}\n`,
  );
  process.exit(EXIT_FAILED);
}
// Node 22.1+: V8 keeps the build's compiled code beside it (and drops it with it), so the next start
// skips compiling it; Node 20 has no such cache and starts as before.
module.enableCompileCache?.(path.join(path.dirname(entry), 'compile-cache'));
const { main } = await import(pathToFileURL(entry).href);
const code = await main();
// Exit once stdout is flushed: idle keep-alive sockets must not hold the process open.
process.stdout.write('', () => process.exit(code));
