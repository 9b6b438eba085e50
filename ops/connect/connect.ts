/**
 * `hookledger sources connect | disconnect | remote`: a source's webhook endpoint at its provider,
 * registered through the provider's API with the gap check's credential.
 *
 * Connect finds the source's endpoint (drift.ts `findEndpoint`: by URL, never a second one) and
 * creates it, updates it to the configured URL and `events`, or leaves it as it is. The secret goes
 * through `rotateSecret` (ops/secrets.ts), the path of `secrets rotate --value-file`, so the previous
 * secret keeps verifying for the source's overlap: the provider's own (Stripe: issued at creation),
 * stored after the endpoint exists, the endpoint deleted again when it cannot be stored; or, where
 * the provider takes ours (GitHub), a generated one stored before it is sent.
 */
import { ProviderApiError, ProviderAuthError } from '../../adapters/provider-events';
import type { SourceConfig } from '../../core/config/schema';
import { type DesiredEndpoint, type Drift, driftOf, findEndpoint } from '../../core/endpoint-drift';
import type { ConfigDeps, OperatorDeps } from '../deps';
import { NotFoundError, OperationFailedError, TargetError, UsageError } from '../errors';
import { type RotateResult, rotateSecret } from '../secrets';
import type { Target } from '../target';
import { ProviderRefusedError } from './http';
import { REGISTRARS } from './registrars';
import type { ProviderRegistrar, RegistrarFactory, RemoteEndpoint } from './types';

export interface ConnectDeps {
  readonly ops: OperatorDeps & ConfigDeps;
  readonly target: Pick<Target, 'kind' | 'label' | 'webhookUrl' | 'apiKeyLocation' | 'providerApiKey' | 'rotator' | 'signingSecret'>;
  /** @default REGISTRARS (registrars.ts) */
  readonly registrars?: Readonly<Record<string, RegistrarFactory>>;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Told each 429 waited out (the CLI prints a line on stderr). */
  readonly onRateLimited?: (waitMs: number) => void;
}

export interface ConnectRequest {
  readonly source: string;
  /** The public base URL the provider calls (a tunnel to the local stack): the webhook's path is kept. */
  readonly url?: string;
  /** GitHub: `repos/<owner>/<repo>` or `orgs/<org>` @default - gapCheck.hook without `/hooks/<id>` */
  readonly hook?: string;
}

/** What a source's endpoint should be, and how to reach its provider. */
export interface Connection extends DesiredEndpoint {
  readonly source: SourceConfig;
  readonly provider: string;
  readonly baseUrl?: string;
  readonly hook?: string;
}

export interface RemoteReport {
  readonly source: string;
  readonly provider: string;
  readonly expected: DesiredEndpoint;
  /** The source's endpoint as the provider lists it; absent when it has none. */
  readonly endpoint?: RemoteEndpoint;
  readonly drift: readonly Drift[];
}

/** `drift`: what connect found different, so what it changed (or would, under --dry-run). */
export interface ConnectResult extends RemoteReport {
  /** `unchanged`: it matched; under --dry-run what would be done. */
  readonly action: 'created' | 'updated' | 'unchanged';
  readonly dryRun: boolean;
  /**
   * `stored`: the provider's (or our generated) secret is now the source's current one, the previous
   * verifying until `rotation.previousUntil`; `kept`: the endpoint kept its secret; `none`: dry run.
   */
  readonly secret: 'stored' | 'kept' | 'none';
  readonly rotation?: RotateResult;
}

/** The source, its provider's registrar name, and the endpoint its configuration asks for; usage errors say what to add. */
export function connectionOf(
  deps: { readonly ops: ConfigDeps; readonly target: Pick<Target, 'webhookUrl'>; readonly registrars?: ConnectDeps['registrars'] },
  request: ConnectRequest,
): Connection {
  const { config } = deps.ops;
  const source = config.sources.find((s) => s.id === request.source);
  if (!source) throw new UsageError(`unknown source "${request.source}"; configured: ${config.sources.map((s) => s.id).join(', ')}`);
  const registrars = deps.registrars ?? REGISTRARS;
  const provider = source.provider ?? source.gapCheck?.api;
  if (provider === undefined || !(provider in registrars)) {
    throw new UsageError(
      `source "${source.id}" (${provider ? `provider ${provider}` : `scheme ${source.scheme.type}`}) has no provider registration API hookledger can call; ` +
        `register its endpoint in the provider's dashboard. sources connect works for: ${Object.keys(registrars).join(', ')}`,
    );
  }
  if (!source.events) {
    throw new UsageError(
      `source "${source.id}" declares no events: add events: [...] (the ${provider} event types its endpoint receives) to it in the configuration`,
    );
  }
  const hook = request.hook ?? source.gapCheck?.hook?.replace(/\/hooks\/\d+$/, '');
  if (provider === 'github' && hook === undefined) {
    throw new UsageError(
      `source "${source.id}": say where to register the hook: --hook repos/<owner>/<repo> or --hook orgs/<org> (or gapCheck.hook)`,
    );
  }
  return {
    source,
    provider,
    url: webhookUrlOf(deps.target.webhookUrl(source.id), request.url),
    events: source.events,
    ...(source.gapCheck?.baseUrl ? { baseUrl: source.gapCheck.baseUrl } : {}),
    ...(hook ? { hook } : {}),
  };
}

/** The target's webhook URL, or its path under `base` (`--url`). */
function webhookUrlOf(targetUrl: string, base: string | undefined): string {
  if (base === undefined) return targetUrl;
  if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol)) {
    throw new UsageError(`--url "${base}" is not an http(s) URL; give the public base URL the provider calls (https://<tunnel host>)`);
  }
  const path = new URL(targetUrl).pathname;
  return `${base.replace(/\/+$/, '')}${path}`;
}

/** The registrar with the source's credential; no credential is a `TargetError` (exit 3) naming where it goes. */
export async function openRegistrar(deps: ConnectDeps, connection: Connection): Promise<ProviderRegistrar> {
  const { id } = connection.source;
  const credential = deps.target.apiKeyLocation(id);
  let apiKey: string;
  try {
    apiKey = await deps.target.providerApiKey(id);
  } catch (error) {
    if (!(error instanceof TargetError)) throw error;
    throw new TargetError(
      `no ${connection.provider} API key for source "${id}": put one able to manage webhook endpoints at ${credential} ` +
        `(the gap check's credential; see docs/providers/${connection.provider}.md)` +
        // On AWS the target's own message holds the command that puts it.
        (deps.target.kind === 'aws' ? `. ${error.message}` : ''),
      { cause: error },
    );
  }
  return registrarOf(deps, connection, { apiKey, credential });
}

/** The connection's registrar with this credential. */
export function registrarOf(
  deps: Pick<ConnectDeps, 'registrars' | 'sleep' | 'onRateLimited'>,
  connection: Connection,
  key: { readonly apiKey: string; readonly credential: string },
): ProviderRegistrar {
  const factory = (deps.registrars ?? REGISTRARS)[connection.provider] as RegistrarFactory;
  return factory({
    ...key,
    ...(connection.baseUrl ? { baseUrl: connection.baseUrl } : {}),
    ...(connection.hook ? { hook: connection.hook } : {}),
    ...(deps.sleep ? { sleep: deps.sleep } : {}),
    ...(deps.onRateLimited ? { onRateLimited: deps.onRateLimited } : {}),
  });
}

/** A provider's failure as the CLI's (exit 3), a refused URL quoting the provider's reason. */
export function providerCallFailed(connection: Connection, error: unknown): unknown {
  if (error instanceof ProviderRefusedError) {
    return new OperationFailedError(
      `the ${connection.provider} API refused the endpoint ${connection.url} for source "${connection.source.id}" (${error.status}): "${error.reason}"`,
      { cause: error },
    );
  }
  if (error instanceof ProviderApiError || error instanceof ProviderAuthError)
    return new OperationFailedError(error.message, { cause: error });
  return error;
}

/** The provider's endpoints read once: the source's, and its drift. */
export async function remoteOf(registrar: ProviderRegistrar, connection: Connection): Promise<RemoteReport> {
  const endpoint = findEndpoint(await registrar.list(), connection.url);
  return {
    source: connection.source.id,
    provider: connection.provider,
    expected: { url: connection.url, events: connection.events },
    ...(endpoint ? { endpoint } : {}),
    drift: driftOf(endpoint, connection),
  };
}

/** `sources remote`: the provider's view of the source's endpoint and every drift from the configuration. */
export async function remoteSource(deps: ConnectDeps, request: ConnectRequest): Promise<RemoteReport> {
  const connection = connectionOf(deps, request);
  const registrar = await openRegistrar(deps, connection);
  try {
    return await remoteOf(registrar, connection);
  } catch (error) {
    throw providerCallFailed(connection, error);
  }
}

/** `sources disconnect`: deletes the source's endpoint at the provider; none is a `NotFoundError`. */
export async function disconnectSource(
  deps: ConnectDeps,
  request: ConnectRequest,
): Promise<{ source: string; provider: string; removed: RemoteEndpoint }> {
  const connection = connectionOf(deps, request);
  const registrar = await openRegistrar(deps, connection);
  try {
    const endpoint = findEndpoint(await registrar.list(), connection.url);
    if (!endpoint) {
      throw new NotFoundError(
        `the ${connection.provider} API lists no endpoint for source "${connection.source.id}" at ${connection.url}: nothing to disconnect`,
      );
    }
    await registrar.remove(endpoint.id);
    return { source: connection.source.id, provider: connection.provider, removed: endpoint };
  } catch (error) {
    throw providerCallFailed(connection, error);
  }
}

/** `sources connect`: creates or updates the source's endpoint and stores its secret (module comment). */
export async function connectSource(deps: ConnectDeps, request: ConnectRequest & { readonly dryRun?: boolean }): Promise<ConnectResult> {
  const connection = connectionOf(deps, request);
  const registrar = await openRegistrar(deps, connection);
  try {
    const before = await remoteOf(registrar, connection);
    const action = before.endpoint === undefined ? 'created' : before.drift.length > 0 ? 'updated' : 'unchanged';
    if (request.dryRun || action === 'unchanged') return { ...before, action, dryRun: request.dryRun === true, secret: 'none' };
    const done = before.endpoint
      ? await updateEndpoint(deps, registrar, connection, before.endpoint)
      : await createEndpoint(deps, registrar, connection);
    return { ...before, action, dryRun: false, secret: done.rotation ? 'stored' : 'kept', ...done };
  } catch (error) {
    throw providerCallFailed(connection, error);
  }
}

interface Registered {
  readonly endpoint: RemoteEndpoint;
  readonly rotation?: RotateResult;
}

/** Rotates the source's secret: to `value` (the provider's), or to a generated one returned to send (`secretFrom: 'us'`). */
async function storeSecret(deps: ConnectDeps, connection: Connection, value?: string): Promise<{ rotation: RotateResult; secret: string }> {
  const rotation = await rotateSecret(
    { ...deps.ops, rotator: deps.target.rotator },
    { source: connection.source.id, ...(value !== undefined ? { value: { text: value, from: `the ${connection.provider} API` } } : {}) },
  );
  return { rotation, secret: value ?? (await deps.target.signingSecret(connection.source.id)) };
}

async function createEndpoint(deps: ConnectDeps, registrar: ProviderRegistrar, connection: Connection): Promise<Registered> {
  const input = { url: connection.url, events: connection.events };
  if (registrar.secretFrom === 'us') {
    // Stored first: the provider signs with it from its first delivery, and intake must already know it.
    const { rotation, secret } = await storeSecret(deps, connection);
    return { endpoint: (await registrar.create({ ...input, secret })).endpoint, rotation };
  }
  const created = await registrar.create(input);
  try {
    if (created.secret === undefined) throw new OperationFailedError(`the ${connection.provider} API returned no signing secret`);
    return { endpoint: created.endpoint, rotation: (await storeSecret(deps, connection, created.secret)).rotation };
  } catch (error) {
    throw await undoCreate(registrar, connection, created.endpoint, error);
  }
}

/** The endpoint exists but its secret is not stored: delete it again, or say exactly how to finish. */
async function undoCreate(registrar: ProviderRegistrar, connection: Connection, endpoint: RemoteEndpoint, cause: unknown): Promise<Error> {
  const id = connection.source.id;
  const why = cause instanceof Error ? cause.message : String(cause);
  try {
    await registrar.remove(endpoint.id);
  } catch (removeError) {
    return new OperationFailedError(
      `created ${connection.provider} endpoint ${endpoint.id} for source "${id}" but could not store its secret (${why}) ` +
        `nor delete it again (${removeError instanceof Error ? removeError.message : String(removeError)}). To finish: copy its signing secret ` +
        `from the provider's dashboard into a file and run \`hookledger secrets rotate ${id} --value-file <file>\`, ` +
        `or delete it with \`hookledger sources disconnect ${id} --yes\` and run connect again`,
      { cause },
    );
  }
  return new OperationFailedError(
    `could not store the signing secret of source "${id}" (${why}): deleted the new ${connection.provider} endpoint ${endpoint.id} again; nothing changed. Fix that and run connect again`,
    { cause },
  );
}

async function updateEndpoint(
  deps: ConnectDeps,
  registrar: ProviderRegistrar,
  connection: Connection,
  endpoint: RemoteEndpoint,
): Promise<Registered> {
  const input = { url: connection.url, events: connection.events };
  // GitHub drops a hook's secret unless the update carries one: a new one, stored before it is sent.
  if (registrar.secretFrom === 'us') {
    const { rotation, secret } = await storeSecret(deps, connection);
    return { endpoint: (await registrar.update(endpoint.id, { ...input, secret })).endpoint, rotation };
  }
  return { endpoint: (await registrar.update(endpoint.id, input)).endpoint };
}
