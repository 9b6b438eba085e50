/**
 * What IAM sees in a request (its signer is verified first, callers.ts): for DynamoDB (X-Amz-Target),
 * DynamoDB Streams, SQS (JSON or query protocol), S3 (method and path) and Secrets Manager the
 * actions, resource ARNs and condition keys (`dynamodb:LeadingKeys`, `s3:prefix`) AWS would
 * evaluate. Batch and transaction calls need the action of each part.
 */

import type { AccessRequest } from './iam';
import { LOCAL_ACCOUNT } from './template';

const REGION = 'us-east-1';

/** Per table: its partition key and its indexes' partition keys (for `dynamodb:LeadingKeys`). */
export interface TableKeys {
  readonly partitionKey: string;
  readonly indexKeys?: Readonly<Record<string, string>>;
  /** Its stream ARN, when it has one (GetRecords names only an iterator). */
  readonly streamArn?: string;
}

type Item = Record<string, Record<string, unknown>>;

const scalar = (value: Record<string, unknown> | undefined): string | undefined => {
  if (!value) return undefined;
  const v = value.S ?? value.N ?? value.B;
  return v === undefined ? undefined : String(v);
};

const tableArn = (name: string) => `arn:aws:dynamodb:${REGION}:${LOCAL_ACCOUNT}:table/${name}`;
/** DynamoDB Local's ARNs say region `ddblocal`; the template's resolve to us-east-1. */
const normalizeArn = (arn: string) => arn.replace(/^arn:aws:dynamodb:[^:]*:[^:]*:/, `arn:aws:dynamodb:${REGION}:${LOCAL_ACCOUNT}:`);

export function dynamoRequests(target: string, body: Record<string, unknown>, tables: ReadonlyMap<string, TableKeys>): AccessRequest[] {
  const [prefix, op = ''] = target.split('.');
  if (prefix?.startsWith('DynamoDBStreams')) {
    if (op === 'ListStreams') return [{ action: 'dynamodb:ListStreams', resource: '*' }];
    const arn =
      typeof body.StreamArn === 'string'
        ? normalizeArn(body.StreamArn)
        : (([...tables.values()].filter((t) => t.streamArn).length === 1
            ? [...tables.values()].find((t) => t.streamArn)?.streamArn
            : undefined) ?? '*');
    return [{ action: `dynamodb:${op}`, resource: arn }];
  }
  const leading = (table: string, ...items: (Item | undefined)[]) => {
    const pk = tables.get(table)?.partitionKey;
    const keys = items.map((i) => (pk ? scalar(i?.[pk]) : undefined)).filter((k): k is string => k !== undefined);
    return keys.length > 0 ? { 'dynamodb:LeadingKeys': [...new Set(keys)] } : undefined;
  };
  const one = (action: string, table: string, ...items: (Item | undefined)[]): AccessRequest => {
    const context = leading(table, ...items);
    return { action: `dynamodb:${action}`, resource: tableArn(table), ...(context ? { context } : {}) };
  };
  const table = String(body.TableName ?? '');
  switch (op) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
      return [one(op, table, body.Key as Item)];
    case 'PutItem':
      return [one(op, table, body.Item as Item)];
    case 'Query':
    case 'Scan': {
      const index = typeof body.IndexName === 'string' ? body.IndexName : undefined;
      const resource = index ? `${tableArn(table)}/index/${index}` : tableArn(table);
      const key = queryPartitionValue(body, index ? tables.get(table)?.indexKeys?.[index] : tables.get(table)?.partitionKey);
      return [{ action: `dynamodb:${op}`, resource, ...(key ? { context: { 'dynamodb:LeadingKeys': [key] } } : {}) }];
    }
    case 'BatchGetItem':
      return Object.entries((body.RequestItems ?? {}) as Record<string, { Keys?: Item[] }>).map(([t, r]) => one(op, t, ...(r.Keys ?? [])));
    case 'BatchWriteItem':
      return Object.entries(
        (body.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]>,
      ).map(([t, writes]) => one(op, t, ...writes.map((w) => w.PutRequest?.Item ?? w.DeleteRequest?.Key)));
    case 'TransactWriteItems':
    case 'TransactGetItems': {
      const parts = (body.TransactItems ?? []) as Record<string, { TableName: string; Key?: Item; Item?: Item }>[];
      const actions: Record<string, string> = {
        Put: 'PutItem',
        Update: 'UpdateItem',
        Delete: 'DeleteItem',
        ConditionCheck: 'ConditionCheckItem',
        Get: 'GetItem',
      };
      return parts.flatMap((part) => Object.entries(part).map(([kind, p]) => one(actions[kind] ?? kind, p.TableName, p.Item ?? p.Key)));
    }
    default:
      return [{ action: `dynamodb:${op}`, resource: table ? tableArn(table) : '*' }];
  }
}

/** The partition key value of a Query's `KeyConditionExpression` (`#pk = :v` or `pk = :v`). */
function queryPartitionValue(body: Record<string, unknown>, keyName: string | undefined): string | undefined {
  if (!keyName || typeof body.KeyConditionExpression !== 'string') return undefined;
  const names = (body.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (body.ExpressionAttributeValues ?? {}) as Item;
  for (const m of body.KeyConditionExpression.matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    const name = m[1]!.startsWith('#') ? names[m[1]!] : m[1];
    if (name === keyName) return scalar(values[m[2]!]);
  }
  return undefined;
}

/** SQS batch actions are authorized as the single one. */
const SQS_ACTION: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

export function sqsRequests(op: string, params: Record<string, unknown>): AccessRequest[] {
  const url = typeof params.QueueUrl === 'string' ? params.QueueUrl : undefined;
  const name = url ? url.replace(/\/+$/, '').split('/').pop() : typeof params.QueueName === 'string' ? params.QueueName : undefined;
  const resource = name ? `arn:aws:sqs:${REGION}:${LOCAL_ACCOUNT}:${name}` : '*';
  return [{ action: `sqs:${SQS_ACTION[op] ?? op}`, resource }];
}

/**
 * `tagged`: the request carries `x-amz-tagging` (a PutObject with tags), for which AWS also evaluates
 * `s3:PutObjectTagging` on the object.
 */
export function s3Requests(method: string, url: URL, tagged = false): AccessRequest[] {
  const [, bucket = '', ...rest] = url.pathname.split('/');
  const key = decodeURIComponent(rest.join('/'));
  const q = url.searchParams;
  if (key === '') {
    if (method === 'PUT') return [{ action: 's3:CreateBucket', resource: `arn:aws:s3:::${bucket}` }];
    if (method === 'GET' && q.has('location')) return [{ action: 's3:GetBucketLocation', resource: `arn:aws:s3:::${bucket}` }];
    if (method === 'POST' && q.has('delete')) return [{ action: 's3:DeleteObject', resource: `arn:aws:s3:::${bucket}/*` }];
    const prefix = q.get('prefix');
    return [
      { action: 's3:ListBucket', resource: `arn:aws:s3:::${bucket}`, ...(prefix !== null ? { context: { 's3:prefix': prefix } } : {}) },
    ];
  }
  const resource = `arn:aws:s3:::${bucket}/${key}`;
  if (q.has('tagging')) return [{ action: method === 'GET' ? 's3:GetObjectTagging' : 's3:PutObjectTagging', resource }];
  if (method === 'GET' || method === 'HEAD') return [{ action: 's3:GetObject', resource }];
  if (method === 'DELETE') return [{ action: q.has('uploadId') ? 's3:AbortMultipartUpload' : 's3:DeleteObject', resource }];
  return [{ action: 's3:PutObject', resource }, ...(tagged ? [{ action: 's3:PutObjectTagging', resource }] : [])];
}
