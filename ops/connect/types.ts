/**
 * The contract of a provider's endpoint registration (`hookledger sources connect | disconnect |
 * remote`, and the scheduled ProviderDrift check): one `ProviderRegistrar` per provider whose API can
 * create webhook endpoints, built by the `RegistrarFactory` its name maps to in `registrars.ts`.
 * A registrar only speaks the provider's API; what to create, drift and the secret are `connect.ts`'s.
 */

import type { RemoteEndpoint } from '../../core/endpoint-drift';

export type { RemoteEndpoint };

export interface RegistrarOptions {
  readonly apiKey: string;
  /** where the credential lives, for messages; never its value */
  readonly credential: string;
  /** @default - the provider's (core/gaps.ts GAP_APIS) */
  readonly baseUrl?: string;
  /** github: repos/<o>/<r> or orgs/<org> */
  readonly hook?: string;
  /** @default - setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
  /** @default CONNECT_MAX_RATE_LIMIT_RETRIES (ops/connect/http.ts) */
  readonly maxRateLimitRetries?: number;
  /** Told each 429 waited out: its Retry-After in ms. */
  readonly onRateLimited?: (waitMs: number) => void;
}

/** What `create` and `update` are given (the shape of their `input`). */
export interface EndpointInput {
  readonly url: string;
  readonly events: readonly string[];
  /** Where the provider takes the secret from us (`secretFrom: 'us'`): the one to sign with. */
  readonly secret?: string;
}

export interface ProviderRegistrar {
  /** 'stripe' | 'github' | 'square' | 'paddle' */
  readonly provider: string;
  /** github: 'us' */
  readonly secretFrom: 'provider' | 'us';
  list(): Promise<RemoteEndpoint[]>;
  create(input: { url: string; events: readonly string[]; secret?: string }): Promise<{ endpoint: RemoteEndpoint; secret?: string }>;
  update(id: string, input: { url: string; events: readonly string[]; secret?: string }): Promise<{ endpoint: RemoteEndpoint }>;
  remove(id: string): Promise<void>;
}

export type RegistrarFactory = (options: RegistrarOptions) => ProviderRegistrar;
