/** Lambda entry for one source's scheduled provider gap check (EventBridge rule; lib/constructs/gap-check.ts). */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createDocumentClient } from '../../adapters/clients';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import { s3PayloadBlobs } from '../../adapters/payload-blobs';
import { providerEvents } from '../../adapters/provider-events';
import { ENV, MissingEnvError, requireEnv } from '../../core/env';
import { HOUR_MS } from '../../core/model';
import { bundledConfig } from '../shared/bundled-config';
import { createLambdaLogger, flushingLogs } from '../shared/lambda-logger';
import { createProviderGapsMetric } from '../shared/metrics';
import { handlerTracing, traced } from '../shared/tracing';
import { createGapCheckHandler } from './gap-check-app';
import { gapRecovery } from './gap-recovery';
import { checkGaps } from './provider-gaps';

const config = bundledConfig();
const sourceId = requireEnv(ENV.gapSource);
const source = config.sources.find((s) => s.id === sourceId);
if (!source?.gapCheck)
  throw new MissingEnvError(`${ENV.gapSource} names "${sourceId}", which is not a source with gapCheck in the bundled configuration`);
const gapCheck = source.gapCheck;
const secrets = new SecretsManagerClient({});
const ddb = createDocumentClient();
const tables = { events: requireEnv(ENV.eventsTable), ledger: requireEnv(ENV.ledgerTable) };
const apiKeySecret = requireEnv(ENV.gapApiKeySecret);
/** Read once per container when recovering: it never changes for the life of a deployment. */
let hashKey: Promise<Buffer> | undefined;

async function readSecret(secretId: string, what: string): Promise<string> {
  // A secret created without a value has no AWSCURRENT version until one is put.
  const out = await secrets.send(new GetSecretValueCommand({ SecretId: secretId })).catch((error: unknown) => {
    if ((error as Error)?.name === 'ResourceNotFoundException') return { SecretString: undefined };
    throw error;
  });
  if (!out.SecretString)
    throw new MissingEnvError(`${what} (${secretId}) has no value yet: put it with aws secretsmanager put-secret-value`);
  return out.SecretString;
}

const logger = createLambdaLogger('hookledger-gaps');
// With `tracing: 'xray'` only: the check in one trace, its table and Secrets Manager reads traced.
const tracing = handlerTracing(config, 'hookledger-gaps', [ddb, secrets]);

const checkGapsOnce = flushingLogs(
  logger,
  createGapCheckHandler({
    sourceId,
    windowMs: gapCheck.everyHours * HOUR_MS,
    logger,
    publish: createProviderGapsMetric(requireEnv(ENV.stackName), sourceId),
    run: async (window) => {
      // Read every run: an operator who puts or rotates the key needs no redeploy.
      const provider = providerEvents({
        api: gapCheck.api,
        apiKey: await readSecret(apiKeySecret, `the provider API key of source "${sourceId}"`),
        credential: `the secret ${apiKeySecret}`,
        ...(gapCheck.baseUrl ? { baseUrl: gapCheck.baseUrl } : {}),
        ...(gapCheck.hook ? { hook: gapCheck.hook } : {}),
        ...(gapCheck.destination ? { destination: gapCheck.destination } : {}),
        maxPages: gapCheck.maxPages,
        maxEvents: gapCheck.maxEvents,
      });
      const recover = gapCheck.recover
        ? gapRecovery(
            {
              config,
              store: intakeStore(
                eventStores({
                  client: ddb,
                  tableName: tables.events,
                  shardsOf: (tenantId) => config.windowIndex.hotTenants[tenantId] ?? 1,
                  blobs: s3PayloadBlobs(requireEnv(ENV.payloadBucket)),
                }),
              ),
              payloadHashKey: () =>
                (hashKey ??= readSecret(requireEnv(ENV.payloadHashKeySecret), 'the payload-hash key').then((v) => Buffer.from(v, 'utf8'))),
              provider,
            },
            source,
          )
        : undefined;
      return checkGaps({ ddb, tables, provider }, { source, ...window, ...(recover ? { recover } : {}) });
    },
  }),
);

export const handler = traced(tracing, checkGapsOnce);
