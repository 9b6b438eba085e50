/** Small fixture factories shared by the tests. */
import { marshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyEventV2, DynamoDBRecord, SQSRecord } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import type { DeliveryMessage } from '../../core/model';

export const TEST_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
/** The payload-hash key of the tests' "deployment". */
export const TEST_HASH_KEY = Buffer.from('hk_test_5tQw9Lr2Vx8Nc4Bz7Hy1Kp3Md6Fg0Js', 'utf8');
export const OLD_SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
export const NOW = Date.parse('2026-11-29T12:00:00Z');

export interface PlatformEvent {
  id: string;
  type: string;
  tenant_id: string;
  key_id: string;
  created?: number;
  data?: Record<string, unknown>;
}

export function platformEvent(overrides: Partial<PlatformEvent> = {}): PlatformEvent {
  return {
    id: 'evt_01J8K7M2Q4',
    type: 'payment.succeeded',
    tenant_id: 'tenant_204',
    key_id: 'key_42',
    created: Math.floor(NOW / 1000),
    data: { amount: 4200, currency: 'eur', card_last4: '4242' },
    ...overrides,
  };
}

/** Signs with the Standard Webhooks reference library, as a provider would. */
export function signedHeaders(body: string, options: { secret?: string; msgId?: string; at?: number } = {}) {
  const at = options.at ?? NOW;
  const msgId = options.msgId ?? 'msg_2Kp7QeWd9';
  const signature = new Webhook(options.secret ?? TEST_SECRET).sign(msgId, new Date(at), body);
  return {
    'content-type': 'application/json',
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at / 1000)),
    'webhook-signature': signature,
  };
}

export function httpEvent(
  source: string,
  body: string | Buffer,
  headers: Record<string, string>,
  options: { base64?: boolean } = {},
): APIGatewayProxyEventV2 {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const base64 = options.base64 ?? Buffer.isBuffer(body);
  return {
    version: '2.0',
    routeKey: 'POST /hooks/{source}',
    rawPath: `/hooks/${source}`,
    rawQueryString: '',
    headers,
    pathParameters: { source },
    isBase64Encoded: base64,
    body: base64 ? bytes.toString('base64') : bytes.toString('utf8'),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method: 'POST', path: `/hooks/${source}`, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'req-1',
      routeKey: 'POST /hooks/{source}',
      stage: '$default',
      time: '29/Nov/2026:12:00:00 +0000',
      timeEpoch: NOW,
    },
  };
}

export function streamRecord(
  item: Record<string, unknown>,
  sequence: string,
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE' = 'INSERT',
): DynamoDBRecord {
  return {
    eventID: `id-${sequence}`,
    eventName,
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    dynamodb: {
      Keys: marshall({ pk: item.pk }) as never,
      NewImage: marshall(item, { removeUndefinedValues: true }) as never,
      SequenceNumber: sequence,
      StreamViewType: 'NEW_IMAGE',
    },
  };
}

export function deliveryMessage(overrides: Partial<DeliveryMessage> = {}): DeliveryMessage {
  return {
    v: 2,
    source: 'platform',
    eventId: 'evt_01J8K7M2Q4',
    eventType: 'payment.succeeded',
    tenantId: 'tenant_204',
    keyId: 'key_42',
    consumerId: 'billing-meter',
    receivedAt: NOW,
    // billing-meter's view of platformEvent(), as the fan-out narrows it.
    payload: { id: 'evt_01J8K7M2Q4', type: 'payment.succeeded', tenant_id: 'tenant_204', data: { amount: 4200, currency: 'eur' } },
    ...overrides,
  };
}

export function sqsRecord(message: DeliveryMessage, options: { messageId?: string; receiveCount?: number } = {}): SQSRecord {
  return {
    messageId: options.messageId ?? `m-${message.eventId}`,
    receiptHandle: `rh-${options.messageId ?? message.eventId}`,
    body: JSON.stringify(message),
    attributes: {
      ApproximateReceiveCount: String(options.receiveCount ?? 1),
      SentTimestamp: String(NOW),
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: String(NOW),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${message.consumerId}`,
    awsRegion: 'us-east-1',
  };
}
