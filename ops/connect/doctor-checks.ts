/**
 * `hookledger doctor`'s rows about what each source receives from its provider: the event types it
 * declares (`events`), and, where the deployed stack holds the source's provider API key (the gap
 * check's credential), its endpoint at the provider against the configuration (drift.ts). The key is
 * read only to call the provider, never printed; a source without one is not checked.
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { HookledgerConfig, SourceConfig } from '../../core/config/schema';
import { describeDrift } from '../../core/endpoint-drift';
import { EVERY_EVENT_TYPE } from '../../core/gaps';
import { gapApiKeySecretArnOutput, OUTPUT } from '../../core/outputs';
import type { Check } from '../doctor-check';
import { connectionOf, registrarOf, remoteOf } from './connect';
import { REGISTRARS } from './registrars';
import type { RegistrarFactory } from './types';

/** One info row per source that declares its event types: the ones its endpoint receives. */
export function declaredEventsChecks(config: HookledgerConfig): Check[] {
  return config.sources.flatMap((source): Check[] =>
    source.events
      ? [
          {
            id: `events:${source.id}`,
            status: 'info',
            message: source.events.includes(EVERY_EVENT_TYPE)
              ? `${source.id} receives every event type its provider sends (events: ["*"])`
              : `${source.id} receives ${source.events.join(', ')}`,
          },
        ]
      : [],
  );
}

export interface DriftCheckDeps {
  readonly secrets: SecretsManagerClient;
  readonly outputs: ReadonlyMap<string, string>;
  readonly config: HookledgerConfig;
  readonly stackName: string;
  /** @default REGISTRARS */
  readonly registrars?: Readonly<Record<string, RegistrarFactory>>;
}

/** A `remote:<source>` row per source that has a registration API, declared events and a provider API key on the stack. */
export async function providerDriftChecks(deps: DriftCheckDeps): Promise<Check[]> {
  const registrars = deps.registrars ?? REGISTRARS;
  const base = deps.outputs.get(OUTPUT.webhookUrl);
  if (base === undefined) return [];
  const checks: Check[] = [];
  for (const source of deps.config.sources) {
    const provider = source.provider ?? source.gapCheck?.api;
    if (provider === undefined || !(provider in registrars) || !source.events) continue;
    const arn = deps.outputs.get(gapApiKeySecretArnOutput(source.id));
    if (arn === undefined) continue;
    let apiKey: string | undefined;
    try {
      apiKey = await apiKeyOf(deps.secrets, arn);
    } catch (error) {
      const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      checks.push({
        id: `remote:${source.id}`,
        status: 'warning',
        message: `could not read the provider API key ${arn} (${why}): drift not checked`,
      });
      continue;
    }
    if (apiKey !== undefined) checks.push(await driftCheck(deps, source, { apiKey, credential: `the secret ${arn}` }, base));
  }
  return checks;
}

async function driftCheck(
  deps: DriftCheckDeps,
  source: SourceConfig,
  key: { apiKey: string; credential: string },
  base: string,
): Promise<Check> {
  const id = `remote:${source.id}`;
  const webhookUrl = (sourceId: string) => `${base.endsWith('/') ? base : `${base}/`}${encodeURIComponent(sourceId)}`;
  try {
    const connection = connectionOf(
      { ops: { config: deps.config }, target: { webhookUrl }, ...(deps.registrars ? { registrars: deps.registrars } : {}) },
      { source: source.id },
    );
    const report = await remoteOf(
      registrarOf({ ...(deps.registrars ? { registrars: deps.registrars } : {}) }, connection, key),
      connection,
    );
    if (report.drift.length === 0) {
      return {
        id,
        status: 'ok',
        message: `the ${report.provider} endpoint ${report.endpoint?.id} of ${source.id} matches its URL and events`,
      };
    }
    return {
      id,
      status: 'warning',
      message: `the ${report.provider} endpoint of ${source.id} drifted: ${report.drift.map(describeDrift).join('; ')}`,
      fix: `npx hookledger sources connect ${source.id} --stack ${deps.stackName}`,
    };
  } catch (error) {
    return {
      id,
      status: 'warning',
      message: `could not read ${source.id}'s endpoint at its provider: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/** The provider API key's value, or undefined while it has none (created without a value). */
async function apiKeyOf(secrets: SecretsManagerClient, arn: string): Promise<string | undefined> {
  try {
    return (await secrets.send(new GetSecretValueCommand({ SecretId: arn }))).SecretString || undefined;
  } catch (error) {
    if ((error as Error)?.name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
}
