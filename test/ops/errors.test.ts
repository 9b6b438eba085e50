/**
 * The CLI's error classes and the exit codes `main` turns them into: a CliError prints its message
 * alone; commander's own errors exit 2. Runs main in-process against a state file that does not exist.
 */
import { describe, expect, it } from 'vitest';
import { daysOf } from '../../adapters/window-index';
import { ConfigurationError } from '../../core/errors';
import { reconcile } from '../../lambdas/reconcile/reconcile';
import { CliError, ConflictError, cliErrorOf, EXIT, NotFoundError, OperationFailedError, TargetError, UsageError } from '../../ops/errors';
import { runCli } from '../support/cli';
import { config } from './support';

const run = (argv: string[]) => runCli(argv, config, { USER: 'errors-test', HOOKLEDGER_STATE: '/nonexistent/state.json' });

describe('cli errors', () => {
  it.each([
    [UsageError, 2],
    [NotFoundError, 1],
    [ConflictError, 1],
    [OperationFailedError, 3],
    [TargetError, 3],
  ] as const)('%o is a CliError with exit code %i', (Class, exitCode) => {
    const error = new Class('what happened; what to do', { cause: new Error('sdk') });

    expect(error).toBeInstanceOf(CliError);
    expect(error.exitCode).toBe(exitCode);
    expect(error.name).toBe(Class.name);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('translates a window the index refuses (longer than 3660 days) into a usage error, exit 2, message unchanged', () => {
    const refused = (() => {
      try {
        daysOf({ from: Date.parse('1990-01-01T00:00:00Z'), to: Date.parse('2026-11-29T00:00:00Z') });
      } catch (error) {
        return error;
      }
    })();
    const translated = cliErrorOf(refused);

    expect(translated).toBeInstanceOf(UsageError);
    expect(translated?.exitCode).toBe(2);
    expect(translated?.message).toBe(
      'a window of 13481 days is more than the index reads (3660); narrow --from/--to, or read all of history with --scan',
    );
    expect(translated?.cause).toBe(refused);
  });

  it('translates a reconcile window with from >= to into a usage error, exit 2', async () => {
    const at = Date.parse('2026-11-29T10:00:00Z');
    const refused = await reconcile({} as never, { from: at, to: at }).catch((error: unknown) => error);
    const translated = cliErrorOf(refused);

    expect(translated).toBeInstanceOf(UsageError);
    expect(translated?.message).toBe('the window must have from < to, got from=2026-11-29T10:00:00.000Z to=2026-11-29T10:00:00.000Z');
  });

  it('passes a CliError through as it is and leaves errors it has no meaning for (a config error, an SDK error) unexpected', () => {
    const notFound = new NotFoundError('no receipt for evt_01J8K7M2Q4');
    expect(cliErrorOf(notFound)).toBe(notFound);
    expect(cliErrorOf(new ConfigurationError('EVENTS_TABLE is not set'))).toBeUndefined();
    expect(cliErrorOf(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }))).toBeUndefined();
  });

  it('keeps the exit codes --help lists', () => {
    expect(EXIT).toEqual({ ok: 0, found: 1, usage: 2, failed: 3 });
  });
});

describe('main', () => {
  it('exits 2 with the message alone when the command line is wrong', async () => {
    const result = await run(['usage', '--from', 'yesterday']);

    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'error: --from "yesterday" is not a time; use ISO-8601 (2026-11-29T12:00:00Z) or relative to now (-30m, -1h, -7d, now)\n',
    );
  });

  it('exits 3 with the message alone when no local stack is running', async () => {
    const result = await run(['status']);

    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^error: no local stack is running \(\/nonexistent\/state\.json does not exist\)/);
  });

  it("exits 2 on commander's own errors (unknown command or option), and 0 for --help", async () => {
    expect((await run(['nope'])).code).toBe(2);
    expect((await run(['status', '--bogus'])).code).toBe(2);
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Exit codes: 0 ok; 1 reconcile found violations/);
  });
});
