/** Helpers for end-to-end tests on the local stack: signed sends and ledger/receipt reads. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { scanAll } from '../../adapters/table-scan';
import { lowCost } from '../../core/config/low-cost';
import type { LedgerItem } from '../../core/model';
import baseConfig from '../../hookledger.config';
import { createLogger } from '../../lambdas/shared/logger';
import { type LocalStack, type LocalStackOptions, queueDepth as queueDepthOf, startLocalStack } from '../../local/stack';
import { signedHeaders } from './factories';

/**
 * The configuration profile the suite runs on: unset, each test's own configuration; `low-cost`, the
 * same with core/config/low-cost.ts applied (vitest.config.ts's `low-cost` project runs the guarantee
 * tests so: crashes, leases, replay, reconcile and erasure on the documented lower-cost configuration).
 */
export const TEST_PROFILE = process.env.HOOKLEDGER_TEST_PROFILE;

/** An in-memory stack on free ports with its own secrets file; quiet logs; the suite's profile applied. */
export function startTestStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hookledger-e2e-'));
  const config = TEST_PROFILE === 'low-cost' ? lowCost(options.config ?? baseConfig) : options.config;
  return startLocalStack({
    dataDir: null,
    httpPort: 0,
    secretsFile: path.join(dir, 'secrets.json'),
    logger: (service) => createLogger(service, { silent: true }),
    backoffBaseMs: 1000,
    ttlSweepIntervalMs: null,
    ...options,
    ...(config ? { config } : {}),
  });
}

export async function send(stack: LocalStack, event: object, options: { source?: string; msgId?: string; secret?: string } = {}) {
  const source = options.source ?? 'platform';
  const secret = options.secret ?? (await stack.secrets.get(source)).current;
  const body = JSON.stringify(event);
  const res = await fetch(stack.webhookUrl(source), {
    method: 'POST',
    headers: signedHeaders(body, { secret, at: Date.now(), msgId: options.msgId ?? `msg_${(event as { id?: string }).id ?? 'x'}` }),
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export async function ledgerRows(stack: LocalStack): Promise<LedgerItem[]> {
  return scanAll<LedgerItem>(stack.handlers.ddb, { TableName: stack.resources.tables.ledger, ConsistentRead: true });
}

export async function doneRows(stack: LocalStack): Promise<LedgerItem[]> {
  return (await ledgerRows(stack)).filter((r) => r.state === 'done');
}

/** Sum of units per tenant over done rows. */
export function unitsByTenant(rows: LedgerItem[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const row of rows) if (row.state === 'done') out[row.tenantId] = (out[row.tenantId] ?? 0) + (row.units ?? 0);
  return out;
}

export function queueDepth(stack: LocalStack, url: string): Promise<number> {
  return queueDepthOf(stack.handlers.sqs, url);
}
