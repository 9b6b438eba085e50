/**
 * The tenant key registry (`key#<keyId>` items in the EventStore). Intake checks keys against it
 * when a source sets `enforceKeyRegistry`; consumers ask a key's status now before acting on it.
 */
import { scanKeys } from '../adapters/table-scan';
import { type KeyItem, keyRegistryKey } from '../core/model';
import { writeAudit } from './audit';
import { now as clockNow, eventStoresOf, type OperatorDeps, type StoreDeps } from './deps';
import { ConflictError, NotFoundError, UsageError } from './errors';
import { newKeyId } from './ids';

const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;

export async function issueKey(deps: OperatorDeps, request: { tenant: string; keyId?: string }): Promise<KeyItem> {
  const at = clockNow(deps);
  const keyId = request.keyId ?? newKeyId(at);
  if (!KEY_ID.test(keyId)) throw new UsageError(`key id must be 1-64 letters, digits, '_' or '-', got "${keyId}"`);
  if (!request.tenant) throw new UsageError('a key needs a tenant (--tenant)');
  const item: KeyItem = { pk: keyRegistryKey(keyId), kind: 'key', keyId, tenantId: request.tenant, status: 'active', createdAt: at };
  // Never re-issue an id: events already attributed to it must keep meaning the same tenant.
  if (!(await eventStoresOf(deps).keys.createKey(item))) {
    throw new ConflictError(`key ${keyId} already exists; key ids are never reused, pick another (or omit --key-id)`);
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
  const revoked = await eventStoresOf(deps).keys.revokeKey(request.keyId, at);
  if (!revoked) throw new NotFoundError(`no key ${request.keyId}; list keys with \`hookledger keys list\``);
  if (revoked.alreadyRevoked) return revoked;
  await writeAudit(deps, 'key.revoke', { keyId: request.keyId, tenant: revoked.key.tenantId }, { at });
  return revoked;
}

/** Keys, newest first. Scale: a filtered Scan of the EventStore. */
export async function listKeys(deps: StoreDeps, request: { tenant?: string } = {}): Promise<KeyItem[]> {
  const keys = await scanKeys(deps, { tenant: request.tenant });
  return keys.sort((a, b) => b.createdAt - a.createdAt || a.keyId.localeCompare(b.keyId));
}
