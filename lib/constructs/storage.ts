import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { TABLE_KEY, TTL_ATTRIBUTE, WINDOW_INDEX } from '../../core/model';

export interface StorageProps {
  /**
   * What happens to both tables when they leave the stack. They hold the receipts and the billing
   * ledger, so the default keeps them.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Whether DeleteTable is refused until protection is turned off (guards console and API deletes too).
   * @default true
   */
  readonly deletionProtection?: boolean;
}

/**
 * The stateful half of hookledger: the EventStore (receipts, payloads, re-queues, key registry; its
 * stream drives the fan-out) and the Ledger (one item per event and consumer). Key layout: see
 * core/model.ts. Its construct id in the stack stays `EventStore`: the tables' logical ids derive
 * from it.
 */
export class Storage extends Construct {
  /** Partition key `pk`; stream NEW_IMAGE; TTL attribute `expiresAt`; the window index (GSI). */
  readonly events: dynamodb.ITable;
  /** Partition key `pk` = `<source>:<eventId>#<consumerId>`. */
  readonly ledger: dynamodb.ITable;

  constructor(scope: Construct, id: string, props: StorageProps = {}) {
    super(scope, id);
    const common: dynamodb.TableProps = {
      partitionKey: { name: TABLE_KEY, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // AWS managed key: encryption visible in CloudTrail, no key policy to maintain, and no kms:*
      // grants needed by the functions (the aws/dynamodb key admits every principal DynamoDB admits).
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      deletionProtection: props.deletionProtection ?? true,
    };
    const events = new dynamodb.Table(this, 'Events', {
      ...common,
      stream: dynamodb.StreamViewType.NEW_IMAGE,
      timeToLiveAttribute: TTL_ATTRIBUTE,
    });
    // The window index (sparse: only receipts and tenant-day items carry its keys). INCLUDE keeps a
    // receipt's index entry within 1 KB, so it costs one write unit per webhook; see README "Window
    // queries".
    events.addGlobalSecondaryIndex({
      indexName: WINDOW_INDEX.name,
      partitionKey: { name: WINDOW_INDEX.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: WINDOW_INDEX.sortKey, type: dynamodb.AttributeType.NUMBER },
      projectionType: dynamodb.ProjectionType.INCLUDE,
      nonKeyAttributes: [...WINDOW_INDEX.projected],
    });
    this.events = events;
    this.ledger = new dynamodb.Table(this, 'Ledger', common);
  }
}

/**
 * Grants item actions on a table only for items whose partition key matches one of `keyPatterns`
 * (IAM StringLike: `*` matches any characters). This is how a consumer is confined to its own ledger
 * rows and to payload and key-registry items.
 */
export function grantItemsByKeyPattern(
  table: dynamodb.ITable,
  grantee: iam.IGrantable,
  actions: readonly string[],
  keyPatterns: readonly string[],
): iam.Grant {
  if (keyPatterns.length === 0) throw new Error('keyPatterns must name at least one key pattern');
  return iam.Grant.addToPrincipal({
    grantee,
    actions: [...actions],
    resourceArns: [table.tableArn],
    conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...keyPatterns] } },
  });
}
