/**
 * Audit items in the EventStore (`audit#<iso>#<id>`, kind `audit`): who did what, when, to what.
 * Never a secret value. Built here, written by `AuditLog.putAudit`: by the CLI (cli/ops/audit.ts)
 * and by the scheduled reconciler's repairs.
 */
import { type AuditAction, type AuditItem, auditKey } from '../core/model';

export { type AuditAction, type AuditItem, auditKey };

export function auditItem(
  entry: { readonly action: AuditAction; readonly auditId: string; readonly at: number; readonly operator: string },
  details: Record<string, unknown>,
): AuditItem {
  return { ...details, pk: auditKey(entry.at, entry.auditId), kind: 'audit', ...entry };
}
