/**
 * Waiting on conditions, not clocks: a scenario waits for the event it needs (a takeover on the
 * ledger, a message in a queue), so it holds on a loaded machine and ends as soon as it may.
 */
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { LedgerItem } from '../../core/model';

/** Polls `probe` every 50 ms until it returns something other than undefined; fails after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The tables of a local stack (LocalStack and the reliability suites' FaultStack alike). */
export interface LedgerSource {
  readonly handlers: { readonly ddb: DynamoDBDocumentClient };
  readonly resources: { readonly tables: { readonly ledger: string } };
}

/** One delivery's ledger row by its `ledgerKey` (the handle's `idempotencyKey`); undefined before its first claim. */
export async function ledgerRow(stack: LedgerSource, key: string): Promise<LedgerItem | undefined> {
  const out = await stack.handlers.ddb.send(
    new GetCommand({ TableName: stack.resources.tables.ledger, Key: { pk: key }, ConsistentRead: true }),
  );
  return out.Item as LedgerItem | undefined;
}

/**
 * Resolves once a worker that claimed after `attempt` has acknowledged the delivery: the takeover a
 * lease scenario is about, seen on the ledger instead of assumed after sleeping past the lease.
 * The default deadline is generous: the takeover itself waits out the queue's visibility timeout.
 */
export function takeoverAcknowledged(stack: LedgerSource, key: string, attempt: number, timeoutMs = 30_000): Promise<LedgerItem> {
  return waitFor(
    `${key}: a takeover after attempt ${attempt} to acknowledge`,
    async () => {
      const row = await ledgerRow(stack, key);
      return row?.state === 'done' && (row.ackAttempt ?? 0) > attempt ? row : undefined;
    },
    timeoutMs,
  );
}
