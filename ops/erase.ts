/**
 * Erase: a tenant that leaves, or a data-subject request, removes the webhook bodies of the tenant's
 * events (or of one event) while the billing ledger and its evidence stay.
 *
 * Deleted, per event: its payload item; its objects in the payload bucket (`payloads/<source>/<eventId>/`,
 * the body and any conflicting body, and every delivered consumer's claim-checked views
 * `views/<consumerId>/<eventId>/`); the receipt's ordering keys (read from the body). Kept: the receipt's
 * ids, type, tenant, key, times, delivery set and keyed hash (verify-payload still answers), every
 * ledger row with its usage and access log, the audit trail. Deliveries not done yet are quarantined
 * `payload_erased` on the ledger (LedgerErasure.markErased): never handled, never charged. On every
 * delivery of the event, the messages of failed attempts become `erased` (they may quote the body);
 * category, attempt and time stay.
 *
 * The tenant's events are found through the window index (one tenant's partitions only), page by page;
 * a real run checkpoints after every page (`ckpt#erase#<tenant>#<from>#<to>`), so a run that stops is
 * resumed by running it again. Every step is idempotent. A dry run reads what the real run would
 * delete and counts it the same way. One audit item per run: written before the first delete (scope),
 * completed with the counts.
 */
import { CheckpointStore } from '../adapters/checkpoint';
import { type Erasure, LedgerErasure, scrubbedErrors } from '../adapters/ledger-erasure';
import type { ErasableBlobs, PayloadBlobs } from '../adapters/payload-blobs';
import { eventStoreItemsByKey, ledgerItemsByKey, type Window } from '../adapters/table-scan';
import { MAX_WINDOW_DAYS, type WindowPartition, WindowReader } from '../adapters/window-index';
import { payloadObjectPrefix, viewObjectPrefix } from '../core/blobs';
import { DAY_MS, type EventItem, keyPart, type LedgerItem, ledgerKey } from '../core/model';
import { writeAudit } from './audit';
import { type ConfigDeps, now as clockNow, eventStoresOf, type OperatorDeps, type Progress } from './deps';
import { UsageError } from './errors';
import { newAuditId } from './ids';
import { findReceipt } from './receipts';
import { iso } from './time';

export interface EraseDeps extends OperatorDeps, ConfigDeps {
  /** The payload bucket: listed under each event's prefixes, objects deleted. */
  readonly blobs: PayloadBlobs & ErasableBlobs;
}

export interface EraseRequest {
  /** Every event of this tenant received in `window`. */
  readonly tenant?: string;
  /** @default the last MAX_WINDOW_DAYS days up to now */
  readonly window?: Partial<Window>;
  /** Or one event. */
  readonly event?: { readonly eventId: string; readonly source: string };
  readonly dryRun?: boolean;
  /** Asked with the dry run's counts before anything is deleted; false stops with nothing deleted. */
  readonly confirm?: (plan: EraseResult) => Promise<boolean>;
  readonly onProgress?: Progress;
  /** Receipts per index page. @default 100 */
  readonly pageSize?: number;
  /** Stop after this many pages (the checkpoint says where the next run resumes). @default no limit */
  readonly maxPages?: number;
}

export interface EraseResult {
  readonly tenant: string;
  /** ISO times of the window [from, to). */
  readonly from: string;
  readonly to: string;
  /** The tenant's events this run covered (erased now, or found erased by an earlier run). */
  readonly events: number;
  /** Payload items deleted (dry run: that would be). */
  readonly payloadItems: number;
  /** Payload-bucket objects deleted: bodies and consumers' views. */
  readonly objects: number;
  /** Deliveries not done that are now quarantined `payload_erased`. */
  readonly deliveriesQuarantined: number;
  /** Messages of failed attempts replaced by `erased` (done deliveries' too): category, attempt and time stay. */
  readonly errorMessagesScrubbed: number;
  /** Events an earlier run had erased already. */
  readonly alreadyErased: number;
  readonly dryRun: boolean;
  readonly erasureId?: string;
  /** The run continued one that stopped (same tenant and window). */
  readonly resumed?: boolean;
  /** False when `maxPages` stopped it: run the same command again to go on. */
  readonly complete: boolean;
  readonly declined?: boolean;
}

interface EraseCheckpoint {
  readonly erasureId: string;
  readonly auditPk: string;
  readonly partition: string;
  readonly lastKey?: Record<string, unknown>;
  readonly counts: Counts;
  readonly done: boolean;
}

interface Counts {
  events: number;
  payloadItems: number;
  objects: number;
  deliveriesQuarantined: number;
  errorMessagesScrubbed: number;
  alreadyErased: number;
}

const DEFAULT_PAGE_SIZE = 100;

export async function erase(deps: EraseDeps, request: EraseRequest): Promise<EraseResult> {
  if ((request.tenant === undefined) === (request.event === undefined)) {
    throw new UsageError('give either --tenant <id> or --event <id> --source <id>, not both and not neither');
  }
  const now = clockNow(deps);
  let tenant: string;
  let window: Window;
  let single: EventItem | undefined;
  if (request.event) {
    single = await findReceipt(deps, request.event.eventId, request.event.source);
    tenant = single.tenantId;
    window = { from: single.receivedAt, to: single.receivedAt + 1 };
  } else {
    tenant = request.tenant as string;
    if (tenant === '') throw new UsageError('--tenant must not be empty');
    const to = request.window?.to ?? now + 1;
    window = { from: request.window?.from ?? to - MAX_WINDOW_DAYS * DAY_MS, to };
  }

  if (request.dryRun || request.confirm) {
    const plan = await run(deps, { tenant, window, single, request, dryRun: true });
    if (request.dryRun) return plan;
    if (request.confirm && !(await request.confirm(plan))) return { ...plan, dryRun: false, declined: true };
  }
  return run(deps, { tenant, window, single, request, dryRun: false });
}

/** One run's scope, stores and tallies, shared by its steps. */
interface EraseRun {
  readonly deps: EraseDeps;
  readonly tenant: string;
  readonly window: Window;
  readonly single?: EventItem;
  readonly request: EraseRequest;
  readonly dryRun: boolean;
  readonly stores: ReturnType<typeof eventStoresOf>;
  readonly ledger: LedgerErasure;
  readonly checkpoints: CheckpointStore<EraseCheckpoint>;
  /** The checkpoint of a run that stopped, continued by this one. */
  readonly resumed?: EraseCheckpoint;
  readonly counts: Counts;
  readonly erasureId?: string;
  readonly auditPk?: string;
  readonly erasure: Erasure;
}

type RunScope = { tenant: string; window: Window; single?: EventItem; request: EraseRequest; dryRun: boolean };

async function run(deps: EraseDeps, ctx: RunScope): Promise<EraseResult> {
  const state = await startRun(deps, ctx);
  const { single, dryRun, counts, erasureId, auditPk } = state;
  let complete = true;
  if (single) {
    // The receipt as it is now (a dry run before it may have read it).
    const [current] = await state.stores.receiptAdmin.findReceipts(single.eventId, [single.source]);
    await eraseEvent(state, current ?? single);
  } else {
    complete = await eraseWindow(state);
  }
  if (!dryRun && complete && auditPk) await state.stores.audit.completeAudit(auditPk, { ...counts, completedAt: clockNow(deps) });
  return {
    tenant: state.tenant,
    from: iso(state.window.from),
    to: iso(state.window.to),
    ...counts,
    dryRun,
    ...(erasureId ? { erasureId } : {}),
    ...(state.resumed ? { resumed: true } : {}),
    complete,
  };
}

/**
 * The run's state: a real run continues the checkpoint of one that stopped (its erasure id, audit item
 * and counts), or writes its audit item before the first delete; a dry run does neither.
 */
async function startRun(deps: EraseDeps, ctx: RunScope): Promise<EraseRun> {
  const { tenant, window, single, dryRun } = ctx;
  const stores = eventStoresOf(deps);
  const ledger = new LedgerErasure({ client: deps.ddb, tableName: deps.tables.ledger });
  const at = clockNow(deps);
  const checkpoints = new CheckpointStore<EraseCheckpoint>(
    { ddb: deps.ddb, tableName: deps.tables.events },
    `erase#${keyPart(tenant)}#${window.from}#${window.to}${single ? `#${single.source}#${single.eventId}` : ''}`,
  );
  const saved = dryRun ? undefined : (await checkpoints.load())?.state;
  const resumed = saved !== undefined && !saved.done ? saved : undefined;
  const fresh: Counts = { events: 0, payloadItems: 0, objects: 0, deliveriesQuarantined: 0, errorMessagesScrubbed: 0, alreadyErased: 0 };
  // A checkpoint from before errorMessagesScrubbed counts it from 0.
  const counts: Counts = resumed ? { ...fresh, ...resumed.counts } : fresh;
  let erasureId: string | undefined;
  let auditPk: string | undefined;
  if (!dryRun) {
    if (resumed) {
      erasureId = resumed.erasureId;
      auditPk = resumed.auditPk;
    } else {
      erasureId = newAuditId(at);
      // Before the first delete: a run that dies half-way still leaves its scope on record.
      const item = await writeAudit(
        deps,
        'erase',
        {
          erasureId,
          tenant,
          from: iso(window.from),
          to: iso(window.to),
          ...(single ? { eventId: single.eventId, source: single.source } : {}),
        },
        { id: erasureId, at },
      );
      auditPk = item.pk;
    }
  }
  return {
    deps,
    ...ctx,
    stores,
    ledger,
    checkpoints,
    ...(resumed ? { resumed } : {}),
    counts,
    ...(erasureId ? { erasureId } : {}),
    ...(auditPk ? { auditPk } : {}),
    erasure: { at, operator: deps.operator, erasureId: erasureId ?? 'dry-run' },
  };
}

/**
 * The tenant's receipts through the window index, page by page from where a stopped run left off; a
 * real run checkpoints after every page. False when `maxPages` stopped it.
 */
async function eraseWindow(state: EraseRun): Promise<boolean> {
  const { deps, request, resumed } = state;
  const reader = new WindowReader(deps);
  const partitions: WindowPartition[] = await reader.partitions(state.window, state.tenant);
  let index = resumed
    ? Math.max(
        0,
        partitions.findIndex((p) => p.id === resumed.partition),
      )
    : 0;
  let lastKey: Record<string, unknown> | undefined = resumed?.lastKey;
  let pages = 0;
  while (index < partitions.length) {
    if (request.maxPages !== undefined && pages >= request.maxPages) return false;
    const partition = partitions[index] as WindowPartition;
    const page = await reader.receiptPage(partition, {}, lastKey, request.pageSize ?? DEFAULT_PAGE_SIZE);
    // The index projects no payload hash: the page's receipts in full, by key.
    const full = await eventStoreItemsByKey<EventItem>(
      deps,
      page.receipts.map((r) => r.pk),
    );
    for (const indexed of page.receipts) {
      const receipt = full.get(indexed.pk);
      if (receipt?.kind === 'event' && receipt.tenantId === state.tenant) await eraseEvent(state, receipt);
    }
    request.onProgress?.(state.counts.events, undefined);
    pages++;
    lastKey = page.lastKey;
    if (!lastKey) index++;
    if (!state.dryRun) {
      const next = partitions[index];
      await state.checkpoints.save(
        {
          erasureId: state.erasureId as string,
          auditPk: state.auditPk as string,
          partition: next?.id ?? '',
          ...(lastKey ? { lastKey } : {}),
          counts: state.counts,
          done: next === undefined,
        },
        clockNow(deps),
      );
    }
  }
  return true;
}

/** One event, in the order that keeps a stopped run safe to repeat: deliveries, then bodies and views, then the receipt. */
async function eraseEvent(state: EraseRun, receipt: EventItem): Promise<void> {
  const { deps, dryRun, counts } = state;
  counts.events++;
  if (receipt.erasedAt !== undefined) counts.alreadyErased++;
  const consumers = receipt.consumers ?? [];
  // 1. The deliveries not done: quarantined first, so no worker claims one while its payload goes;
  //    and every delivery's failed attempts: their messages scrubbed.
  if (dryRun) await countDeliveries(state, receipt, consumers);
  else await eraseDeliveries(state, receipt, consumers);
  // 2. The payload item, then every object of the event: bodies and consumers' views.
  if (await state.stores.payloads.erase(receipt.source, receipt.eventId, receipt.payloadHmac, dryRun)) counts.payloadItems++;
  const prefixes = [payloadObjectPrefix(receipt.source, receipt.eventId), ...consumers.map((c) => viewObjectPrefix(c, receipt.eventId))];
  for (const prefix of prefixes) {
    // Only this event's own objects: `<prefix><hash>`, never an event whose id merely starts with this one's.
    const keys = (await deps.blobs.list(prefix)).filter((k) => !k.slice(prefix.length).includes('/'));
    if (keys.length === 0) continue;
    if (!dryRun) await deps.blobs.delete(keys);
    counts.objects += keys.length;
  }
  // 3. The receipt last: its erasedAt says the whole event is done.
  if (!dryRun) await state.stores.receiptAdmin.markErased(receipt.source, receipt.eventId, state.erasure);
}

/** The dry run's count of what eraseDeliveries would quarantine and scrub, read from the ledger rows. */
async function countDeliveries(state: EraseRun, receipt: EventItem, consumers: readonly string[]): Promise<void> {
  const rows = await ledgerItemsByKey<Pick<LedgerItem, 'pk' | 'state' | 'erasedAt' | 'errors'>>(
    state.deps,
    consumers.map((c) => ledgerKey(receipt.source, receipt.eventId, c)),
    { projection: 'pk, #state, erasedAt, #errors', names: { '#state': 'state', '#errors': 'errors' } },
  );
  for (const c of consumers) {
    const row = rows.get(ledgerKey(receipt.source, receipt.eventId, c));
    if (!row || (row.state !== 'done' && row.erasedAt === undefined)) state.counts.deliveriesQuarantined++;
    state.counts.errorMessagesScrubbed += scrubbedErrors(row?.errors ?? []).scrubbed;
  }
}

async function eraseDeliveries(state: EraseRun, receipt: EventItem, consumers: readonly string[]): Promise<void> {
  for (const consumerId of consumers) {
    const { mark, scrubbed } = await state.ledger.eraseDelivery(
      {
        source: receipt.source,
        eventId: receipt.eventId,
        consumerId,
        eventType: receipt.eventType,
        tenantId: receipt.tenantId,
        keyId: receipt.keyId,
        receivedAt: receipt.receivedAt,
      },
      state.erasure,
    );
    if (mark === 'quarantined') state.counts.deliveriesQuarantined++;
    state.counts.errorMessagesScrubbed += scrubbed;
  }
}
