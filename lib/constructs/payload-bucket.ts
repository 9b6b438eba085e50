import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct, type IConstruct } from 'constructs';
import { payloadObjectPattern, RETENTION_TAG, viewObjectPattern } from '../../core/blobs';
import { ConfigurationError } from '../../core/errors';

export interface PayloadBucketProps {
  /**
   * Days an object is kept: the configuration's payload retention (`retention.payloadDays`), so a
   * body in the bucket lives as long as one in a payload item, and an orphan (an object whose item
   * or receipt never landed) is deleted with it.
   */
  readonly retentionDays: number;
  /**
   * Every retention (days) the sources use (`retentionDays` on a source, else `retention.payloadDays`;
   * core/config/routing.ts payloadRetentionValues). With more than one, each gets a lifecycle rule on
   * the objects tagged with it (core/blobs.ts RETENTION_TAG: intake tags bodies, the fan-out views),
   * and the untagged rule keeps the longest as a backstop (S3 honours the shorter of two overlapping
   * expirations, so it never keeps a tagged object longer than its own rule).
   * @default [retentionDays]
   */
  readonly retentionValues?: readonly number[];
  /**
   * What happens to the bucket when it leaves the stack. It holds payloads the receipts reference.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The payload bucket (stateful, retained): bodies too large for a payload item under `payloads/`,
 * and consumers' narrowed views too large for a queue message under `views/<consumerId>/` (claim
 * check). SSE-S3 (no KMS grants to keep), public access blocked, SSL only, objects expire after the
 * payload retention. Grants are per prefix and per action: nobody may list, and each consumer reads
 * only its own views.
 */
export class PayloadBucket extends Construct {
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: PayloadBucketProps) {
    super(scope, id);
    const values = [...new Set([props.retentionDays, ...(props.retentionValues ?? [])])].sort((a, b) => a - b);
    for (const days of values) {
      if (!Number.isInteger(days) || days < 1) {
        throw new ConfigurationError(`retentionDays must be a whole number of days >= 1, got ${days}; round it up to a whole day`);
      }
    }
    const longest = values[values.length - 1] as number;
    const tagged: s3.LifecycleRule[] =
      values.length > 1
        ? values.map((days) => ({
            id: `payload-retention-${days}d`,
            tagFilters: { [RETENTION_TAG]: String(days) },
            expiration: Duration.days(days),
          }))
        : [];
    this.bucket = new s3.Bucket(this, 'Bucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        { id: 'payload-retention', expiration: Duration.days(longest), abortIncompleteMultipartUploadAfter: Duration.days(1) },
        ...tagged,
      ],
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "Every object is written and read by the stack's own functions under per-prefix grants, and each intake, fan-out and delivery is on record in the EventStore and Ledger; server access logs would add a second bucket and per-request log objects for no reader.",
    });
  }

  /** Intake: PutObject (with its retention tag) on `payloads/*` (it writes large bodies, reads nothing back). */
  grantPayloadWrite(grantee: iam.IGrantable): iam.Grant {
    return this.grantObjects(grantee, ['s3:PutObject', 's3:PutObjectTagging'], payloadObjectPattern());
  }

  /** The fan-out: GetObject on `payloads/*`. */
  grantPayloadRead(grantee: iam.IGrantable): iam.Grant {
    return this.grantObjects(grantee, ['s3:GetObject'], payloadObjectPattern());
  }

  /** The fan-out: PutObject (with its retention tag) on `views/*` (claim-checked views of any consumer). */
  grantViewWrite(grantee: iam.IGrantable): iam.Grant {
    return this.grantObjects(grantee, ['s3:PutObject', 's3:PutObjectTagging'], viewObjectPattern());
  }

  /** One consumer's worker: GetObject on `views/<consumerId>/*`, its own views only. */
  grantViewRead(consumerId: string, grantee: iam.IGrantable): iam.Grant {
    return this.grantObjects(grantee, ['s3:GetObject'], viewObjectPattern(consumerId));
  }

  private grantObjects(grantee: iam.IGrantable, actions: string[], keyPattern: string): iam.Grant {
    const grant = iam.Grant.addToPrincipal({ grantee, actions, resourceArns: [this.bucket.arnForObjects(keyPattern)] });
    if (Construct.isConstruct(grantee)) {
      const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket);
      Validations.of(grantee as IConstruct).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${keyPattern}]`,
        reason: `Object keys are per event (core/blobs.ts), so the grant names a key prefix: ${actions.join(', ')} on ${keyPattern} only, no list, no other prefix.`,
      });
    }
    return grant;
  }
}
