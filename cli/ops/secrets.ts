/**
 * Signing-secret rotation. AWS: PutSecretValue with a new `whsec_` value, which moves AWSCURRENT to
 * it and AWSPREVIOUS to the old value, so intake verifies against both during the overlap. Local:
 * the secrets-file adapter's `rotate`, which does the same in the file. Either way one audit item
 * records who rotated which source and when; the value never leaves this function.
 */
import { PutSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { findSource } from '../../lib/config/schema';
import { newWebhookSecret } from '../../local/secrets-file';
import { writeAudit } from './audit';
import { type ConfigDeps, now as clockNow, type OperatorDeps } from './deps';
import { OpsUsageError } from './errors';

/** Where the secret lives: the local secrets file, or a Secrets Manager secret per source. */
export type SecretRotator =
  | { readonly kind: 'local'; rotate(sourceId: string): Promise<unknown> }
  | { readonly kind: 'aws'; readonly client: SecretsManagerClient; readonly secretIds: Readonly<Record<string, string>> };

export interface RotateResult {
  readonly source: string;
  readonly at: number;
  readonly where: 'local' | 'aws';
  /** The new Secrets Manager version id (AWS); not secret. */
  readonly versionId?: string;
  readonly auditKey: string;
}

export async function rotateSecret(
  deps: OperatorDeps & ConfigDeps & { readonly rotator: SecretRotator },
  request: { source: string },
): Promise<RotateResult> {
  const { source } = request;
  if (!findSource(deps.config, source)) {
    throw new OpsUsageError(`unknown source "${source}"; configured: ${deps.config.sources.map((s) => s.id).join(', ')}`);
  }
  const at = clockNow(deps);
  let versionId: string | undefined;
  const { rotator } = deps;
  if (rotator.kind === 'local') {
    await rotator.rotate(source);
  } else {
    const secretId = rotator.secretIds[source];
    if (!secretId) throw new OpsUsageError(`the stack has no signing secret output for source "${source}" (SecretArn<Source>)`);
    const out = await rotator.client.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: newWebhookSecret() }));
    versionId = out.VersionId;
  }
  // After the rotation: the audit says what happened, and a failed rotation leaves no false record.
  const audit = await writeAudit(deps, 'secret.rotate', { source, where: rotator.kind, ...(versionId ? { versionId } : {}) }, { at });
  return { source, at, where: rotator.kind, ...(versionId ? { versionId } : {}), auditKey: audit.pk };
}
