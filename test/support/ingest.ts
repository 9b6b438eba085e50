/**
 * Intake as its unit tests build it: the real handler (createIngestHandler) over the real event
 * stores on a document client that the test's aws-sdk-client-mock answers, every scheme in the
 * registry, a secrets port serving each source's signing secret (and recording which sources were
 * read), a capturing logger and the fixed clock of the factories.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createDocumentClient } from '../../adapters/clients';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import type { SecretsPort } from '../../adapters/secrets';
import type { HookledgerConfig } from '../../core/config/schema';
import { ALL_SCHEMES } from '../../core/schemes';
import type { VerificationKeysPort } from '../../core/schemes/types';
import { createIngestHandler } from '../../lambdas/ingest/app';
import { httpEvent, NOW, TEST_HASH_KEY } from './factories';
import { capturingLogger } from './logs';

export interface MockedIntakeOptions {
  readonly config: HookledgerConfig;
  /** The source's current signing secret (or credentials). */
  readonly secretOf: (sourceId: string) => string;
  readonly verificationKeys?: VerificationKeysPort;
  /** Default: the factories' fixed NOW. */
  readonly clock?: () => number;
}

export function mockedIntake(options: MockedIntakeOptions) {
  const { logger, lines } = capturingLogger();
  const outcomes: string[] = [];
  /** The sources whose secrets were read (get and refresh), in order. */
  const reads: string[] = [];
  const read = async (sourceId: string) => {
    reads.push(sourceId);
    return { current: options.secretOf(sourceId) };
  };
  const secrets: SecretsPort = { payloadHashKey: async () => TEST_HASH_KEY, get: read, refresh: read };
  const handler = createIngestHandler({
    schemes: ALL_SCHEMES,
    config: options.config,
    store: intakeStore(eventStores({ client: createDocumentClient({ region: 'us-east-1' }), tableName: 'events' })),
    secrets,
    logger,
    clock: options.clock ?? (() => NOW),
    onOutcome: (o) => outcomes.push(o),
    ...(options.verificationKeys ? { verificationKeys: options.verificationKeys } : {}),
  });
  return { handler, lines, outcomes, reads };
}

/** A request as API Gateway hands it over for https://hooks.example.com/hooks/<source>?<query>. */
export function hooksRequest(source: string, body: string, headers: Record<string, string>, query = ''): APIGatewayProxyEventV2 {
  const event = httpEvent(source, body, { host: 'hooks.example.com', 'x-forwarded-proto': 'https', ...headers });
  return query === '' ? event : { ...event, rawQueryString: query };
}

/** A Twilio message-status callback's form fields (the same MessageSid throughout the tests). */
export const TWILIO_STATUS_FORM = {
  AccountSid: 'AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c',
  MessageSid: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
  MessageStatus: 'delivered',
  MessagingServiceSid: 'MG9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d',
  To: '+14155550199',
} as const;
