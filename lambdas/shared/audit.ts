/**
 * Audit items in the EventStore (`audit#<iso>#<id>`, kind `audit`): who did what, when, to what.
 * Never a secret value. Written by the CLI (cli/ops/audit.ts) and by the scheduled reconciler's repairs.
 */
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { auditKey } from '../../core/model';

export type AuditAction = 'replay' | 'backfill' | 'repair' | 'secret.rotate' | 'secret.retire' | 'key.issue' | 'key.revoke';

export interface AuditItem {
  readonly pk: string;
  readonly kind: 'audit';
  readonly action: AuditAction;
  readonly auditId: string;
  readonly at: number;
  readonly operator: string;
  readonly [detail: string]: unknown;
}

export { auditKey };

export async function putAudit(
  deps: { readonly ddb: DynamoDBDocumentClient; readonly tables: { readonly events: string } },
  entry: { readonly action: AuditAction; readonly auditId: string; readonly at: number; readonly operator: string },
  details: Record<string, unknown>,
): Promise<AuditItem> {
  const item: AuditItem = { ...details, pk: auditKey(entry.at, entry.auditId), kind: 'audit', ...entry };
  await deps.ddb.send(new PutCommand({ TableName: deps.tables.events, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
  return item;
}
