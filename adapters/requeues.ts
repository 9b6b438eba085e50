/**
 * Re-queue items in the EventStore table (built by requeue.ts): written by the CLI (replay,
 * backfill, reconcile --repair) and by the scheduled reconciler.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { RequeueItem } from '../core/model';
import { EventTable } from './table';

export class Requeues extends EventTable {
  /**
   * An explicit re-queue: the stream carries its INSERT to the fan-out, which sends it to one
   * consumer. A new key per operation id; the condition keeps an SDK retry of a write that did land
   * from inserting the item again (a second INSERT would be a second delivery), so writing the same
   * item twice is a no-op.
   */
  async putRequeue(item: RequeueItem): Promise<void> {
    try {
      await this.put('putRequeue', item, 'attribute_not_exists(pk)');
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}
