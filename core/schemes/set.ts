/**
 * What intake asks of the schemes, given a way to find each scheme by type: the static registry
 * (core/schemes/index.ts, every scheme: the CLI, the config schema, the tests) or the schemes one
 * deployment configures (core/schemes/bundled.ts: intake's bundle holds only those).
 * No scheme module is imported here.
 */
import type { BodyFormat } from '../body';
import type { KeyRequest, OptionSpecs, OptionsOf, Scheme, Verifier, VerifyInput } from './types';

/** A source's `scheme` as the config holds it: its type and options (validated or as written). */
export interface SchemeChoice {
  readonly type: string;
}

export interface SchemeSet {
  /** The verifier for a source's configured scheme. */
  verifierFor(config: SchemeChoice): Verifier;
  /** The key a request names, for schemes whose keys are fetched (jwks); undefined for every other scheme. */
  keyRequestFor(config: SchemeChoice, input: VerifyInput): KeyRequest | undefined;
  /**
   * The body format of a scheme's requests when the source does not declare one (JSON unless the
   * scheme says: Twilio's form parameters), and whether the scheme's verifier reads only that format
   * (Mailgun's `carrier`), so that a source may not declare another.
   */
  bodyFormat(config: SchemeChoice): { readonly format: BodyFormat; readonly fixed: boolean };
}

/**
 * The options with every declared default filled in, so callers may pass a scheme as written in the
 * config (`{ type: 'standard-webhooks' }`) as well as one the config schema validated.
 */
export function optionsWithDefaults(scheme: Scheme<OptionSpecs>, config: SchemeChoice): OptionsOf<OptionSpecs> {
  const options: Record<string, unknown> = { ...config };
  for (const [name, spec] of Object.entries(scheme.options)) {
    if (options[name] === undefined && 'default' in spec) options[name] = spec.default;
  }
  return options as OptionsOf<OptionSpecs>;
}

/** The set over `schemeOf`, which finds a scheme by its type (and throws for one it does not hold). */
export function schemeSet(schemeOf: (type: string) => Scheme<OptionSpecs>): SchemeSet {
  return {
    verifierFor(config) {
      const scheme = schemeOf(config.type);
      return scheme.verifier(optionsWithDefaults(scheme, config));
    },
    keyRequestFor(config, input) {
      const scheme = schemeOf(config.type);
      return scheme.keyRequest?.(optionsWithDefaults(scheme, config), input);
    },
    bodyFormat(config) {
      const scheme = schemeOf(config.type);
      const format =
        typeof scheme.bodyFormat === 'function' ? scheme.bodyFormat(optionsWithDefaults(scheme, config)) : (scheme.bodyFormat ?? 'json');
      return { format, fixed: scheme.bodyFormatFixed === true };
    },
  };
}
