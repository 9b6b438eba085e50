/**
 * What a team's HTTP endpoint does with hookledger's deliveries, for the HTTP-destination tests: read
 * the body, verify its Standard Webhooks signature with the `standardwebhooks` package (any one of the
 * receiver's secrets: during a rotation it may hold the old and the new), and read the headers.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Webhook } from 'standardwebhooks';
import type { HookledgerConfigInput } from '../../core/config/schema';

/** One header's value (the first, when repeated), or '' when absent. */
export const headerOf = (headers: IncomingHttpHeaders, name: string): string => {
  const value = headers[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
};

/** Whether `body` is signed by one of `secrets` as the request's webhook-* headers say. */
export function verifiedWith(secrets: readonly string[], body: string, headers: IncomingHttpHeaders): boolean {
  return secrets.some((secret) => {
    try {
      new Webhook(secret).verify(body, {
        'webhook-id': headerOf(headers, 'webhook-id'),
        'webhook-timestamp': headerOf(headers, 'webhook-timestamp'),
        'webhook-signature': headerOf(headers, 'webhook-signature'),
      });
      return true;
    } catch {
      return false;
    }
  });
}

/** The request's whole body as text. */
export async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The HTTP-destination consumer the tests deliver to: crm-sync, `payment.*` narrowed to four fields, its breaker at 3 failures. */
export const crmSyncConsumer = (url: string): HookledgerConfigInput['consumers'][number] => ({
  id: 'crm-sync',
  kind: 'http',
  url,
  subscribes: ['payment.*'],
  fields: ['id', 'type', 'tenant_id', 'data.amount'],
  maxReceiveCount: 5,
  visibilityTimeoutSeconds: 30,
  timeoutSeconds: 5,
  http: { timeoutMs: 2000, ratePerSecond: 100, permanentStatuses: [422], breakAfterFailures: 3 },
});
