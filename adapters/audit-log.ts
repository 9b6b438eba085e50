/**
 * The operator audit log in the EventStore table (`audit#<iso>#<id>` items, built by audit.ts):
 * written by the CLI and by the scheduled reconciler's repairs.
 */

import type { AuditItem } from '../core/model';
import { EventTable } from './table';

export class AuditLog extends EventTable {
  /** An operator action's audit item; never overwrites one (a failed condition is thrown). */
  async putAudit(item: AuditItem): Promise<void> {
    await this.put('putAudit', item, 'attribute_not_exists(pk)');
  }
}
