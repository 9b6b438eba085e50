/** Lambda entry for one source's scheduled provider drift check (EventBridge rule; lib/constructs/gap-check.ts). */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { listProviderEndpoints } from '../../adapters/provider-endpoints';
import { ENV, MissingEnvError, requireEnv } from '../../core/env';
import { bundledConfig } from '../shared/bundled-config';
import { createLambdaLogger, flushingLogs } from '../shared/lambda-logger';
import { createProviderDriftMetric } from '../shared/metrics';
import { handlerTracing, traced } from '../shared/tracing';
import { createDriftCheckHandler } from './drift-check-app';

const config = bundledConfig();
const sourceId = requireEnv(ENV.gapSource);
const source = config.sources.find((s) => s.id === sourceId);
if (!source?.gapCheck || !source.events) {
  throw new MissingEnvError(
    `${ENV.gapSource} names "${sourceId}", which is not a source with gapCheck and events in the bundled configuration`,
  );
}
const { gapCheck } = source;
const secrets = new SecretsManagerClient({});
const apiKeySecret = requireEnv(ENV.gapApiKeySecret);

async function readApiKey(): Promise<string> {
  // A secret created without a value has no AWSCURRENT version until one is put.
  const out = await secrets.send(new GetSecretValueCommand({ SecretId: apiKeySecret })).catch((error: unknown) => {
    if ((error as Error)?.name === 'ResourceNotFoundException') return { SecretString: undefined };
    throw error;
  });
  if (!out.SecretString) {
    throw new MissingEnvError(
      `the provider API key of source "${sourceId}" (${apiKeySecret}) has no value yet: put it with aws secretsmanager put-secret-value`,
    );
  }
  return out.SecretString;
}

const logger = createLambdaLogger('hookledger-drift');
// With `tracing: 'xray'` only: the check in one trace, its Secrets Manager read traced.
const tracing = handlerTracing(config, 'hookledger-drift', [secrets]);

const checkDriftOnce = flushingLogs(
  logger,
  createDriftCheckHandler({
    sourceId,
    expected: { url: requireEnv(ENV.driftWebhookUrl), events: source.events },
    logger,
    publish: createProviderDriftMetric(requireEnv(ENV.stackName), sourceId),
    // The key is read every run: an operator who puts or rotates it needs no redeploy.
    list: async () =>
      listProviderEndpoints({
        api: gapCheck.api,
        apiKey: await readApiKey(),
        credential: `the secret ${apiKeySecret}`,
        ...(gapCheck.baseUrl ? { baseUrl: gapCheck.baseUrl } : {}),
        ...(gapCheck.hook ? { scope: gapCheck.hook.replace(/\/hooks\/\d+$/, '') } : {}),
      }),
  }),
);

export const handler = traced(tracing, checkDriftOnce);
