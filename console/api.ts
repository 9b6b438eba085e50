/**
 * The console's JSON API: each route is one of the CLI's operations (cli/ops, the reconcile checks
 * of lambdas/reconcile) on the same target (cli/target.ts), with the CLI's argument checks. Reads are
 * GET; whatever writes (pause, resume, redrive, replay, repair) is POST, and takes `dryRun: true` to
 * count first where the CLI has a dry run. The server (console/server.ts) checks the token and the
 * origin before any of this runs.
 */

import { eventStores } from '../adapters/event-stores';
import { ledgerItemsByKey } from '../adapters/table-scan';
import { formatUsageCsv } from '../cli/commands/usage';
import { type CliError, ConflictError, cliErrorOf, NotFoundError, OperationFailedError, TargetError, UsageError } from '../cli/errors';
import type { OperatorDeps } from '../cli/ops/deps';
import { type DeliveryStateOrReady, type StoredOutcome, searchEvents } from '../cli/ops/events';
import { setPaused } from '../cli/ops/pause';
import { redrive } from '../cli/ops/redrive';
import { replay } from '../cli/ops/replay';
import { sourcesReport } from '../cli/ops/sources';
import { depth, status } from '../cli/ops/status';
import { trace } from '../cli/ops/trace';
import { usage } from '../cli/ops/usage';
import type { Target } from '../cli/target';
import { parseDuration, parseTime } from '../cli/time';
import type { HookledgerConfig } from '../core/config/schema';
import { breakerKey } from '../core/model';
import { reconcile } from '../lambdas/reconcile/reconcile';
import { repair } from '../lambdas/reconcile/repair';

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

export interface ApiResponse {
  readonly status: number;
  readonly body: unknown;
  /** Set for a download: the body is text of this type. */
  readonly contentType?: string;
  readonly filename?: string;
}

type Handler = (deps: ApiDeps, request: ApiRequest) => Promise<ApiResponse>;

const ok = (body: unknown): ApiResponse => ({ status: 200, body });

/** The status a CLI error answers with; anything else the operation did not expect is a 500. */
function statusOf(error: CliError): number {
  if (error instanceof UsageError) return 400;
  if (error instanceof NotFoundError) return 404;
  if (error instanceof ConflictError) return 409;
  if (error instanceof TargetError || error instanceof OperationFailedError) return 502;
  return 500;
}

export async function handleApi(deps: ApiDeps, request: ApiRequest): Promise<ApiResponse> {
  const route = ROUTES[`${request.method} ${request.path}`];
  if (!route) {
    return { status: 404, body: { error: 'not_found', message: `no API route ${request.method} /api${request.path}` } };
  }
  try {
    return await route(deps, request);
  } catch (error) {
    const expected = cliErrorOf(error);
    if (expected) return { status: statusOf(expected), body: { error: expected.name, message: expected.message } };
    const name = error instanceof Error ? error.name : 'Error';
    return { status: 500, body: { error: name, message: error instanceof Error ? error.message : String(error) } };
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

function integer(value: string | null, name: string): number | undefined {
  if (value === null || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${name} must be a whole number (got "${value}")`);
  return n;
}

const clockOf = (deps: ApiDeps) => deps.clock ?? Date.now;
const storeDeps = (deps: ApiDeps) => ({ ddb: deps.target.ddb, tables: deps.target.tables, config: deps.config });
const operatorDeps = (deps: ApiDeps): OperatorDeps & { config: HookledgerConfig } => ({ ...storeDeps(deps), operator: deps.operator });

// --- routes -------------------------------------------------------------------------------------

const ROUTES: Readonly<Record<string, Handler>> = {
  'GET /overview': async (deps) =>
    ok({
      target: deps.target.label,
      kind: deps.target.kind,
      sources: deps.config.sources.map((s) => s.id),
      consumers: deps.config.consumers.map((c) => c.id),
    }),

  'GET /events': async (deps, { query }) => {
    const eventId = text(query.get('eventId'));
    const page = await searchEvents(storeDeps(deps), {
      ...(eventId ? { eventId } : { window: window(query, '-24h', clockOf(deps)) }),
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
    const report = await trace(storeDeps(deps), eventId, { source: sourceOf(deps, query.get('source')) });
    // The payload itself, pretty-printed when it is JSON; nothing once it is past retention.
    let payload: { readonly json?: unknown; readonly text?: string } | undefined;
    // A body kept in the payload bucket is named, not fetched (the console holds no S3 client).
    if (report.receipt.payload === 'present' && !report.receipt.payloadObject) {
      const { payloads } = eventStores({ client: deps.target.ddb, tableName: deps.target.tables.events });
      const [scheme, hex] = report.receipt.payloadHash.split(':');
      const body = await payloads.getPayload(report.receipt.source, report.receipt.eventId, scheme === 'hmac-sha256' ? hex : undefined);
      if (body) {
        const raw = body.toString('utf8');
        try {
          payload = { json: JSON.parse(raw) };
        } catch {
          payload = { text: raw };
        }
      }
    }
    return ok({ ...report, ...(payload ? { payload } : {}) });
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

  'GET /consumers': async (deps, { query }) => {
    const { target, config } = deps;
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
    // HTTP consumers' circuit breakers: consecutive failures, and the count that pauses the consumer.
    const http = config.consumers.filter((c) => c.kind === 'http');
    const breakers = await ledgerItemsByKey<{ pk: string; failures?: number }>(
      { ddb: target.ddb, tables: target.tables },
      http.map((c) => breakerKey(c.id)),
    );
    const circuits = Object.fromEntries(
      http.map((c) => [c.id, { failures: Number(breakers.get(breakerKey(c.id))?.failures ?? 0), breakAfter: c.http?.breakAfterFailures }]),
    );
    return ok({ ...report, circuits });
  },

  'POST /consumers/pause': async (deps, { body }) => pauseOrResume(deps, body, true),
  'POST /consumers/resume': async (deps, { body }) => pauseOrResume(deps, body, false),

  'POST /consumers/redrive': async (deps, { body }) => {
    const consumer = consumerOf(deps, body.consumer);
    const pair = deps.target.queues[consumer];
    if (!pair) throw new UsageError(`no queue for consumer "${consumer}" on ${deps.target.label}`);
    if (body.dryRun === true) {
      const dlq = await depth(deps.target.sqs, pair.dlqUrl);
      return ok({ consumer, dryRun: true, toMove: dlq.visible, inFlight: dlq.inFlight });
    }
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
    const report = await reconcile(
      { ddb: deps.target.ddb, tables: deps.target.tables },
      { ...window(query, '-24h', clockOf(deps)), graceMs: grace(query.get('grace')), consumers: deps.config.consumers.map((c) => c.id) },
    );
    return ok(report);
  },

  'POST /reconcile/repair': async (deps, { body }) => {
    const { target } = deps;
    // Paused consumers are not repaired: an unknown pause state is not guessed (as the CLI).
    const paused = await target.pauseControl.paused();
    const result = await repair(
      {
        ddb: target.ddb,
        tables: target.tables,
        operator: deps.operator,
        ...(target.fanoutFailureQueueUrl
          ? { fanoutFailures: { sqs: target.sqs, queueUrl: target.fanoutFailureQueueUrl, streams: target.streamBatches } }
          : {}),
      },
      {
        ...window(body, '-24h', clockOf(deps)),
        graceMs: grace(text(body.grace) ?? null),
        consumers: deps.config.consumers.map((c) => c.id),
        paused,
        dryRun: body.dryRun === true,
        trigger: 'cli',
      },
    );
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
};

async function pauseOrResume(deps: ApiDeps, body: Record<string, unknown>, paused: boolean): Promise<ApiResponse> {
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
