import type { BodyFormat } from '../body';
import type { Handshake } from '../handshakes';
import type { SecretVersion } from '../model';

/** The signing secrets of one source: AWSCURRENT and, during a rotation overlap, AWSPREVIOUS. */
export interface SigningSecrets {
  readonly current: string;
  readonly previous?: string;
  /**
   * Epoch ms at which the rotation overlap ends: from then on `previous` verifies nothing. Set by
   * the adapters from the rotation's record; a `previous` without it is not accepted at all.
   */
  readonly previousUntil?: number;
}

export interface VerifyInput {
  /** The exact bytes the provider sent (API Gateway's base64 already undone). */
  readonly rawBody: Buffer;
  /** Header names lower-cased; repeated headers joined with ','. */
  readonly headers: Readonly<Record<string, string>>;
  /** Epoch milliseconds. */
  readonly now: number;
  readonly toleranceSeconds: number;
  /**
   * The full URL the provider called (scheme, host, path, query), for schemes that sign it (Twilio,
   * Square). Intake always passes it; a verifier that needs it and lacks it refuses the request.
   */
  readonly url?: string;
  /**
   * Public keys (JWK) a key-fetching scheme asked for (`Scheme.keyRequest`), fetched and cached by
   * intake's key port before the verifier runs, so verifiers stay synchronous. Absent for every other scheme.
   */
  readonly publicKeys?: Readonly<Record<string, JsonWebKey>>;
}

/** A public key as JSON Web Key (RFC 7517): what key endpoints such as Plaid's serve. */
export interface JsonWebKey {
  readonly kty?: string;
  readonly crv?: string;
  readonly x?: string;
  readonly y?: string;
  readonly kid?: string;
  readonly alg?: string;
  readonly use?: string;
  /** Plaid: epoch seconds at which the key stopped being valid, or null while it is current. */
  readonly expired_at?: number | null;
  readonly [member: string]: unknown;
}

/**
 * The key a request names (a JWT's `kid`) and where its scheme fetches keys from. Intake resolves it
 * through its key port (adapters/verification-keys.ts: cached by kid with a TTL, an unknown kid
 * fetched once and rate-limited) and hands the result to the verifier in `VerifyInput.publicKeys`.
 */
export interface KeyRequest {
  readonly kid: string;
  readonly url: string;
}

/** The port intake fetches verification keys through (adapter: adapters/verification-keys.ts). */
export interface VerificationKeysPort {
  /**
   * The public key named `kid`, or undefined when the endpoint does not know it (or a recent miss is
   * still remembered). `credentials` is the source's secret: what the key endpoint authenticates with.
   */
  get(request: KeyRequest & { readonly sourceId: string; readonly credentials: string }): Promise<JsonWebKey | undefined>;
}

export type VerifyFailureCode = 'missing_signature' | 'malformed_signature' | 'signature_mismatch' | 'timestamp_out_of_tolerance';

export type VerifyResult =
  | { readonly ok: true; readonly secretVersion: SecretVersion }
  | { readonly ok: false; readonly code: VerifyFailureCode; readonly message: string };

/** A verifier never logs, never throws on bad input, and compares in constant time. */
export interface Verifier {
  verify(input: VerifyInput, secrets: SigningSecrets): VerifyResult;
}

/**
 * What a scheme's signature covers. Intake reads attribution from signed parts only (see docs/security.md "Threat model at the door");
 * the config schema (core/config/schema.ts) refuses what a claim here does not support.
 *
 * The audit of every scheme: `body` as each module declares it, and why.
 *
 * | scheme | body | why |
 * |---|---|---|
 * | standard-webhooks, -v1a, stripe, slack, sendgrid | `bytes` | HMAC / ed25519 / ECDSA over a delimited or digits-only prefix + the raw bytes |
 * | github, shopify, hmac | `bytes` | HMAC over the raw bytes alone |
 * | hmac-template, timestamped-hmac, ed25519, secret-digest | `bytes` | every template has `{body}`, rendered as the raw bytes (`{url}` adds the URL) |
 * | jwt, jwks (Plaid) | `bytes` | the token's claim is the SHA-256 of the raw bytes |
 * | hygraph | `bytes` | HMAC over JSON text of the body decoded as UTF-8; a body that is not UTF-8 is refused, so no two byte strings share a text |
 * | twilio | `canonical-params` | HMAC over the URL + the form parameters sorted by name: order, duplicates' order and percent-encoding are not signed (a JSON body through `bodySHA256` is exact, but the scheme accepts both) |
 * | mailgun | `false` | only `timestamp` + `token` carried in the body (`bodyFields`) |
 * | shared-secret, client-state | `bytes` + `authentication: 'shared-secret'` | nothing is signed at all; the request is as trustworthy as the secret |
 */
export interface SignedParts {
  /**
   * How the body is covered. `bytes`: the exact bytes (almost every scheme). `canonical-params`: the
   * form parameters as a set, sorted by name (Twilio): every name and value is signed, but the same
   * parameters in another order or percent-encoding are other bytes that verify too, so nothing that
   * hashes the raw bytes (a body-hash event id, replay protection by body) can rely on it. `false`:
   * the body is NOT authenticated (Mailgun signs only a timestamp and a token carried in it, `bodyFields`).
   */
  readonly body: 'bytes' | 'canonical-params' | false;
  /** When `body` is false: the body paths the signature does cover (the only ones attribution may read). */
  readonly bodyFields?: readonly string[];
  /**
   * `shared-secret`: nothing is signed; the request carries the secret itself (Okta's Authorization
   * header, Microsoft Graph's clientState). Whoever holds the secret, or one captured request, can
   * write any request; the whole request is as trustworthy as that secret (and TLS). Absent: a signature.
   */
  readonly authentication?: 'shared-secret';
  /** Request headers (lower-case) whose values are inside the signed content. */
  readonly headers: readonly string[];
  /** Said in errors and docs. */
  readonly summary: string;
  /**
   * Where the signed send time is (checked against the source's tolerance); absent when nothing signed
   * carries one. Never a timestamp the verifier reads but the signature does not cover.
   */
  readonly timestamp?: string;
  /**
   * A send time the scheme's options have the verifier check although the signed content leaves it out
   * (a `timestampHeader` not named in `content`, a `timestamped-hmac` content without `{t}`): whoever
   * holds one request could re-send it later with a fresh value and pass the tolerance check. The config
   * schema refuses a source whose scheme declares one: `option` is the option to fix, `message` says why and how.
   */
  readonly unsignedTimestamp?: { readonly option: string; readonly message: string };
}

/** What `hookledger send` signs (and the tests sign with): one request body, one secret, one instant. */
export interface SignInput {
  readonly body: Buffer;
  readonly secret: string;
  /** Epoch milliseconds. */
  readonly now: number;
  /** A delivery id, for schemes that sign one (Standard Webhooks' `webhook-id`). */
  readonly messageId: string;
  /** The URL the request goes to, for schemes that sign it (Twilio, Square). */
  readonly url?: string;
}

/**
 * A configuration option of a scheme beside `type`, declared as data so the config schema
 * (core/config/schema.ts) builds its validation from it and the Lambdas never bundle zod.
 */
export type OptionSpec =
  | { readonly kind: 'enum'; readonly values: readonly string[]; readonly default: string }
  /** A request header name; required; lower-cased (intake lower-cases every header). */
  | { readonly kind: 'header' }
  | { readonly kind: 'text'; readonly default: string }
  /** A signed-content template (see ./template.ts): `{body}`, `{url}`, `{t}`, `{header:name}` and literal text. */
  | { readonly kind: 'template'; readonly default: string };
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

type OptionValue<S> = S extends { readonly kind: 'enum'; readonly values: readonly (infer V)[] } ? V : string;
/** The validated options (defaults applied). */
export type OptionsOf<Specs> = { readonly [K in keyof Specs]: OptionValue<Specs[K]> };
/** The options as written in hookledger.config.ts: those with a default may be left out. */
export type OptionsInputOf<Specs> = {
  readonly [K in keyof Specs as Specs[K] extends { readonly default: string } ? never : K]: OptionValue<Specs[K]>;
} & {
  readonly [K in keyof Specs as Specs[K] extends { readonly default: string } ? K : never]?: OptionValue<Specs[K]>;
};

/**
 * What a source's secret is under a scheme, for `hookledger secrets rotate`: whether a value
 * hookledger generates can be used, and the check a provider's value (`--value-file`) passes before
 * it is written. A scheme without one takes any non-empty text, generated or not.
 */
export interface SecretSpec {
  /**
   * `whsec`: a generated `whsec_` + base64 value verifies (the operator then gives it to the
   * provider); false: only the provider's own value can (a public key, a hex key, API credentials).
   */
  readonly generated: 'whsec' | false;
  /** What the value is, said in errors; never a value. */
  readonly expected: string;
  /** Whether `value` can be used as the source's secret (to verify, or to fetch keys with). Never throws. */
  usable(value: string): boolean;
}

/**
 * One signature scheme: how a provider signs (`sign`, for `hookledger send` and the tests), how
 * intake checks it (`verifier`), and what the signature covers (`signedParts`), side by side with
 * the header names they share. Listed once in core/schemes/index.ts.
 */
export interface Scheme<Specs extends OptionSpecs = Record<never, OptionSpec>> {
  /** A value, or a function of the options for schemes whose options name the signed headers. */
  readonly signedParts: SignedParts | ((options: OptionsOf<Specs>) => SignedParts);
  /** Options beside `type` the config accepts; `{}` for most schemes. */
  readonly options: Specs;
  /**
   * The body format (core/body.ts) of this scheme's requests when the source does not say
   * (`bodyFormat` on the source): Twilio's are form parameters. Absent: JSON; the scheme signs the raw
   * bytes whatever they hold, and a source may declare `form` (Slack slash commands).
   */
  readonly bodyFormat?: BodyFormat | ((options: OptionsOf<Specs>) => BodyFormat);
  /**
   * Set when the verifier reads its signature from the body in `bodyFormat` and in no other (Mailgun's
   * `carrier`): config refuses a source `bodyFormat` that says otherwise.
   */
  readonly bodyFormatFixed?: true;
  /** What the source's secret is (a function of the options where they decide it); absent: any non-empty text. */
  readonly secret?: SecretSpec | ((options: OptionsOf<Specs>) => SecretSpec);
  /**
   * The handshake every source of this scheme answers when it names none (Slack's url_verification,
   * which comes with the scheme whatever the preset): config resolves it into `source.handshake`.
   */
  readonly handshake?: Handshake;
  verifier(options: OptionsOf<Specs>): Verifier;
  /** The headers carrying the signature (and whatever else it signs) for one body. */
  sign(options: OptionsOf<Specs>, input: SignInput): Record<string, string>;
  /**
   * Schemes whose keys are fetched (JWKS, Plaid): the key this request names, read without trusting
   * it; undefined when the request names none (the verifier then refuses it). Absent for every other scheme.
   */
  keyRequest?(options: OptionsOf<Specs>, input: VerifyInput): KeyRequest | undefined;
  /**
   * Schemes that sign inside the body (Mailgun's `signature` object, Microsoft Graph's clientState):
   * the body as the provider sends it, signature included; `sign` then returns only the headers.
   */
  signBody?(options: OptionsOf<Specs>, input: SignInput): Buffer;
}
