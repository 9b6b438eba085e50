/**
 * SecretsPort over AWS Secrets Manager: AWSCURRENT and AWSPREVIOUS, cached in memory.
 * During a rotation both stages verify; after a failed verification the caller asks for a refresh,
 * which is rate-limited so a flood of bad signatures cannot become a flood of API calls.
 */
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import type { SecretsPort } from './secrets';
import { UnknownSecretError } from './secrets';
import type { SigningSecrets } from './verify/types';

export interface SecretsManagerPortOptions {
  readonly client: SecretsManagerClient;
  /** source id -> secret id (ARN or name). */
  readonly secretIds: Readonly<Record<string, string>>;
  /** How long a cached value is served, ms. Default 5 minutes. */
  readonly ttlMs?: number;
  /** Minimum time between forced refreshes of one source, ms. Default 30 s. */
  readonly minRefreshIntervalMs?: number;
  readonly clock?: () => number;
}

interface Cached {
  readonly value: SigningSecrets;
  readonly fetchedAt: number;
}

export class SecretsManagerPort implements SecretsPort {
  private readonly cache = new Map<string, Cached>();
  private readonly ttlMs: number;
  private readonly minRefreshIntervalMs: number;
  private readonly clock: () => number;

  constructor(private readonly options: SecretsManagerPortOptions) {
    this.ttlMs = options.ttlMs ?? 5 * 60_000;
    this.minRefreshIntervalMs = options.minRefreshIntervalMs ?? 30_000;
    this.clock = options.clock ?? Date.now;
  }

  async get(sourceId: string): Promise<SigningSecrets> {
    const cached = this.cache.get(sourceId);
    if (cached && this.clock() - cached.fetchedAt < this.ttlMs) return cached.value;
    return this.fetch(sourceId);
  }

  async refresh(sourceId: string): Promise<SigningSecrets> {
    const cached = this.cache.get(sourceId);
    if (cached && this.clock() - cached.fetchedAt < this.minRefreshIntervalMs) return cached.value;
    return this.fetch(sourceId);
  }

  private async fetch(sourceId: string): Promise<SigningSecrets> {
    const secretId = this.options.secretIds[sourceId];
    if (!secretId) throw new UnknownSecretError(`no signing secret is configured for source "${sourceId}"`);
    const [current, previous] = await Promise.all([
      this.stage(secretId, 'AWSCURRENT'),
      this.stage(secretId, 'AWSPREVIOUS'),
    ]);
    if (!current) throw new UnknownSecretError(`the signing secret of source "${sourceId}" has no AWSCURRENT value`);
    const value: SigningSecrets = previous && previous !== current ? { current, previous } : { current };
    this.cache.set(sourceId, { value, fetchedAt: this.clock() });
    return value;
  }

  private async stage(secretId: string, stage: 'AWSCURRENT' | 'AWSPREVIOUS'): Promise<string | undefined> {
    try {
      const out = await this.options.client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: stage }));
      return out.SecretString;
    } catch (error) {
      // A secret that was never rotated has no AWSPREVIOUS stage.
      if (stage === 'AWSPREVIOUS' && error instanceof ResourceNotFoundException) return undefined;
      throw error;
    }
  }
}
