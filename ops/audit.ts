/**
 * Audit items in the EventStore (`audit#<iso>#<id>`, kind `audit`): who did what, when, to what.
 * Never a secret value.
 *
 * When: replay and backfill write theirs after counting and before their many writes, so a run
 * that dies half-way still leaves a trace of what it set out to do (its requeue items carry the same
 * id). Single-write actions (keys, rotation, retirement) write theirs after the write succeeded, so a refused
 * action leaves no false record.
 */
import { type AuditAction, type AuditItem, auditItem, auditKey } from '../adapters/audit';
import { now as clockNow, eventStoresOf, type OperatorDeps } from './deps';
import { newAuditId } from './ids';

export { type AuditAction, type AuditItem, auditKey };

export async function writeAudit(
  deps: OperatorDeps,
  action: AuditAction,
  details: Record<string, unknown>,
  options: { readonly id?: string; readonly at?: number } = {},
): Promise<AuditItem> {
  const at = options.at ?? clockNow(deps);
  const auditId = options.id ?? newAuditId(at);
  const item = auditItem({ action, auditId, at, operator: deps.operator }, details);
  await eventStoresOf(deps).audit.putAudit(item);
  return item;
}
