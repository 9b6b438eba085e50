/**
 * `sources connect | remote` (ops/connect/connect.ts) for Square and Paddle sources against their
 * registration stand-ins, the audit on DynamoDB Local and a recording rotator in place of the local
 * secrets file: connect creates one subscription (destination) with the source's events and stores the
 * provider's signature key (endpoint secret key) through `secrets rotate`'s path; a second connect
 * changes nothing; remote reports injected drift and connect repairs it keeping the secret; a secret
 * that cannot be stored deletes the new subscription again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import defaults from '../../hookledger.config';
import { type ConnectDeps, connectSource, remoteSource } from '../../ops/connect/connect';
import { OperationFailedError } from '../../ops/errors';
import { createTable, startTestDynamo } from '../support/dynamo';
import {
  type PaddleSetting,
  paddleRegistrations,
  type RegistrationStandIn,
  type SquareSubscription,
  squareRegistrations,
} from '../support/provider-registrations-sq-paddle';

const TABLE = 'connect-square-paddle';
const SQUARE_KEY = 'EAAAl7Qm2xV9pLm4sq_204';
const PADDLE_KEY = 'pdl_live_apikey_01j9x7m2q4_204';
const SIGNATURE_KEY = 'sq0wss-Kf8b2Qx9Lm4RtY7uI0pAs';
const PADDLE_SECRET = 'pdl_ntfset_01j9x7m2q4_Kf8b2Qx9Lm4RtY7uI0pAs';
const TUNNEL = 'https://tunnel-204.example.com';

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let square: RegistrationStandIn<SquareSubscription>;
let paddle: RegistrationStandIn<PaddleSetting>;
let config: HookledgerConfig;
/** What the rotator was given: the source and the new current secret. */
const rotated: [string, string | undefined][] = [];
let refuseToStore = false;

function deps(): ConnectDeps {
  return {
    ops: { ddb: dynamo.doc, tables: { events: TABLE, ledger: TABLE }, operator: 'connect-204', config },
    target: {
      kind: 'local',
      label: 'local (stand-ins)',
      webhookUrl: (id) => `http://127.0.0.1:3900/hooks/${id}`,
      apiKeyLocation: (id) => `sources.${id}.apiKey in .hookledger/secrets.json`,
      providerApiKey: async (id) => (id.startsWith('square') ? SQUARE_KEY : PADDLE_KEY),
      rotator: {
        kind: 'local',
        rotate: async (source, _overlapMs, value) => {
          if (refuseToStore) throw new OperationFailedError('the secrets file is read-only');
          rotated.push([source, value]);
          return {};
        },
        retire: async () => ({ retired: false }),
      },
      signingSecret: async () => 'unused_for_provider_issued_secrets',
    },
  };
}

beforeAll(async () => {
  dynamo = await startTestDynamo();
  await createTable(dynamo.client, TABLE);
  square = await squareRegistrations(SQUARE_KEY, [SIGNATURE_KEY, 'sq0wss-second-key']);
  paddle = await paddleRegistrations(PADDLE_KEY, [PADDLE_SECRET]);
  config = defineConfig({
    sources: [
      ...defaults.sources,
      {
        id: 'square-shop',
        provider: 'square',
        attribution: { keyId: { body: 'data.id' } },
        events: ['payment.created', 'refund.created'],
        gapCheck: { api: 'square', baseUrl: square.url },
      },
      {
        id: 'paddle-billing',
        provider: 'paddle',
        attribution: { tenantId: { body: 'data.customer_id' }, keyId: { body: 'data.id' } },
        events: ['transaction.completed'],
        gapCheck: { api: 'paddle', baseUrl: paddle.url },
      },
    ],
    consumers: defaults.consumers.filter((c) => c.id === 'audit-writer'),
  });
}, 60_000);
afterAll(async () => {
  await square?.close();
  await paddle?.close();
  await dynamo?.stop();
});

describe('sources connect on square', () => {
  it('creates one subscription with the source events and stores its signature key as the current secret', async () => {
    const result = await connectSource(deps(), { source: 'square-shop', url: TUNNEL });
    expect(result).toMatchObject({ action: 'created', secret: 'stored', dryRun: false });
    expect(square.endpoints.map((s) => [s.notification_url, s.event_types, s.enabled])).toEqual([
      [`${TUNNEL}/hooks/square-shop`, ['payment.created', 'refund.created'], true],
    ]);
    expect(rotated).toEqual([['square-shop', SIGNATURE_KEY]]);
    expect(result.rotation?.value).toBe('provided');
  });

  it('changes nothing on a second connect', async () => {
    const result = await connectSource(deps(), { source: 'square-shop', url: TUNNEL });
    expect(result).toMatchObject({ action: 'unchanged', secret: 'none' });
    expect(square.endpoints).toHaveLength(1);
    expect(rotated).toHaveLength(1);
  });

  it('reports an event type dropped and the subscription disabled at Square, and connect repairs both keeping the key', async () => {
    square.endpoints[0]!.event_types = ['payment.created'];
    square.endpoints[0]!.enabled = false;
    const remote = await remoteSource(deps(), { source: 'square-shop', url: TUNNEL });
    expect(remote.drift).toEqual([{ kind: 'missing_events', events: ['refund.created'] }, { kind: 'disabled' }]);
    const repaired = await connectSource(deps(), { source: 'square-shop', url: TUNNEL });
    expect(repaired).toMatchObject({ action: 'updated', secret: 'kept' });
    expect(square.endpoints.map((s) => [s.event_types, s.enabled])).toEqual([[['payment.created', 'refund.created'], true]]);
    expect(rotated).toHaveLength(1);
  });
});

describe('sources connect on paddle', () => {
  it('deletes the new destination again when its secret key cannot be stored, and says nothing changed', async () => {
    refuseToStore = true;
    try {
      const error = await connectSource(deps(), { source: 'paddle-billing', url: TUNNEL }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OperationFailedError);
      expect((error as Error).message).toContain('deleted the new paddle endpoint ntfset_01j00000000000000000000001 again');
      expect((error as Error).message).not.toContain(PADDLE_SECRET);
      expect(paddle.endpoints).toEqual([]);
    } finally {
      refuseToStore = false;
    }
  });
});
