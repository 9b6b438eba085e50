/** Lambda entry for intake. Configuration and clients are built once, at cold start. */
import { MetricUnit, Metrics } from '@aws-lambda-powertools/metrics';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { bundledConfig } from '../shared/bundled-config';
import { createDocumentClient } from '../shared/clients';
import { ENV, requireEnv, requireJsonEnv } from '../shared/env';
import { EventStore } from '../shared/event-store';
import { createLogger } from '../shared/logger';
import { INTAKE_METRIC, METRICS_NAMESPACE } from '../shared/metric-names';
import { SecretsManagerPort } from '../shared/secrets-manager';
import { createIngestHandler } from './app';

const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'hookledger-ingest' });

export const handler = createIngestHandler({
  config: bundledConfig(),
  store: new EventStore({ client: createDocumentClient(), tableName: requireEnv(ENV.eventsTable) }),
  secrets: new SecretsManagerPort({
    client: new SecretsManagerClient({}),
    secretIds: requireJsonEnv(ENV.sourceSecrets),
    payloadHashKeySecretId: requireEnv(ENV.payloadHashKeySecret),
  }),
  logger: createLogger('hookledger-ingest'),
  // One EMF line per request: IntakeRequests by Outcome (the dashboard's intake outcomes widget).
  onOutcome: (outcome) => {
    const metric = metrics.singleMetric();
    metric.addDimension('Outcome', outcome);
    metric.addMetric(INTAKE_METRIC, MetricUnit.Count, 1);
  },
});
