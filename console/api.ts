/**
 * The console's JSON API: each route parses its request, calls one operation of the operations floor
 * (ops/) on the target the console was started for (ops/target.ts), and answers with its result, the
 * same report the CLI prints. Reads are GET; whatever writes (pause, resume, redrive, replay, repair)
 * is POST, and takes `dryRun: true` to count first where the operation has a dry run. The server
 * (console/server.ts) checks the token and the origin before any of this runs.
 */

import type { HookledgerConfig } from '../core/config/schema';
import { ACTIVITY_PRESETS, type ActivityPreset, activity, activityPresetWindow } from '../ops/activity';
import type { ApiErrorBody, ConsoleGets, ConsolePosts } from '../ops/console-api';
import type { OperatorDeps } from '../ops/deps';
import { type CliError, ConflictError, cliErrorOf, NotFoundError, OperationFailedError, TargetError, UsageError } from '../ops/errors';
import { DELIVERY_STATES, type DeliveryStateOrReady, eventIdPrefix, type StoredOutcome, searchEvents } from '../ops/events';
import { targetHealth } from '../ops/health';
import { setPaused } from '../ops/pause';
import { reconcileTarget, repairTarget } from '../ops/reconcile';
import { redrive, redrivePreview } from '../ops/redrive';
import { replay } from '../ops/replay';
import { sourcesReport } from '../ops/sources';
import { circuits, status } from '../ops/status';
import type { Target } from '../ops/target';
import { parseDuration, parseTime } from '../ops/time';
import { traceWithPayload } from '../ops/trace';
import { formatUsageCsv, usage } from '../ops/usage';

export interface ApiDeps {
  readonly config: HookledgerConfig;
  readonly target: Target;
  /** Recorded on audit items (replay, repair): the operator who started the console. */
  readonly operator: string;
  readonly clock?: () => number;
}

export interface ApiRequest {
  readonly method: string;
  /** The path after `/api`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: Record<string, unknown>;
}

export interface ApiResponse<Body = unknown> {
  readonly status: number;
  readonly body: Body;
  /** Set for a download: the body is text of this type. */
  readonly contentType?: string;
  readonly filename?: string;
}

type Handler<Body = unknown> = (deps: ApiDeps, request: ApiRequest) => Promise<ApiResponse<Body>>;

/**
 * One handler per route of the contract (ops/console-api.ts), each answering the response the page
 * reads: the compiler checks every operation's report against it.
 */
type Routes = { readonly [P in keyof ConsoleGets as `GET ${P}`]: Handler<ConsoleGets[P]['response']> } & {
  readonly [P in keyof ConsolePosts as `POST ${P}`]: Handler<ConsolePosts[P]['response']>;
};

const ok = <Body>(body: Body): ApiResponse<Body> => ({ status: 200, body });
const failed = (status: number, error: string, message: string): ApiResponse<ApiErrorBody> => ({ status, body: { error, message } });

/** The status an operation's expected error answers with; anything else it did not expect is a 500. */
function statusOf(error: CliError): number {
  if (error instanceof UsageError) return 400;
  if (error instanceof NotFoundError) return 404;
  if (error instanceof ConflictError) return 409;
  if (error instanceof TargetError || error instanceof OperationFailedError) return 502;
  return 500;
}

export async function handleApi(deps: ApiDeps, request: ApiRequest): Promise<ApiResponse> {
  const route = (ROUTES as Readonly<Record<string, Handler>>)[`${request.method} ${request.path}`];
  if (!route) return failed(404, 'not_found', `no API route ${request.method} /api${request.path}`);
  try {
    return await route(deps, request);
  } catch (error) {
    const expected = cliErrorOf(error);
    if (expected) return failed(statusOf(expected), expected.name, expected.message);
    return failed(500, error instanceof Error ? error.name : 'Error', error instanceof Error ? error.message : String(error));
  }
}

// --- arguments ----------------------------------------------------------------------------------

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

function window(query: URLSearchParams | Record<string, unknown>, defaultFrom: string, clock: () => number) {
  const get = (k: string) => text(query instanceof URLSearchParams ? query.get(k) : query[k]);
  const now = clock();
  const from = parseTime(get('from') ?? defaultFrom, now, 'from');
  const to = parseTime(get('to') ?? 'now', now, 'to');
  if (!(from < to)) throw new UsageError(`from must be before to (got ${new Date(from).toISOString()} .. ${new Date(to).toISOString()})`);
  return { from, to };
}

function consumerOf(deps: ApiDeps, value: unknown): string {
  const id = text(value);
  const ids = deps.config.consumers.map((c) => c.id);
  if (!id || !ids.includes(id)) throw new UsageError(`consumer must be one of ${ids.join(', ')} (got "${id ?? ''}")`);
  return id;
}

function sourceOf(deps: ApiDeps, value: unknown): string | undefined {
  const id = text(value);
  if (id === undefined) return undefined;
  const ids = deps.config.sources.map((s) => s.id);
  if (!ids.includes(id)) throw new UsageError(`source must be one of ${ids.join(', ')} (got "${id}")`);
  return id;
}

function stateOf(value: unknown): DeliveryStateOrReady | undefined {
  const state = text(value);
  if (state === undefined) return undefined;
  if (!DELIVERY_STATES.includes(state as DeliveryStateOrReady)) {
    throw new UsageError(`state must be one of ${DELIVERY_STATES.join(', ')} (got "${state}")`);
  }
  return state as DeliveryStateOrReady;
}

function integer(value: string | null, name: string): number | undefined {
  if (value === null || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${name} must be a whole number (got "${value}")`);
  return n;
}

/**
 * An operation's not-found answer says what to do on the command line (`--source`); the page's says
 * what to do here.
 */
async function inConsoleWords<T>(operation: Promise<T>, eventId: string, sources: string | readonly string[]): Promise<T> {
  try {
    return await operation;
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    const from = typeof sources === 'string' ? sources : sources.length === 1 ? sources[0] : `any source (${sources.join(', ')})`;
    throw new NotFoundError(`No event ${eventId} was received from ${from}: check the id, or search for it in Events.`, { cause: error });
  }
}

const clockOf = (deps: ApiDeps) => deps.clock ?? Date.now;
const storeDeps = (deps: ApiDeps) => ({ ddb: deps.target.ddb, tables: deps.target.tables, config: deps.config });
const operatorDeps = (deps: ApiDeps): OperatorDeps & { config: HookledgerConfig } => ({ ...storeDeps(deps), operator: deps.operator });

// --- routes -------------------------------------------------------------------------------------

const ROUTES: Routes = {
  'GET /overview': async (deps) =>
    ok({
      target: deps.target.label,
      kind: deps.target.kind,
      sources: deps.config.sources.map((s) => s.id),
      consumers: deps.config.consumers.map((c) => c.id),
    }),

  'GET /events': async (deps, { query }) => {
    const eventId = text(query.get('eventId'));
    // The window too with an id: an id no source has is searched for as a prefix of ids in it.
    const page = await searchEvents(storeDeps(deps), {
      ...(eventId ? { eventId } : {}),
      window: window(query, '-24h', clockOf(deps)),
      tenant: text(query.get('tenant')),
      source: sourceOf(deps, query.get('source')),
      type: text(query.get('type')),
      consumer: text(query.get('consumer')) ? consumerOf(deps, query.get('consumer')) : undefined,
      state: text(query.get('state')) as DeliveryStateOrReady | undefined,
      outcome: text(query.get('outcome')) as StoredOutcome | undefined,
      cursor: integer(query.get('cursor'), 'cursor'),
      limit: integer(query.get('limit'), 'limit'),
    });
    return ok(page);
  },

  'GET /event': async (deps, { query }) => {
    const eventId = text(query.get('eventId'));
    if (!eventId) throw new UsageError('eventId is required');
    const source = sourceOf(deps, query.get('source'));
    return ok(
      await inConsoleWords(traceWithPayload(storeDeps(deps), eventId, { source }), eventId, source ?? deps.config.sources.map((s) => s.id)),
    );
  },

  'POST /event/replay': async (deps, { body }) => {
    const eventId = text(body.eventId);
    if (!eventId) throw new UsageError('eventId is required');
    const result = await replay(operatorDeps(deps), {
      consumer: consumerOf(deps, body.consumer),
      event: { eventId, source: sourceOf(deps, body.source) },
      dryRun: body.dryRun === true,
    });
    return ok(result);
  },

  'POST /events/replay': async (deps, { body }) => {
    if (text(body.outcome)) throw new UsageError('Replay matching takes no intake outcome: set Intake outcome to any first.');
    const eventId = text(body.eventId);
    const result = await replay(operatorDeps(deps), {
      consumer: consumerOf(deps, body.consumer),
      window: window(body, '-24h', clockOf(deps)),
      tenant: text(body.tenant),
      type: text(body.type),
      source: sourceOf(deps, body.source),
      state: stateOf(body.state),
      ...(eventId ? { eventIdPrefix: eventIdPrefix(eventId) } : {}),
      dryRun: body.dryRun === true,
    });
    return ok(result);
  },

  'GET /consumers': async (deps, { query }) => {
    const { target } = deps;
    const [paused, outcomes] = await Promise.all([
      target.pauseControl.paused().catch(() => undefined),
      target.intakeOutcomes().catch(() => undefined),
    ]);
    const since = text(query.get('since'));
    const report = await status(
      { ...storeDeps(deps), sqs: target.sqs, queues: target.queues, fanoutFailureQueueUrl: target.fanoutFailureQueueUrl },
      {
        ...(paused ? { paused } : {}),
        ...(outcomes ? { intakeOutcomes: outcomes } : {}),
        ...(since ? { since: parseDuration(since, 'since') } : {}),
      },
    );
    return ok({ ...report, circuits: await circuits(storeDeps(deps)) });
  },

  'POST /consumers/pause': async (deps, { body }) => pauseOrResume(deps, body, true),
  'POST /consumers/resume': async (deps, { body }) => pauseOrResume(deps, body, false),

  'POST /consumers/redrive': async (deps, { body }) => {
    const consumer = consumerOf(deps, body.consumer);
    if (body.dryRun === true) return ok({ ...(await redrivePreview(deps.target, consumer)), dryRun: true });
    const result = await redrive(
      { config: deps.config, sqs: deps.target.sqs, queues: deps.target.queues },
      { consumer, timeoutMs: 5 * 60_000 },
    );
    return ok({ ...result, dryRun: false });
  },

  'GET /usage': async (deps, { query }) => ok(await usageReport(deps, query)),

  'GET /usage.csv': async (deps, { query }) => {
    const report = await usageReport(deps, query);
    const tenant = text(query.get('tenant'));
    return {
      status: 200,
      body: formatUsageCsv(report),
      contentType: 'text/csv; charset=utf-8',
      filename: `usage-${tenant ? `${tenant.replace(/[^A-Za-z0-9_.-]/g, '_')}-` : ''}${new Date(report.from).toISOString().slice(0, 10)}.csv`,
    };
  },

  'GET /reconcile': async (deps, { query }) => {
    const report = await reconcileTarget(deps, { ...window(query, '-24h', clockOf(deps)), graceMs: grace(query.get('grace')) });
    return ok(report);
  },

  'POST /reconcile/repair': async (deps, { body }) => {
    const result = await repairTarget(deps, {
      ...window(body, '-24h', clockOf(deps)),
      graceMs: grace(text(body.grace) ?? null),
      dryRun: body.dryRun === true,
    });
    return ok(result);
  },

  'GET /sources': async (deps, { query }) => {
    const outcomes = await deps.target.intakeOutcomes().catch(() => undefined);
    const report = await sourcesReport(
      { ...storeDeps(deps), secretRotation: (id) => deps.target.secretRotation(id) },
      { window: window(query, '-7d', clockOf(deps)), ...(outcomes ? { outcomes } : {}) },
    );
    return ok(report);
  },

  'GET /activity': async (deps, { query }) => ok(await activity(storeDeps(deps), activityWindow(deps, query))),

  'GET /health': async (deps) => ok(await targetHealth(deps.target, deps.config)),
};

/** A preset (`1h`, `24h`, `7d`) ending now, or from/to (default the last 24 hours). */
function activityWindow(deps: ApiDeps, query: URLSearchParams) {
  const preset = text(query.get('preset'));
  if (preset === undefined) return window(query, '-24h', clockOf(deps));
  if (!(preset in ACTIVITY_PRESETS)) {
    throw new UsageError(`preset must be one of ${Object.keys(ACTIVITY_PRESETS).join(', ')} (got "${preset}")`);
  }
  return activityPresetWindow(preset as ActivityPreset, clockOf(deps)());
}

async function pauseOrResume(deps: ApiDeps, body: Record<string, unknown>, paused: boolean) {
  const consumer = consumerOf(deps, body.consumer);
  return ok(
    await setPaused(
      deps.target.pauseControl,
      deps.config.consumers.map((c) => c.id),
      consumer,
      paused,
    ),
  );
}

function usageReport(deps: ApiDeps, query: URLSearchParams) {
  const consumer = text(query.get('consumer'));
  return usage(
    { ddb: deps.target.ddb, tables: deps.target.tables },
    {
      ...window(query, '-24h', clockOf(deps)),
      tenant: text(query.get('tenant')),
      ...(consumer ? { consumer: consumerOf(deps, consumer) } : {}),
    },
  );
}

function grace(value: string | null): number {
  return parseDuration(text(value) ?? '15m', 'grace');
}
