/**
 * The error hierarchy. Every error hookledger raises on purpose extends `HookledgerError`; anything
 * else that reaches a boundary is a bug. Each boundary translates by class, never by name:
 * intake answers `InputError` with its status, the consumer runtime quarantines `PermanentError`,
 * the CLI maps `CliError` subclasses to exit codes, and a `ConfigurationError` stops synth, start-up
 * or a cold start with a message naming the value to fix.
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
