/**
 * Which stack the operations run on (for the CLI and the console alike), and the clients for it.
 *
 *   --stack <name>  a deployed stack: its CloudFormation outputs name the tables, queues, webhook
 *                   URL and secrets; credentials and region come from the usual AWS chain.
 *   (default)       the local stack described by .hookledger/state.json (HOOKLEDGER_STATE
 *                   overrides the path), written by `npm start` while it runs.
 */
import http from 'node:http';
import path from 'node:path';
import { createDocumentClient } from '../adapters/clients';
import { lazyStreamBatches, onFirstUse } from '../adapters/lazy';
import type { ErasableBlobs, PayloadBlobs } from '../adapters/payload-blobs';
import { UnknownSecretError } from '../adapters/secrets';
import type { StreamBatchPort } from '../adapters/stream-batch';
import { apiKeyPath } from '../core/gaps';
import type { SignatureFailureCounts } from '../core/metrics';
import type { AccessKey } from '../local/credentials';
import { DEFAULT_SECRETS_FILE, FileSecrets } from '../local/secrets-file';
import {
  configChangedNotice,
  DEFAULT_STATE_FILE,
  isProcessAlive,
  type LocalStackState,
  readStackCredentials,
  readState,
  StateFileError,
  webhookUrlFor,
} from '../local/state';
// Only the local stack's client and state modules: local/wiring.ts would load the whole pipeline
// (ingest, fan-out, consumer runtime) just to build a document client. The tables' and queues'
// clients only: S3 and Streams (local/clients.ts) load when a command first uses them.
import { localDynamoClient, localSqsClient } from '../local/store-clients';
import { TargetError } from './errors';
import { adminPauseControl } from './pause';
import type { Target, TargetOptions, TargetSecrets } from './target-types';

export type { SecretRotationState, Target, TargetOptions, TargetSecrets } from './target-types';

export async function resolveTarget(options: TargetOptions): Promise<Target> {
  // A deployed stack's clients (CloudFormation, Lambda, Secrets Manager) load only for `--stack`.
  return options.stack !== undefined ? (await import('./target-aws')).awsTarget(options, options.stack) : localTarget(options);
}

// --- local --------------------------------------------------------------------------------------

export function statePath(options: Pick<TargetOptions, 'root' | 'env'>): string {
  const fromEnv = (options.env ?? process.env).HOOKLEDGER_STATE;
  return fromEnv ? path.resolve(fromEnv) : path.join(options.root, DEFAULT_STATE_FILE);
}

async function localTarget(options: TargetOptions): Promise<Target> {
  const file = statePath(options);
  const state = await runningStackState(file);
  // The stack's per-start credential: its emulators accept no other key, its admin endpoint no other token.
  const credentials = await readStackCredentials(file, state).catch((error: unknown) => {
    throw error instanceof StateFileError ? new TargetError(error.message, { cause: error }) : error;
  });
  const ddb = createDocumentClient(localDynamoClient(state.dynamo.endpoint, credentials));
  const sqs = localSqsClient(state.sqs.endpoint, credentials);
  const rare = new LocalRareClients(state, credentials);
  const adminFetch = withBearerToken(credentials.adminToken);
  const configChanged = configChangedNotice(state);
  return {
    kind: 'local',
    label: `local stack (${file})`,
    ...(configChanged ? { notices: [configChanged] } : {}),
    ddb,
    sqs,
    tables: state.tables,
    queues: Object.fromEntries(Object.entries(state.queues).map(([id, q]) => [id, { url: q.url, dlqUrl: q.dlqUrl }])),
    fanoutFailureQueueUrl: state.fanoutFailureQueue.url,
    streamBatches: rare.streamBatches,
    webhookUrl: (sourceId) => webhookUrlFor(state, sourceId),
    ...localSecrets(options, state),
    ...localAdmin(file, state, adminFetch),
    payloadBucket: rare.payloadBucket,
    destroy: () => {
      ddb.destroy();
      sqs.destroy();
      rare.destroy();
    },
  };
}

/**
 * The local stack's Streams and S3 clients, built by the first call that uses them: most commands
 * (status, list, show) use neither, and loading their SDK modules would cost each of them the time.
 */
class LocalRareClients {
  private readonly built: { destroy(): void }[] = [];
  private readonly load = onFirstUse(() => import('../local/clients'));
  private readonly blobs = onFirstUse(async () => {
    const [clients, { S3PayloadBlobs }] = await Promise.all([this.load(), import('../adapters/payload-blobs')]);
    // fauxqs serves S3 on its SQS endpoint; the local stack's bucket has a fixed name.
    const client = this.keep(clients.localS3Client(this.state.sqs.endpoint, this.credentials));
    return new S3PayloadBlobs({ client, bucket: clients.LOCAL_PAYLOAD_BUCKET });
  });
  readonly streamBatches: StreamBatchPort = lazyStreamBatches(async () => {
    const [clients, { dynamoStreamBatches }] = await Promise.all([this.load(), import('../adapters/stream-batch')]);
    return dynamoStreamBatches(this.keep(clients.localStreamsClient(this.state.dynamo.endpoint, this.credentials)));
  });
  readonly payloadBucket: PayloadBlobs & ErasableBlobs = {
    get: async (key) => (await this.blobs()).get(key),
    put: async (key, body, contentType, retentionDays) => (await this.blobs()).put(key, body, contentType, retentionDays),
    list: async (prefix) => (await this.blobs()).list(prefix),
    delete: async (keys) => (await this.blobs()).delete(keys),
  };

  constructor(
    private readonly state: LocalStackState,
    private readonly credentials: AccessKey,
  ) {}

  private keep<C extends { destroy(): void }>(client: C): C {
    this.built.push(client);
    return client;
  }

  destroy(): void {
    for (const client of this.built.splice(0)) client.destroy();
  }
}

/** The state file of a local stack that is running, or a TargetError saying how to start one. */
async function runningStackState(file: string): Promise<LocalStackState> {
  let state: LocalStackState | undefined;
  try {
    state = await readState(file);
  } catch (error) {
    if (!(error instanceof StateFileError)) throw error;
    throw new TargetError(`${error.message}; restart the local stack with \`npm start\` so it writes a current one`);
  }
  if (!state) {
    throw new TargetError(
      `no local stack is running (${file} does not exist). Start one with \`npm start\` in another terminal, ` +
        'or pass --stack <name> to use a deployed stack.',
    );
  }
  if (!isProcessAlive(state.pid)) {
    throw new TargetError(`the local stack recorded in ${file} (pid ${state.pid}) is not running any more. Start it with \`npm start\`.`);
  }
  return state;
}

/**
 * The local stack's secrets file: the sources' and HTTP consumers' secrets, the payload-hash key and
 * the provider API keys. It names the configured sources and consumers, so it is opened on first use:
 * a command that reads no secret (status) connects before its configuration is loaded.
 */
function localSecrets(options: TargetOptions, state: LocalStackState): TargetSecrets {
  const secretsPath = state.secretsFile ? path.resolve(options.root, state.secretsFile) : path.join(options.root, DEFAULT_SECRETS_FILE);
  let opened: FileSecrets | undefined;
  const secrets = () =>
    (opened ??= new FileSecrets({
      path: secretsPath,
      sourceIds: options.config.sources.map((s) => s.id),
      consumerIds: options.config.consumers.filter((c) => c.kind === 'http').map((c) => c.id),
    }));
  const consumers = () => secrets().consumerSecrets();
  return {
    signingSecret: async (sourceId) => (await secrets().get(sourceId)).current,
    rotator: {
      kind: 'local',
      rotate: (sourceId, overlapMs, value) => secrets().rotate(sourceId, overlapMs, 'sources', value),
      retire: (sourceId) => secrets().retire(sourceId),
    },
    consumerSecrets: {
      get: (consumerId) => consumers().get(consumerId),
      rotator: { kind: 'local', rotate: (id, overlapMs) => consumers().rotate(id, overlapMs), retire: (id) => consumers().retire(id) },
    },
    payloadHashKey: () => secrets().payloadHashKey(),
    secretRotation: async (sourceId) => {
      const { previous, previousUntil } = await secrets().get(sourceId);
      return { source: sourceId, hasPrevious: previous !== undefined, ...(previousUntil !== undefined ? { previousUntil } : {}) };
    },
    apiKeyLocation: (sourceId) => `${apiKeyPath(sourceId)} in ${secretsPath}`,
    providerApiKey: async (sourceId) => {
      try {
        return await secrets().apiKey(sourceId);
      } catch (error) {
        if (error instanceof UnknownSecretError) throw new TargetError(error.message);
        throw error;
      }
    },
  };
}

/** What the local stack's admin endpoint serves: pausing consumers, and intake's outcome and per-source failure counts. */
function localAdmin(
  file: string,
  state: LocalStackState,
  adminFetch: typeof fetch,
): Pick<Target, 'pauseControl' | 'intakeOutcomes' | 'intakeSignatureFailures'> {
  const noAdmin = async (): Promise<never> => {
    throw new TargetError(`${file} has no adminUrl: this local stack cannot pause consumers; update and restart \`npm start\``);
  };
  // GET /intake (local/admin-server.ts); undefined from a stack without an admin endpoint.
  const intake = async (): Promise<AdminIntake | undefined> => {
    if (!state.adminUrl) return undefined;
    const response = await adminFetch(`${state.adminUrl.replace(/\/+$/, '')}/intake`);
    return response.ok ? ((await response.json()) as AdminIntake) : undefined;
  };
  return {
    pauseControl: state.adminUrl ? adminPauseControl(state.adminUrl, adminFetch) : { pause: noAdmin, resume: noAdmin, paused: noAdmin },
    intakeOutcomes: async () => (await intake())?.outcomes,
    // A stack started before these counts existed answers without them: undefined, and the rule is left out.
    intakeSignatureFailures: async () => (await intake())?.signatureFailures,
  };
}

type AdminIntake = { readonly outcomes?: Record<string, number>; readonly signatureFailures?: SignatureFailureCounts };

/**
 * fetch with the admin endpoint's `Authorization: Bearer <token>` (local/admin-server.ts). On an
 * http: URL (the local stack's, on loopback) it goes through node:http rather than the global
 * fetch, whose first call loads undici: about 100 ms of CPU at each command's start, more than the
 * request itself. Its answer has what the admin calls read of a Response (ok, status, text, json).
 */
function withBearerToken(token: string): typeof fetch {
  return (input, init) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    if (url.protocol !== 'http:') {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${token}`);
      return fetch(input, { ...init, headers });
    }
    return loopbackRequest(url, init?.method ?? 'GET', token);
  };
}

function loopbackRequest(url: URL, method: string, token: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    // agent: false: one connection per call, closed after it, so no idle socket holds the process.
    const request = http.request(url, { method, agent: false, headers: { authorization: `Bearer ${token}` } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = response.statusCode ?? 0;
        const answer = { ok: status >= 200 && status < 300, status, text: async () => text, json: async () => JSON.parse(text) as unknown };
        resolve(answer as Response);
      });
    });
    request.on('error', reject);
    request.end();
  });
}
