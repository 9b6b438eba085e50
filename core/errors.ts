/**
 * The error hierarchy. Every error hookledger raises on purpose extends `HookledgerError`; anything
 * else that reaches a boundary is a bug. Each boundary translates by class, never by name, in one
 * place (the table in ARCHITECTURE.md, "The rules"): intake answers `InputError` with its status,
 * the consumer runtime quarantines `PermanentError`, the CLI maps `CliError` subclasses to exit
 * codes (`cliErrorOf` in cli/errors.ts turns a `WindowError` into a usage error), and a
 * `ConfigurationError` stops synth, start-up or a cold start with a message naming the value to fix.
 *
 * Subclasses keep a literal `name` (it survives minification and is the `category` recorded on a
 * failed delivery).
 */
export class HookledgerError extends Error {
  override readonly name: string = 'HookledgerError';
}

/**
 * The deployment or its configuration is wrong: a bad `hookledger.config.ts` value, a missing
 * environment variable, a signing secret that is not a key. Fix the setting; retrying cannot help.
 */
export class ConfigurationError extends HookledgerError {
  override readonly name: string = 'ConfigurationError';
}

/**
 * A time window a reader refuses: its start not before its end, a negative grace, longer than the
 * window index reads. The request is wrong; change the window, retrying cannot help.
 */
export class WindowError extends HookledgerError {
  override readonly name: string = 'WindowError';
}

/**
 * hookledger's own parts were put together wrongly: a step called without what it needs, a port the
 * wiring did not give, an expression naming an attribute alias it does not define. A bug in
 * hookledger, never in a request or the configuration: no boundary translates it; the invocation fails
 * and its alarm sees it. The message names the step and what it was missing.
 */
export class WiringError extends HookledgerError {
  override readonly name: string = 'WiringError';
}
