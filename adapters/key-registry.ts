/**
 * The tenant key registry in the EventStore table (`key#<keyId>` items): read by intake and by the
 * consumer runtime (getKey, translated: a failure is StorageUnavailableError), written by the CLI
 * (`hookledger keys`; SDK errors other than a failed condition reach it as they are).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type KeyItem, keyRegistryKey } from '../core/model';
import { EventTable } from './table';

export class KeyRegistry extends EventTable {
  async getKey(keyId: string): Promise<KeyItem | undefined> {
    return (await this.get('getKey', keyRegistryKey(keyId))) as KeyItem | undefined;
  }

  /**
   * Registers a key. False when the id exists: ids are never re-issued, so events already
   * attributed to one keep meaning the same tenant.
   */
  async createKey(item: KeyItem): Promise<boolean> {
    try {
      await this.put('putKey', item, 'attribute_not_exists(pk)');
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /**
   * Marks a registered key revoked. Returns the key as it is now, and whether it was revoked
   * already (then nothing is written); undefined when there is no such key.
   */
  async revokeKey(keyId: string, at: number): Promise<{ readonly key: KeyItem; readonly alreadyRevoked: boolean } | undefined> {
    const existing = (await this.read('getKey', keyRegistryKey(keyId))) as KeyItem | undefined;
    if (existing?.kind !== 'key') return undefined;
    if (existing.status === 'revoked') return { key: existing, alreadyRevoked: true };
    try {
      const out = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keyRegistryKey(keyId) },
          UpdateExpression: 'SET #status = :revoked, revokedAt = :at',
          ConditionExpression: 'attribute_exists(pk) AND kind = :key',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':revoked': 'revoked', ':at': at, ':key': 'key' },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { key: out.Attributes as KeyItem, alreadyRevoked: false };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }
}
