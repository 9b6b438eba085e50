/**
 * The `hookledger` program: its global options, help and exit codes around the commands it is given
 * (cli/commands; the composition root, bin/cli.ts, adds `console`). Errors become exit codes here, in
 * one place.
 */
import { Command, CommanderError } from 'commander';
import { PROJECT_ROOT } from '../core/paths';
import { cliErrorOf, EXIT } from '../ops/errors';
import { type CliIo, type ConfigSource, createContext } from './commands/context';
import type { RegisterCommand } from './commands/index';

export type { CliIo } from './commands/context';

/** Runs one command line with these commands; resolves to the process exit code. `config`: as it is, or how to load it. */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
  config: ConfigSource,
  commands: readonly RegisterCommand[],
): Promise<number> {
  const ctx = createContext(io, config, PROJECT_ROOT);
  const program = new Command('hookledger')
    .description('Operate a hookledger stack: the local one from `npm start` (default), or a deployed one with --stack.')
    .option('--stack <name>', 'a deployed CloudFormation stack (reads its outputs); default: the local stack')
    .option('--region <region>', 'AWS region of --stack (default: AWS_REGION / your profile)')
    .option('--json', 'print the result as JSON (for scripts)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void io.stderr.write(s) })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      `
Times: ISO-8601 (2026-11-29T12:00:00Z; UTC when no offset) or relative to now (-30m, -1h, -7d, now).
Local stack: .hookledger/state.json, written by \`npm start\` (HOOKLEDGER_STATE overrides the path).
Exit codes: 0 ok; 1 reconcile found violations, or what was asked for was not found / refused;
            2 usage error; 3 the stack could not be reached or the operation failed.`,
    );
  for (const register of commands) register(program, ctx);

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return ctx.exitCode();
  } catch (error) {
    return exitCodeOf(error, ctx.warn);
  }
}

/** The one place errors become exit codes; commander has already printed its own messages. */
function exitCodeOf(error: unknown, warn: (text: string) => void): number {
  if (error instanceof CommanderError) {
    return ['commander.helpDisplayed', 'commander.help', 'commander.version', 'commander.executeSubCommandAsync'].includes(error.code)
      ? EXIT.ok
      : EXIT.usage;
  }
  const expected = cliErrorOf(error);
  if (expected) {
    warn(`error: ${expected.message}`);
    return expected.exitCode;
  }
  // Unexpected (an SDK error, a bug): the class name helps whoever reads the report.
  const name = error instanceof Error ? error.name : 'Error';
  warn(`error: ${name}: ${error instanceof Error ? error.message : String(error)}`);
  return EXIT.failed;
}
