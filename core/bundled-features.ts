/**
 * Code a Lambda bundle leaves out when its configuration has no use for it, as intake's schemes are
 * (core/schemes/bundled.ts): content filters when no consumer has a `filter`, handshakes when no
 * source answers one, the X-Ray side of tracing (lambdas/shared/xray.ts: Powertools Tracer and the
 * X-Ray SDK) when `tracing` is not `'xray'`. The stack's bundling defines each flag as "true" or
 * "false" from the very configuration it inlines (bundledDefines in
 * lib/constructs/hookledger-function.ts); esbuild folds the checks written at the uses
 * (core/config/routing.ts, lambdas/ingest/app.ts, lambdas/shared/tracing.ts), and the modules no call
 * reaches any longer (core/filter.ts, lambdas/ingest/handshake.ts, lambdas/shared/xray.ts) are left
 * out. In the sources (the local stack, tests, the CLI) the variables are unset: everything is in
 * (and the configuration's `tracing` still decides whether a handler is traced).
 *
 * The checks are written out at each use (`process.env.HOOKLEDGER_BUNDLED_FILTERS !== 'false'`), not
 * read from a constant here: `define` replaces that exact expression, and only a literal comparison
 * folds to a branch esbuild can drop.
 */

import { ConfigurationError } from './errors';

/** The define names, one per feature. */
export const BUNDLED_FEATURE_FLAGS = {
  filters: 'process.env.HOOKLEDGER_BUNDLED_FILTERS',
  handshakes: 'process.env.HOOKLEDGER_BUNDLED_HANDSHAKES',
  tracing: 'process.env.HOOKLEDGER_BUNDLED_TRACING',
} as const;

export type BundledFeature = keyof typeof BUNDLED_FEATURE_FLAGS;

/** The part of a validated configuration the flags are read from. */
export interface FeatureUse {
  readonly sources?: readonly { readonly id?: string; readonly handshake?: unknown }[];
  readonly consumers?: readonly { readonly id?: string; readonly filter?: unknown }[];
  readonly tracing?: string;
}

/** Whether the configuration uses each feature: a consumer with a filter; a source with a handshake; X-Ray tracing. */
export function featuresUsed(config: FeatureUse): Record<BundledFeature, boolean> {
  return {
    filters: (config.consumers ?? []).some((c) => c.filter !== undefined && c.filter !== null),
    handshakes: (config.sources ?? []).some((s) => s.handshake !== undefined && s.handshake !== null),
    tracing: config.tracing === 'xray',
  };
}

/** A configuration the bundle was not built for reached folded-away code: say so, never guess. */
export class FeatureNotBundledError extends ConfigurationError {
  override readonly name = 'FeatureNotBundledError';
  constructor(feature: BundledFeature, where: string) {
    super(
      `${where} needs ${feature}, but this bundle was built for a configuration without ${feature} ` +
        '(core/bundled-features.ts); synthesize and deploy again with the configuration it runs',
    );
  }
}
