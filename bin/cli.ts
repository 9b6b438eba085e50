/**
 * `hookledger`'s composition root, on the top floor: the CLI's commands (cli/) on the shipped
 * configuration, with `hookledger console` given the console's server (console/serve.ts), since the
 * CLI and the console are front ends side by side and neither imports the other. bin/hookledger.mjs
 * runs it prebuilt (bin/build-cli.mjs); the tests import it as it is.
 */
import { consoleCommand } from '../cli/commands/console';
import { COMMANDS } from '../cli/commands/index';
import { type CliIo, runCli } from '../cli/program';
import type { HookledgerConfig } from '../core/config/schema';
import type { ServeConsole } from '../ops/console-contract';

/** Set by bin/build-cli.mjs in the bundle it builds; unset when this file runs as TypeScript. */
const PREBUILT = process.env.HOOKLEDGER_PREBUILT_CLI === 'true';

/** The console's server (and esbuild, which bundles its page) loaded only by `hookledger console`. */
const serveConsole: ServeConsole = async (options) => (await import('../console/serve')).serveConsole(options);

/** The prebuilt CLI holds no consumer transform (the config names them by path): tsx loads them. */
const loadTypeScript = async () => void (await import('tsx/esm/api')).register();

/** The shipped configuration, imported (and checked) by the first action that reads it: `--help` does not. */
const shippedConfig = async () => (await import('../hookledger.config')).default;

/** Runs one command line; resolves to the process exit code. `config`: default the shipped one. */
export function main(
  argv: readonly string[] = process.argv.slice(2),
  io: CliIo = {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    ...(PREBUILT ? { loadTypeScript } : {}),
  },
  config?: HookledgerConfig,
): Promise<number> {
  return runCli(argv, io, config ?? shippedConfig, [...COMMANDS, consoleCommand(serveConsole)]);
}
