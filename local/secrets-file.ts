/**
 * SecretsPort over a git-ignored JSON file, the local stand-in for Secrets Manager:
 *
 *   { "sources": { "<sourceId>": { "current": "whsec_...", "previous": "whsec_..." } },
 *     "payloadHashKey": "<base64 of 32 random bytes>" }
 *
 * Created on first use with a fresh Standard Webhooks secret (`whsec_` + base64 of 24 random bytes)
 * for each configured source, mode 0600 in a 0700 folder. Values never appear in errors or logs.
 * `get` serves from memory; `refresh` re-reads the file, so a rotation written by another process
 * (the CLI) is picked up after a failed verification, as with Secrets Manager.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { UnknownSecretError, type SecretsPort } from '../lambdas/shared/secrets';
import type { SigningSecrets } from '../lambdas/shared/verify/types';

export const DEFAULT_SECRETS_FILE = '.hookledger/secrets.json';

export interface SecretsFile {
  readonly sources: Record<string, SigningSecrets>;
  /** The deployment's payload-hash key (see SecretsPort.payloadHashKey); created with the file. */
  readonly payloadHashKey?: string;
}

export class SecretsFileError extends Error {
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
}

export class FileSecrets implements SecretsPort {
  private readonly path: string;
  private readonly sourceIds: readonly string[];
  private cache: SecretsFile | undefined;
  /** Serialises file writes within this process. */
  private writing: Promise<unknown> = Promise.resolve();

  constructor(options: FileSecretsOptions) {
    this.path = options.path;
    this.sourceIds = options.sourceIds;
  }

  async get(sourceId: string): Promise<SigningSecrets> {
    this.cache ??= await this.load();
    return this.pick(this.cache, sourceId);
  }

  async refresh(sourceId: string): Promise<SigningSecrets> {
    this.cache = await this.load();
    return this.pick(this.cache, sourceId);
  }

  async payloadHashKey(): Promise<Buffer> {
    this.cache ??= await this.load();
    const key = this.cache.payloadHashKey;
    if (!key) throw new UnknownSecretError(`no payloadHashKey in ${this.path}`);
    return Buffer.from(key, 'utf8');
  }

  /** Makes a new current secret and keeps the old one as previous (the overlap window). */
  async rotate(sourceId: string): Promise<SigningSecrets> {
    return this.locked(async () => {
      const file = await this.fill();
      const old = this.pick(file, sourceId);
      const rotated: SigningSecrets = { current: newWebhookSecret(), previous: old.current };
      const next: SecretsFile = { ...file, sources: { ...file.sources, [sourceId]: rotated } };
      await this.save(next);
      this.cache = next;
      return rotated;
    });
  }

  /** Runs file updates of this process one at a time. */
  private locked<T>(update: () => Promise<T>): Promise<T> {
    const run = this.writing.then(update);
    this.writing = run.catch(() => undefined);
    return run;
  }

  private pick(file: SecretsFile, sourceId: string): SigningSecrets {
    const secrets = file.sources[sourceId];
    if (!secrets) throw new UnknownSecretError(`no signing secret for source "${sourceId}" in ${this.path}`);
    return secrets;
  }

  /** Reads the file, creating it or adding missing sources; tightens a too-open mode. */
  private async load(): Promise<SecretsFile> {
    const existing = await this.read();
    if (existing?.payloadHashKey && this.sourceIds.every((id) => existing.sources[id])) {
      await this.tighten();
      return existing;
    }
    return this.locked(() => this.fill());
  }

  /** Under the lock: the file with a secret for every configured source, written when it lacked one. */
  private async fill(): Promise<SecretsFile> {
    const current = (await this.read()) ?? { sources: {} };
    const missing = this.sourceIds.filter((id) => !current.sources[id]);
    if (missing.length === 0 && current.payloadHashKey) return current;
    const sources = { ...current.sources };
    for (const id of missing) sources[id] = { current: newWebhookSecret() };
    const next: SecretsFile = { sources, payloadHashKey: current.payloadHashKey ?? randomBytes(32).toString('base64') };
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
  const bad = (what: string) => new SecretsFileError(`${path}: ${what}; expected { "sources": { "<id>": { "current": "...", "previous"?: "..." } } }`);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw bad('not an object');
  const sources = (parsed as { sources?: unknown }).sources;
  if (!sources || typeof sources !== 'object' || Array.isArray(sources)) throw bad('"sources" is missing or not an object');
  const result: Record<string, SigningSecrets> = {};
  for (const [id, value] of Object.entries(sources as Record<string, unknown>)) {
    const entry = value as { current?: unknown; previous?: unknown } | null;
    if (!entry || typeof entry.current !== 'string' || entry.current === '') throw bad(`source "${id}" has no "current" string`);
    if (entry.previous !== undefined && typeof entry.previous !== 'string') throw bad(`source "${id}" has a non-string "previous"`);
    result[id] = entry.previous === undefined ? { current: entry.current } : { current: entry.current, previous: entry.previous };
  }
  const hashKey = (parsed as { payloadHashKey?: unknown }).payloadHashKey;
  if (hashKey !== undefined && (typeof hashKey !== 'string' || hashKey.length < 32)) {
    throw bad('"payloadHashKey" must be a string of at least 32 characters');
  }
  return hashKey === undefined ? { sources: result } : { sources: result, payloadHashKey: hashKey };
}
