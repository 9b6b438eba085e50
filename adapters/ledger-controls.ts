/**
 * The control items among a consumer's Ledger rows (kind `control`), each read and written by the
 * consumer runtime alone:
 *
 *   VersionWatermarks  ordered consumers with `version`: the newest version acknowledged per key, so
 *                      an older event is skipped.
 *   Breakers           HTTP consumers' circuit breaker: consecutive failures per consumer.
 *
 * SDK errors other than a failed condition become StorageUnavailableError (the runtime retries).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { breakerKey, versionWatermarkKey } from '../core/model';
import { translate } from './table';

export interface LedgerTableOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}

export class VersionWatermarks {
  constructor(private readonly options: LedgerTableOptions) {}

  /**
   * Ordered consumers with `version`: whether an event of `version` is older than one already
   * acknowledged for its key. The watermark is a control item among the consumer's own rows.
   */
  async isStaleVersion(consumerId: string, key: string, version: string | number): Promise<boolean> {
    const out = await this.options.client.send(
      new GetCommand({ TableName: this.options.tableName, Key: { pk: versionWatermarkKey(consumerId, key) }, ConsistentRead: true }),
    );
    const seen: unknown = out.Item?.version;
    if (seen === undefined || typeof seen !== typeof version) return false;
    return (version as string | number) < (seen as string | number);
  }

  /** Raises the key's watermark to `version` (never lowers it; a lower or equal one is a no-op). */
  async advanceVersion(consumerId: string, key: string, version: string | number, now: number): Promise<void> {
    try {
      await this.options.client.send(
        new UpdateCommand({
          TableName: this.options.tableName,
          Key: { pk: versionWatermarkKey(consumerId, key) },
          UpdateExpression: 'SET #version = :v, #at = :now, #kind = :kind',
          ConditionExpression: 'attribute_not_exists(#version) OR #version < :v',
          ExpressionAttributeNames: { '#version': 'version', '#at': 'at', '#kind': 'kind' },
          ExpressionAttributeValues: { ':v': version, ':now': now, ':kind': 'control' },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return;
      throw translate(error);
    }
  }
}

export class Breakers {
  constructor(private readonly options: LedgerTableOptions) {}

  /** HTTP consumers' circuit breaker: one more consecutive failure; returns the count. */
  async recordBreakerFailure(consumerId: string, now: number): Promise<number> {
    try {
      const out = await this.options.client.send(
        new UpdateCommand({
          TableName: this.options.tableName,
          Key: { pk: breakerKey(consumerId) },
          UpdateExpression: 'ADD #failures :one SET #at = :now, #kind = :kind',
          ExpressionAttributeNames: { '#failures': 'failures', '#at': 'at', '#kind': 'kind' },
          ExpressionAttributeValues: { ':one': 1, ':now': now, ':kind': 'control' },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(out.Attributes?.failures ?? 1);
    } catch (error) {
      throw translate(error);
    }
  }

  /** A success closes the breaker: the consecutive-failure count goes back to 0 (no write when it is 0). */
  async resetBreaker(consumerId: string, now: number): Promise<void> {
    try {
      await this.options.client.send(
        new UpdateCommand({
          TableName: this.options.tableName,
          Key: { pk: breakerKey(consumerId) },
          UpdateExpression: 'SET #failures = :zero, #at = :now',
          ConditionExpression: '#failures > :zero',
          ExpressionAttributeNames: { '#failures': 'failures', '#at': 'at' },
          ExpressionAttributeValues: { ':zero': 0, ':now': now },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return;
      throw translate(error);
    }
  }
}
