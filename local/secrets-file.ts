/**
 * SecretsPort over a git-ignored JSON file, the local stand-in for Secrets Manager:
 *
 *   { "sources": { "<sourceId>": { "current": "whsec_...", "previous": "whsec_...",
 *                                   "rotatedAt": <epoch ms>, "previousUntil": <epoch ms> } },
 *     "payloadHashKey": "<base64 of 32 random bytes>" }
 *
 * `rotate` records when it rotated and when the overlap ends (`previousUntil`); intake accepts
 * `previous` only before then (activeSecrets). A file written before overlaps were recorded has a
 * `previous` with no end: it is read as it is and that previous counts as ended (it verifies
 * nothing), the safe reading of an overlap whose start is unknown; rotate again to open a bounded one.
 *
 * Created on first use with a fresh Standard Webhooks secret (`whsec_` + base64 of 24 random bytes)
 * for each configured source, mode 0600 in a 0700 folder. Values never appear in errors or logs.
 * `get` serves from memory while the file is the one it read (same inode, modification time and
 * size: one `stat` per call, cheap locally) and reads it again once it changed, so a rotation or a
 * `secrets retire` by another process (the CLI) reaches the running stack's very next request,
 * whatever it had cached: a retired secret is never served as current from memory. `refresh`
 * re-reads the file unconditionally.
 */
import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type SecretsPort, UnknownSecretError } from '../adapters/secrets';
import { HookledgerError } from '../core/errors';
import type { SigningSecrets } from '../core/schemes/types';

export const DEFAULT_SECRETS_FILE = '.hookledger/secrets.json';

/** The rotation overlap when `rotate` is given none: the config's default (secretOverlapHours 72). */
export const DEFAULT_SECRET_OVERLAP_MS = 72 * 3_600_000;

/** One source in the file: its secrets plus when it was last rotated (never a value in logs). */
export interface SourceSecretsEntry extends SigningSecrets {
  readonly rotatedAt?: number;
  /**
   * The provider API's credential of a source with `gapCheck` (`hookledger gaps`): set by hand, kept
   * across rotations, never generated, never printed.
   */
  readonly apiKey?: string;
}

export interface SecretsFile {
  readonly sources: Record<string, SourceSecretsEntry>;
  /** HTTP destination consumers' signing secrets (the consumer signs, its receiver verifies). */
  readonly consumers?: Record<string, SourceSecretsEntry>;
  /** The deployment's payload-hash key (see SecretsPort.payloadHashKey); created with the file. */
  readonly payloadHashKey?: string;
}

export class SecretsFileError extends HookledgerError {
  override readonly name = 'SecretsFileError';
}

/** A new Standard Webhooks signing secret. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export interface FileSecretsOptions {
  /** Path of the JSON file, e.g. DEFAULT_SECRETS_FILE resolved against the project root. */
  readonly path: string;
  /** The configured sources; each gets a secret when the file lacks one. */
  readonly sourceIds: readonly string[];
  /** The configured HTTP consumers; each gets a secret when the file lacks one. @default - none */
  readonly consumerIds?: readonly string[];
  /** Epoch ms; default Date.now. Stamps rotations and decides whether an overlap is still open. */
  readonly clock?: () => number;
}

type Section = 'sources' | 'consumers';

export class FileSecrets implements SecretsPort {
  private readonly path: string;
  private readonly sourceIds: readonly string[];
  private readonly consumerIds: readonly string[];
  private readonly clock: () => number;
  private cache: SecretsFile | undefined;
  /** Which file the cache was read from (inode, mtime, size), taken before reading; undefined after a write of ours. */
  private cachedStamp: string | undefined;
  /** Serialises file writes within this process. */
  private writing: Promise<unknown> = Promise.resolve();

  constructor(options: FileSecretsOptions) {
    this.path = options.path;
    this.sourceIds = options.sourceIds;
    this.consumerIds = options.consumerIds ?? [];
    this.clock = options.clock ?? Date.now;
  }

  async get(sourceId: string, section: Section = 'sources'): Promise<SigningSecrets> {
    // Another process (the CLI's rotate or retire) may have replaced the file since it was read.
    if (this.cache === undefined || this.cachedStamp === undefined || (await this.stamp()) !== this.cachedStamp) {
      return this.refresh(sourceId, section);
    }
    return this.pick(this.cache, sourceId, section);
  }

  async refresh(sourceId: string, section: Section = 'sources'): Promise<SigningSecrets> {
    this.cache = await this.load();
    return this.pick(this.cache, sourceId, section);
  }

  /**
   * The HTTP consumers' signing secrets, with the same rotation and retirement as the sources'.
   * `get` re-reads the file on every call (cheap locally), so a rotation by the CLI signs the next delivery.
   */
  consumerSecrets() {
    return {
      get: (consumerId: string) => this.refresh(consumerId, 'consumers'),
      rotate: (consumerId: string, overlapMs?: number) => this.rotate(consumerId, overlapMs, 'consumers'),
      retire: (consumerId: string) => this.retire(consumerId, 'consumers'),
    };
  }

  /** The source's provider API key (`sources.<id>.apiKey`), read fresh from the file. */
  async apiKey(sourceId: string): Promise<string> {
    this.cache = await this.load();
    const key = this.cache.sources[sourceId]?.apiKey;
    if (!key) throw new UnknownSecretError(`no provider API key for source "${sourceId}": set sources.${sourceId}.apiKey in ${this.path}`);
    return key;
  }

  async payloadHashKey(): Promise<Buffer> {
    this.cache ??= await this.load();
    const key = this.cache.payloadHashKey;
    if (!key) throw new UnknownSecretError(`no payloadHashKey in ${this.path}`);
    return Buffer.from(key, 'utf8');
  }

  /**
   * Makes `value` (the provider's, checked by the caller) or a new generated secret current and keeps
   * the old one as previous until `overlapMs` from now; an older previous is dropped. Records
   * `rotatedAt` and `previousUntil` with the values.
   */
  async rotate(
    sourceId: string,
    overlapMs: number = DEFAULT_SECRET_OVERLAP_MS,
    section: Section = 'sources',
    value?: string,
  ): Promise<SigningSecrets> {
    if (value === '') throw new RangeError('a rotated-to secret cannot be empty');
    if (!Number.isSafeInteger(overlapMs) || overlapMs <= 0) throw new RangeError(`overlapMs must be a positive integer, got ${overlapMs}`);
    return this.locked(async () => {
      const file = await this.fill();
      const old = this.pick(file, sourceId, section);
      const { apiKey } = this.entry(file, sourceId, section);
      const rotatedAt = this.clock();
      const entry: SourceSecretsEntry = {
        ...(apiKey !== undefined ? { apiKey } : {}),
        current: value ?? newWebhookSecret(),
        previous: old.current,
        rotatedAt,
        previousUntil: rotatedAt + overlapMs,
      };
      await this.update(file, sourceId, entry, section);
      return this.pick(this.cache as SecretsFile, sourceId, section);
    });
  }

  /** Ends the overlap at once: removes `previous` and its end. `retired` is false when there was none. */
  async retire(sourceId: string, section: Section = 'sources'): Promise<{ readonly retired: boolean }> {
    return this.locked(async () => {
      const file = await this.fill();
      const { previous, previousUntil: _, ...kept } = this.entry(file, sourceId, section);
      await this.update(file, sourceId, kept, section);
      return { retired: previous !== undefined };
    });
  }

  private async update(file: SecretsFile, sourceId: string, entry: SourceSecretsEntry, section: Section = 'sources'): Promise<void> {
    const next: SecretsFile = { ...file, [section]: { ...file[section], [sourceId]: entry } };
    await this.save(next);
    this.cache = next;
  }

  /** The file's identity now: a rename (every write) changes the inode, an edit in place the mtime or size. */
  private async stamp(): Promise<string | undefined> {
    let stats: Stats;
    try {
      stats = await stat(this.path);
    } catch {
      return undefined; // gone or unreadable: the next read says why
    }
    return `${stats.ino}:${stats.mtimeMs}:${stats.size}`;
  }

  /** Runs file updates of this process one at a time. */
  private locked<T>(update: () => Promise<T>): Promise<T> {
    const run = this.writing.then(update);
    this.writing = run.catch(() => undefined);
    return run;
  }

  private entry(file: SecretsFile, sourceId: string, section: Section = 'sources'): SourceSecretsEntry {
    const entry = file[section]?.[sourceId];
    if (!entry)
      throw new UnknownSecretError(`no signing secret for ${section === 'sources' ? 'source' : 'consumer'} "${sourceId}" in ${this.path}`);
    return entry;
  }

  /** The port's view of an entry: the secrets and the overlap's end, not the bookkeeping. */
  private pick(file: SecretsFile, sourceId: string, section: Section = 'sources'): SigningSecrets {
    const { current, previous, previousUntil } = this.entry(file, sourceId, section);
    if (previous === undefined) return { current };
    return previousUntil === undefined ? { current, previous } : { current, previous, previousUntil };
  }

  /**
   * Reads the file, creating it or adding missing sources; tightens a too-open mode. The file's
   * identity is taken before the read, so a change racing the read is seen at the next `get`.
   */
  private async load(): Promise<SecretsFile> {
    const stamp = await this.stamp();
    const existing = await this.read();
    if (
      existing?.payloadHashKey &&
      this.sourceIds.every((id) => existing.sources[id]) &&
      this.consumerIds.every((id) => existing.consumers?.[id])
    ) {
      await this.tighten();
      this.cachedStamp = stamp;
      return existing;
    }
    return this.locked(() => this.fill());
  }

  /** Under the lock: the file with a secret for every configured source, written when it lacked one. */
  private async fill(): Promise<SecretsFile> {
    const current = (await this.read()) ?? { sources: {} };
    const missing = this.sourceIds.filter((id) => !current.sources[id]);
    const missingConsumers = this.consumerIds.filter((id) => !current.consumers?.[id]);
    if (missing.length === 0 && missingConsumers.length === 0 && current.payloadHashKey) return current;
    const sources: Record<string, SourceSecretsEntry> = { ...current.sources };
    for (const id of missing) sources[id] = { current: newWebhookSecret() };
    const consumers: Record<string, SourceSecretsEntry> = { ...current.consumers };
    for (const id of missingConsumers) consumers[id] = { current: newWebhookSecret() };
    const next: SecretsFile = {
      sources,
      ...(Object.keys(consumers).length > 0 ? { consumers } : {}),
      payloadHashKey: current.payloadHashKey ?? randomBytes(32).toString('base64'),
    };
    await this.save(next);
    return next;
  }

  private async read(): Promise<SecretsFile | undefined> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new SecretsFileError(`cannot read ${this.path}`, { cause: error });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // No cause: a JSON parse error can quote the file's content.
      throw new SecretsFileError(`${this.path} is not valid JSON; fix or delete it (a deleted file is re-created with new secrets)`);
    }
    return validate(parsed, this.path);
  }

  private async save(file: SecretsFile): Promise<void> {
    // What was cached is no longer the file's content as read: the next `get` reads it again.
    this.cachedStamp = undefined;
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    await chmod(temporary, 0o600); // the umask may have loosened `mode`
    await rename(temporary, this.path);
  }

  private async tighten(): Promise<void> {
    const { mode } = await stat(this.path);
    if ((mode & 0o077) !== 0) await chmod(this.path, 0o600);
  }
}

function validate(parsed: unknown, path: string): SecretsFile {
  const bad = (what: string) =>
    new SecretsFileError(
      `${path}: ${what}; expected { "sources": { "<id>": { "current": "...", "previous"?: "...", "previousUntil"?: <epoch ms>, "rotatedAt"?: <epoch ms> } } }`,
    );
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw bad('not an object');
  const sources = (parsed as { sources?: unknown }).sources;
  if (!sources || typeof sources !== 'object' || Array.isArray(sources)) throw bad('"sources" is missing or not an object');
  const result = validateEntries(sources as Record<string, unknown>, 'source', bad);
  const consumersRaw = (parsed as { consumers?: unknown }).consumers;
  if (consumersRaw !== undefined && (!consumersRaw || typeof consumersRaw !== 'object' || Array.isArray(consumersRaw))) {
    throw bad('"consumers" is not an object');
  }
  const consumers = consumersRaw === undefined ? undefined : validateEntries(consumersRaw as Record<string, unknown>, 'consumer', bad);
  const hashKey = (parsed as { payloadHashKey?: unknown }).payloadHashKey;
  if (hashKey !== undefined && (typeof hashKey !== 'string' || hashKey.length < 32)) {
    throw bad('"payloadHashKey" must be a string of at least 32 characters');
  }
  return {
    sources: result,
    ...(consumers !== undefined ? { consumers } : {}),
    ...(hashKey !== undefined ? { payloadHashKey: hashKey } : {}),
  };
}

function validateEntries(
  entries: Record<string, unknown>,
  what: 'source' | 'consumer',
  bad: (what: string) => SecretsFileError,
): Record<string, SourceSecretsEntry> {
  const result: Record<string, SourceSecretsEntry> = {};
  for (const [id, value] of Object.entries(entries)) {
    const entry = value as { current?: unknown; previous?: unknown; previousUntil?: unknown; rotatedAt?: unknown; apiKey?: unknown } | null;
    if (!entry || typeof entry.current !== 'string' || entry.current === '') throw bad(`${what} "${id}" has no "current" string`);
    if (entry.apiKey !== undefined && (typeof entry.apiKey !== 'string' || entry.apiKey === '')) {
      throw bad(`${what} "${id}" has an "apiKey" that is not a non-empty string`);
    }
    if (entry.previous !== undefined && typeof entry.previous !== 'string') throw bad(`${what} "${id}" has a non-string "previous"`);
    for (const key of ['previousUntil', 'rotatedAt'] as const) {
      const time = entry[key];
      if (time !== undefined && (typeof time !== 'number' || !Number.isSafeInteger(time) || time < 0)) {
        throw bad(`${what} "${id}" has a "${key}" that is not epoch ms`);
      }
    }
    result[id] = {
      current: entry.current,
      ...(entry.previous !== undefined ? { previous: entry.previous } : {}),
      // An end without a previous secret ends nothing: dropped.
      ...(entry.previous !== undefined && entry.previousUntil !== undefined ? { previousUntil: entry.previousUntil as number } : {}),
      ...(entry.rotatedAt !== undefined ? { rotatedAt: entry.rotatedAt as number } : {}),
      ...(entry.apiKey !== undefined ? { apiKey: entry.apiKey as string } : {}),
    };
  }
  return result;
}
