import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import {
  CAPACITY_TABLES,
  type CapacityConfig,
  type CapacityTable,
  type ScaledCapacity,
  type TableCapacity,
} from '../../core/config/capacity';
import { ConfigurationError } from '../../core/errors';
import { keyPattern, TABLE_KEY, TTL_ATTRIBUTE, WINDOW_INDEX } from '../../core/model';

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
  /**
   * How each table and its indexes are billed (config `capacity`, validated by `defineConfig`):
   * provisioned ones get Application Auto Scaling (target tracking) on reads and writes of the table
   * and of every index.
   * @default - both on demand
   */
  readonly capacity?: CapacityConfig;
}

const ON_DEMAND: TableCapacity = { mode: 'on-demand' };

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
    const capacity = props.capacity ?? { eventStore: ON_DEMAND, ledger: ON_DEMAND };
    const common: dynamodb.TableProps = {
      partitionKey: { name: TABLE_KEY, type: dynamodb.AttributeType.STRING },
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // AWS managed key: encryption visible in CloudTrail, no key policy to maintain, and no kms:*
      // grants needed by the functions (the aws/dynamodb key admits every principal DynamoDB admits).
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      deletionProtection: props.deletionProtection ?? true,
    };
    const events = new dynamodb.Table(this, 'Events', {
      ...common,
      ...billing(capacity.eventStore),
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
      ...indexBilling(capacity.eventStore, WINDOW_INDEX.name),
    });
    this.events = events;
    const ledger = new dynamodb.Table(this, 'Ledger', { ...common, ...billing(capacity.ledger) });
    this.ledger = ledger;
    autoScale(events, 'eventStore', capacity.eventStore);
    autoScale(ledger, 'ledger', capacity.ledger);
  }
}

function billing(c: TableCapacity): Pick<dynamodb.TableProps, 'billingMode' | 'readCapacity' | 'writeCapacity'> {
  if (c.mode === 'on-demand') return { billingMode: dynamodb.BillingMode.PAY_PER_REQUEST };
  // Start at the minimum; auto scaling moves it from there.
  return { billingMode: dynamodb.BillingMode.PROVISIONED, readCapacity: c.minRead, writeCapacity: c.minWrite };
}

function indexBilling(c: TableCapacity, indexName: string): Pick<dynamodb.GlobalSecondaryIndexProps, 'readCapacity' | 'writeCapacity'> {
  const scaled = c.mode === 'provisioned' ? c.indexes[indexName] : undefined;
  return scaled ? { readCapacity: scaled.minRead, writeCapacity: scaled.minWrite } : {};
}

/**
 * Target tracking on reads and writes of a provisioned table and of every index it has. An index of
 * a provisioned table without its own scaling would stay at its initial capacity and, once short,
 * throttle the table's writes: refused here, whatever built the capacity settings.
 */
function autoScale(table: dynamodb.Table, key: CapacityTable, c: TableCapacity): void {
  if (c.mode === 'on-demand') return;
  const label = CAPACITY_TABLES[key].label;
  const cfn = table.node.defaultChild as dynamodb.CfnTable;
  const gsis = (cfn.globalSecondaryIndexes ?? []) as dynamodb.CfnTable.GlobalSecondaryIndexProperty[];
  for (const { indexName } of gsis) {
    if (!c.indexes[indexName]) {
      throw new ConfigurationError(
        `index ${indexName} of the ${label} table is provisioned without auto scaling: capacity.${key}.indexes.${indexName} is missing ` +
          `(add ${indexName} to CAPACITY_TABLES.${key}.indexes in core/config/capacity.ts so the config scales it)`,
      );
    }
  }
  const scale = (read: dynamodb.IScalableTableAttribute, write: dynamodb.IScalableTableAttribute, s: ScaledCapacity): void => {
    read.scaleOnUtilization({ targetUtilizationPercent: s.targetUtilization });
    write.scaleOnUtilization({ targetUtilizationPercent: s.targetUtilization });
  };
  scale(
    table.autoScaleReadCapacity({ minCapacity: c.minRead, maxCapacity: c.maxRead }),
    table.autoScaleWriteCapacity({ minCapacity: c.minWrite, maxCapacity: c.maxWrite }),
    c,
  );
  for (const { indexName } of gsis) {
    const s = c.indexes[indexName]!;
    scale(
      table.autoScaleGlobalSecondaryIndexReadCapacity(indexName, { minCapacity: s.minRead, maxCapacity: s.maxRead }),
      table.autoScaleGlobalSecondaryIndexWriteCapacity(indexName, { minCapacity: s.minWrite, maxCapacity: s.maxWrite }),
      s,
    );
  }
}

/**
 * What intake's write path writes and reads on the EventStore (lambdas/recording/record.ts through
 * adapters/receipts.ts), by leading key only: receipts, payloads and body claims (PutItem, GetItem
 * when a condition fails without returning the item), key-registry items (GetItem), the conflict
 * audit, the tenant-day registry of the window index and the duplicate counts (UpdateItem), its own
 * orphaned payload on a conflict (DeleteItem). Intake and the gap check's recovery (which runs intake's
 * steps, and counts a listed event it finds already recorded as a duplicate) share it.
 */
export function grantIntakeWrites(events: dynamodb.ITable, grantee: iam.IGrantable): void {
  grantItemsByKeyPattern(events, grantee, ['dynamodb:PutItem'], [keyPattern('event'), keyPattern('payload'), keyPattern('bodyClaim')]);
  grantItemsByKeyPattern(events, grantee, ['dynamodb:GetItem'], [keyPattern('key'), keyPattern('event'), keyPattern('bodyClaim')]);
  grantItemsByKeyPattern(
    events,
    grantee,
    ['dynamodb:UpdateItem'],
    [keyPattern('conflict'), keyPattern('tenantDay'), keyPattern('duplicates')],
  );
  grantItemsByKeyPattern(events, grantee, ['dynamodb:DeleteItem'], [keyPattern('payload')]);
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
  if (keyPatterns.length === 0) {
    throw new ConfigurationError(
      `keyPatterns must name at least one key pattern for ${actions.join(', ')}, got none; build them with keyPattern() (core/model.ts)`,
    );
  }
  return iam.Grant.addToPrincipal({
    grantee,
    actions: [...actions],
    resourceArns: [table.tableArn],
    conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...keyPatterns] } },
  });
}
