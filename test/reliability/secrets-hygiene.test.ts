/**
 * Secrets hygiene on the local stack: intake with good and bad signatures, a signing-secret rotation
 * (the operator's rotateSecret over the secrets file), and the consumers, all with every log line
 * captured (each service's Powertools logger, the console, and raw stdout/stderr writes), plus every
 * HTTP response body and every error message stored on the ledger. No secret value (current or
 * previous, with or without `whsec_`), no `webhook-signature` header value and no raw payload may
 * appear in any of them; the event and tenant ids must.
 */
import { randomBytes } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import config from '../../hookledger.config';
import type { LocalStack } from '../../local/stack';
import { rotateSecret } from '../../ops/secrets';
import { signedHeaders } from '../support/factories';
import { capturingLogger } from '../support/logs';
import { ledgerRows, startTestStack } from '../support/stack';

const CARD_NUMBER = '4929381745620917';
const MEMO = 'MEMO-do-not-log-7f3a9c';

/** Every line anything wrote while the stack ran. */
const captured: { where: string; text: string }[] = [];
const loggerLines: string[][] = [];
let restore: (() => void) | undefined;

function captureProcessOutput(): () => void {
  const writes = { out: process.stdout.write, err: process.stderr.write };
  const consoleMethods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
  const saved = consoleMethods.map((m) => [m, console[m]] as const);
  const record = (where: string) => (chunk: unknown) => {
    captured.push({ where, text: typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8') });
    return true;
  };
  process.stdout.write = record('stdout') as typeof process.stdout.write;
  process.stderr.write = record('stderr') as typeof process.stderr.write;
  for (const m of consoleMethods) {
    console[m] = (...args: unknown[]) => {
      captured.push({ where: `console.${m}`, text: args.map((a) => (typeof a === 'string' ? a : safeJson(a))).join(' ') });
    };
  }
  return () => {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    for (const [m, fn] of saved) console[m] = fn as never;
  };
}

function safeJson(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}\n${value.stack ?? ''}`;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

let stack: LocalStack;
beforeAll(async () => {
  restore = captureProcessOutput();
  stack = await startTestStack({
    logger: (service) => {
      const { logger, lines } = capturingLogger(service);
      loggerLines.push(lines);
      return logger;
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  restore?.();
});

interface Sent {
  readonly eventId: string;
  readonly body: string;
  readonly signature: string;
  readonly status: number;
  readonly response: string;
}

function payload(id: string, tenant: 'tenant_204' | 'tenant_311', extra: Record<string, unknown> = {}) {
  return {
    id,
    type: 'payment.succeeded',
    tenant_id: tenant,
    key_id: tenant === 'tenant_204' ? 'key_42' : 'key_77',
    created: Math.floor(Date.now() / 1000),
    data: { amount: 4200, currency: 'eur', card_number: CARD_NUMBER, memo: MEMO },
    ...extra,
  };
}

async function post(
  eventId: string,
  body: string,
  options: { secret: string; signedBody?: string; at?: number; drop?: string },
): Promise<Sent> {
  const headers: Record<string, string> = signedHeaders(options.signedBody ?? body, {
    secret: options.secret,
    msgId: `msg_${eventId}`,
    at: options.at ?? Date.now(),
  });
  if (options.drop) delete headers[options.drop];
  const res = await fetch(stack.webhookUrl('platform'), { method: 'POST', headers, body });
  return { eventId, body, signature: headers['webhook-signature'] ?? '', status: res.status, response: await res.text() };
}

const otherSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

describe('secrets hygiene', () => {
  it('logs ids but never a secret, a signature or the payload, across intake, rejection, rotation and consumers', async () => {
    const before = await stack.secrets.get('platform');
    const wrong = [otherSecret(), otherSecret()];
    const sent: Sent[] = [];
    const json = (p: object) => JSON.stringify(p);

    // Intake before the rotation: one good event, and the ways a request is refused.
    sent.push(await post('evt_hyg_01', json(payload('evt_hyg_01', 'tenant_204')), { secret: before.current }));
    sent.push(await post('evt_hyg_02', json(payload('evt_hyg_02', 'tenant_311')), { secret: wrong[0]! }));
    const tampered = json(payload('evt_hyg_03', 'tenant_204'));
    sent.push(await post('evt_hyg_03', tampered.replace('4200', '4201'), { secret: before.current, signedBody: tampered }));
    sent.push(await post('evt_hyg_04', json(payload('evt_hyg_04', 'tenant_204')), { secret: before.current, at: Date.now() - 600_000 }));
    sent.push(await post('evt_hyg_05', json(payload('evt_hyg_05', 'tenant_204')), { secret: before.current, drop: 'webhook-signature' }));
    sent.push(await post('evt_hyg_06', json(payload('evt_hyg_06', 'tenant_204', { tenant_id: 204.5 })), { secret: before.current }));
    // A consumer failure: risk-evaluator refuses a non-numeric amount (PermanentError -> its DLQ).
    const odd = payload('evt_hyg_07', 'tenant_311');
    sent.push(await post('evt_hyg_07', json({ ...odd, data: { ...odd.data, amount: `${CARD_NUMBER}` } }), { secret: before.current }));

    // Rotation: the new secret signs, the previous one still verifies, a stranger's does not.
    await rotateSecret(
      {
        ddb: stack.handlers.ddb,
        tables: stack.resources.tables,
        config,
        operator: 'hygiene-test',
        rotator: {
          kind: 'local',
          rotate: (source, overlapMs) => stack.secrets.rotate(source, overlapMs),
          retire: (source) => stack.secrets.retire(source),
        },
      },
      { source: 'platform' },
    );
    const after = await stack.secrets.get('platform');
    expect(after.previous).toBe(before.current);
    sent.push(await post('evt_hyg_08', json(payload('evt_hyg_08', 'tenant_204')), { secret: after.current }));
    sent.push(await post('evt_hyg_09', json(payload('evt_hyg_09', 'tenant_311')), { secret: before.current }));
    sent.push(await post('evt_hyg_10', json(payload('evt_hyg_10', 'tenant_311')), { secret: wrong[1]! }));
    await stack.drain();

    expect(sent.map((s) => [s.eventId, s.status])).toEqual([
      ['evt_hyg_01', 202],
      ['evt_hyg_02', 401],
      ['evt_hyg_03', 401],
      ['evt_hyg_04', 401],
      ['evt_hyg_05', 401],
      ['evt_hyg_06', 400],
      ['evt_hyg_07', 202],
      ['evt_hyg_08', 202],
      ['evt_hyg_09', 202],
      ['evt_hyg_10', 401],
    ]);

    // Everything that could carry a leak.
    const rows = await ledgerRows(stack);
    const audits =
      (
        await stack.handlers.ddb.send(
          new ScanCommand({
            TableName: stack.resources.tables.events,
            FilterExpression: 'kind = :audit',
            ExpressionAttributeValues: { ':audit': 'audit' },
          }),
        )
      ).Items ?? [];
    const texts: { where: string; text: string }[] = [
      ...captured,
      ...loggerLines.flat().map((text) => ({ where: 'logger', text })),
      ...sent.map((s) => ({ where: `response ${s.eventId}`, text: s.response })),
      ...rows.flatMap((r) => (r.errors ?? []).map((e) => ({ where: `ledger error ${r.pk}`, text: `${e.category} ${e.message}` }))),
      ...audits.map((a) => ({ where: 'audit item', text: JSON.stringify(a) })),
    ];
    const secrets = [before.current, after.current, ...wrong];
    const forbidden: [string, string][] = [
      ...secrets.flatMap((s) => [
        ['secret', s] as [string, string],
        ['secret without whsec_', s.replace(/^whsec_/, '')] as [string, string],
      ]),
      ...sent
        .filter((s) => s.signature)
        .flatMap((s) => [
          [`webhook-signature of ${s.eventId}`, s.signature] as [string, string],
          [`signature bytes of ${s.eventId}`, s.signature.replace(/^v1,/, '')] as [string, string],
        ]),
      ['payload-hash key', (await stack.secrets.payloadHashKey()).toString('utf8')],
      ['card number', CARD_NUMBER],
      ['payload memo', MEMO],
      ...sent.map((s) => [`raw body of ${s.eventId}`, s.body] as [string, string]),
    ];
    const leaks = texts.flatMap(({ where, text }) =>
      forbidden.filter(([, value]) => text.includes(value)).map(([what]) => `${what} in ${where}: ${text.slice(0, 160)}`),
    );

    const logText = [...captured.map((c) => c.text), ...loggerLines.flat()].join('\n');
    restore?.();
    restore = undefined;
    console.log(
      `[secrets-hygiene] requests=${sent.length} accepted=${sent.filter((s) => s.status === 202).length} refused=${sent.filter((s) => s.status >= 400).length} ` +
        `logger-lines=${loggerLines.flat().length} console/stdout/stderr-writes=${captured.length} ledger-errors=${rows.reduce((n, r) => n + (r.errors?.length ?? 0), 0)} ` +
        `texts-checked=${texts.length} forbidden-values=${forbidden.length} leaks=${leaks.length}`,
    );
    expect(leaks).toEqual([]);

    // The ids do appear: an operator can follow every accepted event through the logs.
    for (const id of ['evt_hyg_01', 'evt_hyg_07', 'evt_hyg_08', 'evt_hyg_09']) expect(logText, id).toContain(id);
    for (const tenant of ['tenant_204', 'tenant_311']) expect(logText).toContain(tenant);
    // And the capture saw the failure paths, so the absence above means something.
    expect(logText).toContain('webhook rejected');
    expect(logText).toContain('signature_mismatch');
    expect(logText).toContain('delivery failed');
    expect(rows.find((r) => r.eventId === 'evt_hyg_07' && r.consumerId === 'risk-evaluator')).toMatchObject({ state: 'quarantined' });
  }, 90_000);

  // V8's SyntaxError text quotes the body around the bad token; intake answers with the position only.
  it('answers a signed but malformed body without quoting the payload in the error message', async () => {
    const secret = (await stack.secrets.get('platform')).current;
    // V8 quotes ten characters either side of the bad token: here the card number's first nine digits.
    const body = `{"id":"evt_hyg_20","card_number":x${CARD_NUMBER}}`;
    const res = await post('evt_hyg_20', body, { secret });
    expect(res.status).toBe(400);
    expect(res.response).not.toContain(CARD_NUMBER.slice(0, 6));
    expect(JSON.parse(res.response)).toEqual({ error: 'invalid_json', message: 'body is not valid JSON' });
  });
});
