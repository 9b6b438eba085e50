/**
 * The tenant key registry (`key#<keyId>` items in the EventStore). Intake checks keys against it
 * when a source sets `enforceKeyRegistry`; consumers ask a key's status now before acting on it.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { scanAll } from '../../lambdas/shared/table-scan';
import { type KeyItem, keyRegistryKey } from '../../core/model';
import { writeAudit } from './audit';
import { now as clockNow, type OperatorDeps, type StoreDeps } from './deps';
import { ConflictError, NotFoundError, OpsUsageError } from './errors';
import { newKeyId } from './ids';

const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;

export async function issueKey(deps: OperatorDeps, request: { tenant: string; keyId?: string }): Promise<KeyItem> {
  const at = clockNow(deps);
  const keyId = request.keyId ?? newKeyId(at);
  if (!KEY_ID.test(keyId)) throw new OpsUsageError(`key id must be 1-64 letters, digits, '_' or '-', got "${keyId}"`);
  if (!request.tenant) throw new OpsUsageError('a key needs a tenant (--tenant)');
  const item: KeyItem = { pk: keyRegistryKey(keyId), kind: 'key', keyId, tenantId: request.tenant, status: 'active', createdAt: at };
  try {
    // Never re-issue an id: events already attributed to it must keep meaning the same tenant.
    await deps.ddb.send(new PutCommand({ TableName: deps.tables.events, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) {
      throw new ConflictError(`key ${keyId} already exists; key ids are never reused, pick another (or omit --key-id)`);
    }
    throw error;
  }
  await writeAudit(deps, 'key.issue', { keyId, tenant: request.tenant }, { at });
  return item;
}

export interface RevokeResult {
  readonly key: KeyItem;
  /** True when the key was already revoked (nothing changed). */
  readonly alreadyRevoked: boolean;
}

export async function revokeKey(deps: OperatorDeps, request: { keyId: string }): Promise<RevokeResult> {
  const at = clockNow(deps);
  const pk = keyRegistryKey(request.keyId);
  const existing = (await deps.ddb.send(new GetCommand({ TableName: deps.tables.events, Key: { pk } }))).Item as KeyItem | undefined;
  if (!existing || existing.kind !== 'key') throw new NotFoundError(`no key ${request.keyId}; list keys with \`hookledger keys list\``);
  if (existing.status === 'revoked') return { key: existing, alreadyRevoked: true };
  let key: KeyItem;
  try {
    const out = await deps.ddb.send(
      new UpdateCommand({
        TableName: deps.tables.events,
        Key: { pk },
        UpdateExpression: 'SET #status = :revoked, revokedAt = :at',
        ConditionExpression: 'attribute_exists(pk) AND kind = :key',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':revoked': 'revoked', ':at': at, ':key': 'key' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    key = out.Attributes as KeyItem;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw new NotFoundError(`no key ${request.keyId}`);
    throw error;
  }
  await writeAudit(deps, 'key.revoke', { keyId: request.keyId, tenant: existing.tenantId }, { at });
  return { key, alreadyRevoked: false };
}

/** Keys, newest first. Scale: a filtered Scan of the EventStore. */
export async function listKeys(deps: StoreDeps, request: { tenant?: string } = {}): Promise<KeyItem[]> {
  const keys = await scanAll<KeyItem>(deps.ddb, {
    TableName: deps.tables.events,
    FilterExpression: request.tenant !== undefined ? 'kind = :key AND tenantId = :tenant' : 'kind = :key',
    ExpressionAttributeValues: { ':key': 'key', ...(request.tenant !== undefined ? { ':tenant': request.tenant } : {}) },
  });
  return keys.sort((a, b) => b.createdAt - a.createdAt || a.keyId.localeCompare(b.keyId));
}
