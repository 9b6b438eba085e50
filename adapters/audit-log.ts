/**
 * The operator audit log in the EventStore table (`audit#<iso>#<id>` items, built by audit.ts):
 * written by the CLI and by the scheduled reconciler's repairs.
 */

import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditItem } from '../core/model';
import { EventTable } from './table';

export class AuditLog extends EventTable {
  /** An operator action's audit item; never overwrites one (a failed condition is thrown). */
  async putAudit(item: AuditItem): Promise<void> {
    await this.put('putAudit', item, 'attribute_not_exists(pk)');
  }

  /**
   * Adds what a run did to its own audit item (erase writes its item before its first delete, so a
   * run that dies half-way still leaves its scope on record, then its counts when it ends).
   */
  async completeAudit(pk: string, outcome: Readonly<Record<string, unknown>>): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk },
        UpdateExpression: 'SET outcome = :outcome',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':outcome': outcome },
      }),
    );
  }
}
