/**
 * `hookledger sources add --provider <name>`: a complete source entry for hookledger.config.ts's
 * `sources: [...]`, as TypeScript object literal text with a comment per attribution field saying
 * what it reads. What the preset leaves to the source (its tenant, always its key) is read from the
 * provider's sample event where it has a field that fits (core/providers/attribution-hints.ts), else
 * a fixed value the comment says to change; `events` is the sample's event type. With `--write` the
 * entry goes into the file's sources array, written to a temporary file and renamed over it, or
 * nothing is written at all.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { readPath } from '../adapters/dotted-path';
import { sourceSchema } from '../core/config/schema';
import { isIdValue, type SourceField, type Suggestion, suggestField } from '../core/providers/attribution-hints';
import { closeProviderNames, type EventIdLocation, type FieldLocation, findProvider, type ProviderPreset } from '../core/providers/catalog';
import { schemeBodyFormat, signedParts } from '../core/schemes';
import { ConflictError, UsageError } from './errors';
import { readSample, type SampleRead } from './source-check';

export interface SourceEntryRequest {
  readonly provider: string;
  /** @default the provider's name */
  readonly id?: string;
}

export interface SourceEntry {
  readonly id: string;
  readonly provider: string;
  /** The fields the preset leaves to the source, as the entry gives them. */
  readonly attribution: Partial<Record<SourceField, FieldLocation>>;
  /** The sample's event type; absent when the provider has no sample. */
  readonly events?: readonly string[];
  /** The object literal, indented for `sources: [` at the top of `defineConfig({`, ending in `},`. */
  readonly text: string;
}

/** Where the entry's lines start: inside `export default defineConfig({ sources: [` as the shipped file is laid out. */
const ENTRY_INDENT = '    ';
const SOURCE_FIELDS: readonly SourceField[] = ['tenantId', 'keyId'];
const WHAT_FIELD_READS: Readonly<Record<SourceField, string>> = {
  tenantId: 'the account the event belongs to',
  keyId: 'the key, app or subscription the event came through',
};
const WHAT_FITS: Readonly<Record<SourceField, string>> = {
  tenantId: 'a tenant (an account, organisation or workspace)',
  keyId: 'a key (an app, API key or subscription)',
};

/** The catalog's preset, or the refusal `send --provider` gives: the close names, or where the catalog is listed. */
export function presetNamed(provider: string): ProviderPreset {
  const preset = findProvider(provider);
  if (preset) return preset;
  const close = closeProviderNames(provider);
  throw new UsageError(
    `unknown provider "${provider}"` +
      (close.length > 0 ? `; did you mean ${close.map((n) => `"${n}"`).join(', ')}?` : '; `npx hookledger providers` lists the catalog'),
  );
}

export function sourceEntry(request: SourceEntryRequest): SourceEntry {
  const preset = presetNamed(request.provider);
  const id = request.id ?? preset.name;
  const sample = readSample({ provider: preset.name, scheme: preset.scheme, bodyFormat: schemeBodyFormat(preset.scheme).format });
  const parts = signedParts(preset.scheme);
  // Where the body is not signed (Mailgun), only the fields the signature covers may be read.
  const readable = (path: string) => parts.body !== false || (parts.bodyFields ?? []).includes(path);
  const body = sample.kind === 'read' ? sample.body : undefined;
  const suggested: Partial<Record<SourceField, Suggestion>> = {};
  for (const field of SOURCE_FIELDS) {
    if (preset[field] === undefined) suggested[field] = suggestField(preset.name, field, body, readable, id);
  }
  const attribution = Object.fromEntries(Object.entries(suggested).map(([field, s]) => [field, s.location]));
  const type = sample.kind === 'read' ? sampleEventType(preset.eventType, sample) : undefined;
  const verifyToken = preset.handshake === 'meta-hub-challenge' ? `vt_${randomBytes(12).toString('hex')}` : undefined;
  const entry = { id, provider: preset.name, ...(verifyToken ? { verifyToken } : {}), attribution, ...(type ? { events: [type] } : {}) };
  const parsed = sourceSchema.safeParse(entry);
  if (!parsed.success) {
    throw new UsageError(`the entry for ${preset.name} would not load: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  }
  const text = entryText({ preset, id, sample, suggested, type, verifyToken });
  return { id, provider: preset.name, attribution, ...(type ? { events: [type] } : {}), text };
}

/**
 * The sample's event type, read where the preset reads it. None for a preset whose type is a fixed
 * value (Mailgun, Dropbox): that is no name the provider sends, so no `events` entry either.
 */
function sampleEventType(at: FieldLocation, sample: Extract<SampleRead, { kind: 'read' }>): string | undefined {
  if ('value' in at) return undefined;
  const value = 'header' in at ? sample.headerValues[at.header] : readPath(sample.body, at.body);
  return isIdValue(value) ? String(value) : undefined;
}

interface EntryParts {
  readonly preset: ProviderPreset;
  readonly id: string;
  readonly sample: SampleRead;
  readonly suggested: Partial<Record<SourceField, Suggestion>>;
  readonly type: string | undefined;
  readonly verifyToken: string | undefined;
}

function entryText({ preset, id, sample, suggested, type, verifyToken }: EntryParts): string {
  const lines = ['{', `  id: ${quote(id)},`, `  provider: ${quote(preset.name)},`];
  if (verifyToken) {
    lines.push(`  // The token you type as 'Verify token' in the app dashboard (sent back in the clear: not a secret)`);
    lines.push(`  verifyToken: ${quote(verifyToken)},`);
  }
  lines.push('  attribution: {');
  if (sample.kind !== 'read') {
    lines.push(
      sample.kind === 'none'
        ? `    // ${preset.name} has no sample event in hookledger: check the paths against a real delivery`
        : `    // ${sample.reason}: check the paths against a real delivery`,
    );
  }
  const sampleValue = (at: EventIdLocation) =>
    sample.kind === 'read' && 'body' in at
      ? readPath(sample.body, at.body)
      : sample.kind === 'read' && 'header' in at
        ? sample.headerValues[at.header]
        : undefined;
  lines.push(`    // eventId: ${presetComment(preset, preset.eventId)}`);
  lines.push(`    // eventType: ${presetComment(preset, preset.eventType, sampleValue(preset.eventType))}`);
  for (const field of SOURCE_FIELDS) {
    const given = suggested[field];
    const fromPreset = preset[field];
    if (fromPreset) lines.push(`    // ${field}: ${presetComment(preset, fromPreset, sampleValue(fromPreset))}`);
    if (!given) continue;
    lines.push(`    // ${field}: ${suggestionComment(preset, field, given, sample.kind === 'read')}`);
    lines.push(`    ${field}: ${locationLiteral(given.location)},`);
  }
  lines.push('  },');
  const events = `The event types this endpoint receives, as ${preset.title} names them ('*' for all)`;
  if (type) lines.push(`  // ${events}; the sample's:`, `  events: [${quote(type)}],`);
  else lines.push(`  // events: ['<type>'], // ${events}`);
  lines.push('},');
  return lines.map((line) => `${ENTRY_INDENT}${line}`).join('\n');
}

function presetComment(preset: ProviderPreset, at: EventIdLocation, value?: unknown): string {
  if ('derived' in at) return `derived from the signed body (the preset's: ${preset.title} sends no event id)`;
  const seen = isIdValue(value) ? `; ${JSON.stringify(value)} in the sample` : '';
  return `${describeLocation(at)} (the preset's${seen})`;
}

function suggestionComment(preset: ProviderPreset, field: SourceField, given: Suggestion, hasSample: boolean): string {
  if (given.how === 'fixed') {
    const why = hasSample ? `${preset.title}'s sample has no field naming ${WHAT_FITS[field]}: ` : '';
    return `${why}a fixed value; change it, or read a field your deliveries carry`;
  }
  const seen = given.sampleValue !== undefined ? ` (${JSON.stringify(given.sampleValue)} in the sample)` : '';
  return `${describeLocation(given.location)}${seen}: ${WHAT_FIELD_READS[field]}`;
}

const describeLocation = (at: FieldLocation): string =>
  'body' in at ? `body ${at.body}` : 'header' in at ? `header ${at.header}` : `always ${quote(at.value)}`;

/** `{ body: 'data.id' }`: a location as the config file writes it. */
export function locationLiteral(at: FieldLocation): string {
  const [kind, value] = Object.entries(at)[0] as [string, string];
  return `{ ${kind}: ${quote(value)} }`;
}

const quote = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

// --- writing it into the config file ---------------------------------------------------------------

/**
 * Inserts the entry as the last of the file's `sources: [...]`, refusing an id already there or a file
 * whose sources are not written out as one array literal. Written whole to a temporary file beside it
 * and renamed over it: a reader sees the old file or the new one, never half of either.
 */
export async function addSourceEntry(file: string, entry: SourceEntry): Promise<void> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read ${file}: ${error.code ?? error.message}`);
  });
  const span = sourcesArray(text);
  if (!span) {
    throw new ConflictError(
      `${file} has no \`sources: [ ... ]\` array written out in it, so the entry cannot be inserted safely; ` +
        'run without --write and paste the entry where your sources are',
    );
  }
  const existing = new RegExp(`\\bid\\s*:\\s*(['"\`])${entry.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\1`);
  if (existing.test(text.slice(span.open, span.close))) {
    throw new ConflictError(`source "${entry.id}" is already in ${file}'s sources; pick another id with --id`);
  }
  const updated = insertEntry(text, span, entry.text);
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, updated, { flag: 'wx' });
    await rename(temporary, file);
  } finally {
    await rm(temporary, { force: true });
  }
}

/** The `[` and `]` of the one `sources: [` the file's code (not its strings or comments) holds. */
function sourcesArray(text: string): { open: number; close: number } | undefined {
  const code = codeMask(text);
  const opens = [...text.matchAll(/\bsources\s*:\s*\[/g)].filter((m) => code[m.index]).map((m) => m.index + m[0].length - 1);
  if (opens.length !== 1) return undefined;
  const open = opens[0] as number;
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (!code[i]) continue;
    const c = text[i] as string;
    if ('[{('.includes(c)) depth++;
    else if (']})'.includes(c) && --depth === 0) return c === ']' ? { open, close: i } : undefined;
  }
  return undefined;
}

/** Per character: true where it is code, false inside a string, template or comment. */
function codeMask(text: string): boolean[] {
  const mask = new Array<boolean>(text.length).fill(true);
  let i = 0;
  const skipTo = (end: number) => {
    for (; i < end; i++) mask[i] = false;
  };
  while (i < text.length) {
    const two = text.slice(i, i + 2);
    if (two === '//') skipTo(text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i));
    else if (two === '/*') skipTo(text.indexOf('*/', i) === -1 ? text.length : text.indexOf('*/', i) + 2);
    else if (`'"\``.includes(text[i] as string)) {
      const quoteChar = text[i];
      let j = i + 1;
      while (j < text.length && text[j] !== quoteChar) j += text[j] === '\\' ? 2 : 1;
      skipTo(Math.min(j + 1, text.length));
    } else i++;
  }
  return mask;
}

/** The entry after the array's last element (a comma added after it if it has none), before the `]`. */
function insertEntry(text: string, span: { open: number; close: number }, entryText: string): string {
  let last = span.close - 1;
  while (last > span.open && /\s/.test(text[last] as string)) last--;
  const comma = last === span.open || text[last] === ',' ? '' : ',';
  const lineStart = text.lastIndexOf('\n', span.close) + 1;
  const closeOnOwnLine = lineStart > last && /^\s*$/.test(text.slice(lineStart, span.close));
  if (closeOnOwnLine) return `${text.slice(0, last + 1)}${comma}${text.slice(last + 1, lineStart)}${entryText}\n${text.slice(lineStart)}`;
  const indent = /^\s*/.exec(text.slice(text.lastIndexOf('\n', span.open) + 1))?.[0] ?? '';
  return `${text.slice(0, last + 1)}${comma}\n${entryText}\n${indent}${text.slice(span.close)}`;
}
