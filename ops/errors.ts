/**
 * The operations' errors: one base class, one subclass per way an operation can fail, each with the
 * exit code `hookledger` ends with. The CLI (cli/program.ts) prints the message of any `CliError` as
 * it is (`error: <message>`) and exits with its `exitCode`; the console's API (console/api.ts)
 * answers with an HTTP status per class. An error of another boundary becomes one in `cliErrorOf`,
 * the one translation both use; anything else is unexpected (the CLI prints its class name, exit 3).
 */

import { HookledgerError, WindowError } from '../core/errors';

/** The process exit codes, as `hookledger --help` lists them. */
export const EXIT = { ok: 0, found: 1, usage: 2, failed: 3 } as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the CLI expected: its message says what happened and what to do, for people. */
export abstract class CliError extends HookledgerError {
  abstract readonly exitCode: ExitCode;
}

/**
 * The command line is wrong: an unknown consumer or source, a time or duration that does not parse,
 * options that do not go together, a file that cannot be read. Fix the command line. Exit 2.
 */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  readonly exitCode = EXIT.usage;
}

/** What was asked for does not exist (an event's receipt, a key). Exit 1. */
export class NotFoundError extends CliError {
  override readonly name = 'NotFoundError';
  readonly exitCode = EXIT.found;
}

/** The write was refused because of what is already there (an existing key id). Exit 1. */
export class ConflictError extends CliError {
  override readonly name = 'ConflictError';
  readonly exitCode = EXIT.found;
}

/** The operation started but did not finish (a move task that failed, an admin call refused). Exit 3. */
export class OperationFailedError extends CliError {
  override readonly name = 'OperationFailedError';
  readonly exitCode = EXIT.failed;
}

/** The stack cannot be found or reached (no local stack running, a missing stack output). Exit 3. */
export class TargetError extends CliError {
  override readonly name = 'TargetError';
  readonly exitCode = EXIT.failed;
}

/**
 * The CLI boundary's one translation: a `CliError` is itself; an error of another boundary the CLI
 * has a meaning for becomes that `CliError`, message unchanged (a window the readers refuse,
 * `WindowError`: the command line is wrong, exit 2); anything else is unexpected (`undefined`).
 */
export function cliErrorOf(error: unknown): CliError | undefined {
  if (error instanceof CliError) return error;
  if (error instanceof WindowError) return new UsageError(error.message, { cause: error });
  return undefined;
}
