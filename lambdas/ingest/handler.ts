/** Lambda entry for intake. Configuration and clients are built once, at cold start. */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { bundledConfig } from '../shared/bundled-config';
import { createDocumentClient } from '../shared/clients';
import { ENV, requireEnv, requireJsonEnv } from '../shared/env';
import { EventStore } from '../shared/event-store';
import { createLogger } from '../shared/logger';
import { createIntakeMetrics } from '../shared/intake-metrics';
import { SecretsManagerPort } from '../shared/secrets-manager';
import { createIngestHandler } from './app';

export const handler = createIngestHandler({
  config: bundledConfig(),
  store: new EventStore({ client: createDocumentClient(), tableName: requireEnv(ENV.eventsTable) }),
  secrets: new SecretsManagerPort({
    client: new SecretsManagerClient({}),
    secretIds: requireJsonEnv(ENV.sourceSecrets),
    payloadHashKeySecretId: requireEnv(ENV.payloadHashKeySecret),
  }),
  logger: createLogger('hookledger-ingest'),
  // One EMF line per request: IntakeRequests by Stack and Outcome (the dashboard's intake outcomes widget).
  onOutcome: createIntakeMetrics(requireEnv(ENV.stackName)),
});
