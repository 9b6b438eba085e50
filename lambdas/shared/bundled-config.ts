/**
 * The configuration a deployed Lambda runs with: hookledger.config.ts as validated at synth, inlined
 * by esbuild (`define`, set by lib/constructs/hookledger-function.ts). Validating again at cold start
 * would bundle zod (about half of each bundle) for nothing.
 */
import type { HookledgerConfig } from '../../core/config/schema';
import { ConfigurationError } from '../../core/errors';

/** Replaced by esbuild's `define` with the validated configuration's JSON (name: BUNDLED_CONFIG_DEFINE in core/env.ts). */
declare const __HOOKLEDGER_CONFIG__: string | undefined;

export class MissingBundledConfigError extends ConfigurationError {
  override readonly name = 'MissingBundledConfigError';
}

export function bundledConfig(): HookledgerConfig {
  if (typeof __HOOKLEDGER_CONFIG__ !== 'string') {
    throw new MissingBundledConfigError(
      'this bundle has no inlined hookledger configuration; build it with the hookledger CDK stack (HookledgerFunction)',
    );
  }
  return JSON.parse(__HOOKLEDGER_CONFIG__) as HookledgerConfig;
}
