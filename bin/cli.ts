/**
 * `hookledger`'s composition root, on the top floor: the CLI's commands (cli/) on the shipped
 * configuration, with `hookledger console` given the console's server (console/serve.ts), since the
 * CLI and the console are front ends side by side and neither imports the other. bin/hookledger.mjs runs it.
 */
import { consoleCommand } from '../cli/commands/console';
import { COMMANDS } from '../cli/commands/index';
import { type CliIo, runCli } from '../cli/program';
import { serveConsole } from '../console/serve';
import type { HookledgerConfig } from '../core/config/schema';
import defaultConfig from '../hookledger.config';

/** Runs one command line; resolves to the process exit code. */
export function main(
  argv: readonly string[] = process.argv.slice(2),
  io: CliIo = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env },
  config: HookledgerConfig = defaultConfig,
): Promise<number> {
  return runCli(argv, io, config, [...COMMANDS, consoleCommand(serveConsole)]);
}
