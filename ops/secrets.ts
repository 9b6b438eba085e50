/**
 * Signing-secret rotation and retirement.
 *
 * Rotate. AWS: PutSecretValue with the new value, which moves AWSCURRENT to it and AWSPREVIOUS to the
 * old value; intake accepts AWSPREVIOUS until the new version's CreatedDate plus the source's
 * `secretOverlapHours`. Local: the secrets-file adapter's `rotate`, which records the overlap's end
 * in the file. The new value is a generated `whsec_` one, or the provider's own (`--value-file`: a
 * public key, a hex key), which must be one the source's scheme can use (`secretSpec`); a scheme that
 * cannot use a generated value refuses a rotation without one.
 *
 * Retire ends the overlap at once. AWS: UpdateSecretVersionStage removes AWSPREVIOUS from the version
 * DescribeSecret says holds it. Local: the adapter's `retire`.
 *
 * Either way one audit item records who did what to which source and when (and, for a rotation,
 * when the overlap ends); the values never leave these functions.
 */
import {
  DescribeSecretCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { findConsumer, findSource } from '../core/config/routing';
import type { ConsumerConfig, SourceConfig } from '../core/config/schema';
import { secretSpec } from '../core/schemes';
import { newWebhookSecret } from '../local/secrets-file';
import { writeAudit } from './audit';
import { type ConfigDeps, now as clockNow, type OperatorDeps } from './deps';
import { UsageError } from './errors';

/** How soon every intake container stops verifying a retired previous secret on AWS (the CLI says so after a retire). */
export { RETIRE_BOUND_MS } from '../adapters/secrets-manager';

const HOUR = 3_600_000;
/** The range `secretOverlapHours` allows, in ms. */
const OVERLAP_RANGE = { min: HOUR, max: 720 * HOUR } as const;

/** Where the secret lives: the local secrets file, or a Secrets Manager secret per source. */
export type SecretRotator =
  | {
      readonly kind: 'local';
      /**
       * New current secret (`value`, or a generated one); the old one verifies until `overlapMs` from
       * now (the result's previousUntil).
       */
      rotate(sourceId: string, overlapMs: number, value?: string): Promise<{ readonly previousUntil?: number }>;
      /** Removes the previous secret at once; `retired` is false when there was none. */
      retire(sourceId: string): Promise<{ readonly retired: boolean }>;
    }
  | { readonly kind: 'aws'; readonly client: SecretsManagerClient; readonly secretIds: Readonly<Record<string, string>> };

type SecretsDeps = OperatorDeps & ConfigDeps & { readonly rotator: SecretRotator };

export interface RotateResult {
  readonly source: string;
  readonly at: number;
  readonly where: 'local' | 'aws';
  /** The new Secrets Manager version id (AWS); not secret. */
  readonly versionId?: string;
  /**
   * When the previous secret stops verifying, epoch ms. On AWS intake counts the overlap from the new
   * version's CreatedDate, which is this rotation's time give or take the request's latency.
   */
  readonly previousUntil: number;
  /** `provided`: the provider's value (`--value-file`); `generated`: a new `whsec_` one. */
  readonly value: 'generated' | 'provided';
  readonly auditKey: string;
}

/** The provider's new secret and where it was read (a path, or `-` for standard input); never printed. */
export interface ProvidedSecret {
  readonly text: string;
  readonly from: string;
}

export async function rotateSecret(
  deps: SecretsDeps,
  request: {
    source: string;
    overlapMs?: number;
    /** An HTTP consumer's secret instead of a source's. */
    consumer?: boolean;
    /** The provider's new value, instead of a generated one. */
    value?: ProvidedSecret;
  },
): Promise<RotateResult> {
  const { source } = request;
  const config = request.consumer ? httpConsumerOf(deps, source) : sourceOf(deps, source);
  if (request.consumer && request.value) {
    throw new UsageError(
      `--value-file is for a source whose provider issues its secret; hookledger makes the signing secret of http consumer "${source}": rotate it without --value-file`,
    );
  }
  const value = request.consumer ? undefined : checkedValue(config as SourceConfig, request.value);
  const { rotator } = deps;
  const configured = config.secretOverlapHours * HOUR;
  const overlapMs = request.overlapMs ?? configured;
  if (overlapMs < OVERLAP_RANGE.min || overlapMs > OVERLAP_RANGE.max) {
    throw new UsageError(`overlap ${hoursOrMinutes(overlapMs)} is outside 1h to 720h`);
  }
  if (rotator.kind === 'aws' && request.overlapMs !== undefined && request.overlapMs !== configured) {
    throw new UsageError(
      `on a deployed stack ${request.consumer ? 'the worker' : 'intake'} takes the overlap from the deployed config (${request.consumer ? 'consumer' : 'source'} "${source}" secretOverlapHours ` +
        `${config.secretOverlapHours}); change it there and deploy, or retire the previous secret early with \`secrets retire\``,
    );
  }
  const at = clockNow(deps);
  let versionId: string | undefined;
  let previousUntil = at + overlapMs;
  if (rotator.kind === 'local') {
    previousUntil = (await rotator.rotate(source, overlapMs, value)).previousUntil ?? previousUntil;
  } else {
    const out = await rotator.client.send(
      new PutSecretValueCommand({ SecretId: secretIdOf(rotator, source), SecretString: value ?? newWebhookSecret() }),
    );
    versionId = out.VersionId;
  }
  const kind = value === undefined ? 'generated' : 'provided';
  // After the rotation: the audit says what happened, and a failed rotation leaves no false record.
  const audit = await writeAudit(
    deps,
    'secret.rotate',
    {
      ...(request.consumer ? { consumer: source } : { source }),
      where: rotator.kind,
      ...(versionId ? { versionId } : {}),
      overlapMs,
      previousUntil,
      value: kind,
    },
    { at },
  );
  return { source, at, where: rotator.kind, ...(versionId ? { versionId } : {}), previousUntil, value: kind, auditKey: audit.pk };
}

/**
 * The value to rotate a source to: the provider's, once its scheme can use it; or undefined for a
 * generated one, refused where the scheme cannot use one (a public key, a hex key, credentials).
 * Errors name the file and what was expected, never the value.
 */
function checkedValue(source: SourceConfig, provided: ProvidedSecret | undefined): string | undefined {
  const spec = secretSpec(source.scheme);
  const name = `source "${source.id}" (${source.provider ?? source.scheme.type})`;
  if (provided === undefined) {
    if (spec.generated !== false) return undefined;
    throw new UsageError(
      `${name} cannot use a generated secret: its secret is ${spec.expected}. ` +
        `Rotate with the value the provider gave you: \`hookledger secrets rotate ${source.id} --value-file <path>\` (- for standard input)`,
    );
  }
  const file = provided.from === '-' ? '- (standard input)' : provided.from;
  if (provided.text === '') {
    throw new UsageError(`--value-file ${file} is empty; put the value the provider gave you in it (${spec.expected})`);
  }
  if (!spec.usable(provided.text)) {
    throw new UsageError(`--value-file ${file} does not hold what ${name} verifies with: expected ${spec.expected}`);
  }
  return provided.text;
}

export interface RetireResult {
  readonly source: string;
  readonly at: number;
  readonly where: 'local' | 'aws';
  /** False when there was no previous secret (never rotated, or already retired). */
  readonly retired: boolean;
  /** The Secrets Manager version that lost AWSPREVIOUS (AWS); not secret. */
  readonly versionId?: string;
  readonly auditKey: string;
}

/** Ends the rotation overlap now: from then on only the current secret verifies. */
export async function retireSecret(deps: SecretsDeps, request: { source: string; consumer?: boolean }): Promise<RetireResult> {
  const { source } = request;
  if (request.consumer) httpConsumerOf(deps, source);
  else sourceOf(deps, source);
  const { rotator } = deps;
  const at = clockNow(deps);
  let retired: boolean;
  let versionId: string | undefined;
  if (rotator.kind === 'local') {
    retired = (await rotator.retire(source)).retired;
  } else {
    const secretId = secretIdOf(rotator, source);
    const described = await rotator.client.send(new DescribeSecretCommand({ SecretId: secretId }));
    versionId = Object.entries(described.VersionIdsToStages ?? {}).find(([, stages]) => stages.includes('AWSPREVIOUS'))?.[0];
    if (versionId) {
      await rotator.client.send(
        new UpdateSecretVersionStageCommand({ SecretId: secretId, VersionStage: 'AWSPREVIOUS', RemoveFromVersionId: versionId }),
      );
    }
    retired = versionId !== undefined;
  }
  const audit = await writeAudit(
    deps,
    'secret.retire',
    { ...(request.consumer ? { consumer: source } : { source }), where: rotator.kind, retired, ...(versionId ? { versionId } : {}) },
    { at },
  );
  return { source, at, where: rotator.kind, retired, ...(versionId ? { versionId } : {}), auditKey: audit.pk };
}

/** An HTTP consumer: the only kind of consumer with a signing secret. */
function httpConsumerOf(deps: ConfigDeps, consumer: string): ConsumerConfig {
  const found = findConsumer(deps.config, consumer);
  if (found?.kind !== 'http') {
    const http = deps.config.consumers.filter((c) => c.kind === 'http').map((c) => c.id);
    throw new UsageError(`"${consumer}" is not an http consumer; http consumers: ${http.join(', ') || 'none'}`);
  }
  return found;
}

/** The current signing secret of an HTTP consumer, for the team running its receiver. */
export async function consumerSecret(
  deps: ConfigDeps & { readonly secrets: { get(consumerId: string): Promise<{ readonly current: string }> } },
  consumer: string,
): Promise<{ readonly current: string }> {
  httpConsumerOf(deps, consumer);
  const { current } = await deps.secrets.get(consumer);
  // Secrets Manager generates 48 base64 characters; the receiver's libraries expect the whsec_ form.
  return { current: current.startsWith('whsec_') ? current : `whsec_${current}` };
}

function sourceOf(deps: ConfigDeps, source: string): SourceConfig {
  const found = findSource(deps.config, source);
  if (!found) {
    throw new UsageError(`unknown source "${source}"; configured: ${deps.config.sources.map((s) => s.id).join(', ')}`);
  }
  return found;
}

function secretIdOf(rotator: { readonly secretIds: Readonly<Record<string, string>> }, source: string): string {
  const secretId = rotator.secretIds[source];
  if (!secretId) throw new UsageError(`the stack has no signing secret output for source "${source}" (SecretArn<Source>)`);
  return secretId;
}

const hoursOrMinutes = (ms: number) => (ms % HOUR === 0 ? `${ms / HOUR}h` : `${Math.round(ms / 60_000)}m`);
