/**
 * Audit items in the EventStore (`audit#<iso>#<id>`, kind `audit`): who did what, when, to what.
 * Never a secret value.
 *
 * When: replay and backfill write theirs after counting and before their many writes, so a run
 * that dies half-way still leaves a trace of what it set out to do (its requeue items carry the same
 * id). Single-write actions (keys, rotation, retirement) write theirs after the write succeeded, so a refused
 * action leaves no false record.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { newAuditId } from './ids';
import { now as clockNow, type OperatorDeps } from './deps';

export type AuditAction = 'replay' | 'backfill' | 'secret.rotate' | 'secret.retire' | 'key.issue' | 'key.revoke';

export interface AuditItem {
  readonly pk: string;
  readonly kind: 'audit';
  readonly action: AuditAction;
  readonly auditId: string;
  readonly at: number;
  readonly operator: string;
  readonly [detail: string]: unknown;
}

export const auditKey = (at: number, id: string) => `audit#${new Date(at).toISOString()}#${id}`;

export async function writeAudit(
  deps: OperatorDeps,
  action: AuditAction,
  details: Record<string, unknown>,
  options: { readonly id?: string; readonly at?: number } = {},
): Promise<AuditItem> {
  const at = options.at ?? clockNow(deps);
  const auditId = options.id ?? newAuditId(at);
  const item: AuditItem = { ...details, pk: auditKey(at, auditId), kind: 'audit', action, auditId, at, operator: deps.operator };
  await deps.ddb.send(
    new PutCommand({ TableName: deps.tables.events, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
  );
  return item;
}
