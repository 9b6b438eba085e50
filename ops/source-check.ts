/**
 * A source's attribution checked against its provider's sample event (core/providers/samples.ts,
 * what `send --provider` posts) before any webhook arrives: each `{ body: path }` read as intake reads
 * it (core/body.ts readBody in the source's body format, adapters/dotted-path.ts readPath; core/ may
 * not import the adapters, so the check lives here), each `{ header: name }` looked for among the
 * sample's headers and the ones its scheme signs. A path the sample lacks, or that reaches no id, is a
 * finding naming the source, field, path and the fields the sample has; `npm start` prints them and
 * `hookledger doctor` shows them as warnings. Samples are examples, so a finding is a warning: the
 * provider's real deliveries may carry a field the sample leaves out.
 */
import { readPath } from '../adapters/dotted-path';
import { type BodyFormat, BodyFormatError, mediaTypeConflict, mediaTypeOf, readBody } from '../core/body';
import type { EventIdSource, HookledgerConfig, SourceConfig } from '../core/config/schema';
import { isIdValue, leafPaths } from '../core/providers/attribution-hints';
import { renderSample } from '../core/providers/samples';
import { type SchemeConfigInput, signedBody, signedParts } from '../core/schemes';

/** How many of the sample's fields a finding lists (a form or a Meta payload has dozens). */
export const SAMPLE_FIELDS_SHOWN = 20;

/** The values a sample is rendered with for a check: any will do, the same every time. */
export const SAMPLE_VALUES = { eventId: 'evt_01J8K7M2Q4', now: Date.parse('2026-11-30T08:00:00Z') } as const;
/** Schemes that sign inside the body (Mailgun's token, Graph's clientState) need a secret to put their fields there; never a real one. */
const SAMPLE_SECRET = 'sample-secret-0123456789abcdef';

export type AttributionField = keyof SourceConfig['attribution'];

export interface SampleFinding {
  readonly source: string;
  readonly provider: string;
  /** Absent when the whole sample is the finding (none, or another body format). */
  readonly field?: AttributionField;
  /** `body.<path>` or `header <name>`. */
  readonly location?: string;
  /** The sample's fields (dotted leaf paths) or, for a header, its headers; at most SAMPLE_FIELDS_SHOWN. */
  readonly sampleFields: readonly string[];
  readonly message: string;
}

/** The sample as `send --provider` posts it to this source, read as intake reads it. */
export type SampleRead =
  | { readonly kind: 'none' }
  | { readonly kind: 'unreadable'; readonly reason: string }
  | {
      readonly kind: 'read';
      readonly body: unknown;
      /** Lower-case names: the sample's own and the ones the scheme's signature adds. */
      readonly headers: ReadonlySet<string>;
      readonly sampleHeaders: readonly string[];
      readonly headerValues: Readonly<Record<string, string>>;
    };

/** What reading a sample needs of a source: a configured one, or a preset's before any source exists (`sources add`). */
export interface SampleReader {
  readonly provider?: string;
  readonly scheme: SchemeConfigInput;
  readonly bodyFormat: BodyFormat;
}

export function readSample(source: SampleReader): SampleRead {
  const provider = source.provider ?? '';
  const sample = renderSample(provider, SAMPLE_VALUES);
  if (!sample) return { kind: 'none' };
  const format = source.bodyFormat;
  if (mediaTypeConflict(sample.contentType, format, provider)) {
    return {
      kind: 'unreadable',
      reason: `the ${provider} sample is ${mediaTypeOf(sample.contentType)}, but the source reads its body as ${format}`,
    };
  }
  let body: unknown;
  try {
    const raw = signedBody(source.scheme, {
      ...SAMPLE_VALUES,
      body: Buffer.from(sample.body, 'utf8'),
      secret: SAMPLE_SECRET,
      messageId: SAMPLE_VALUES.eventId,
    });
    body = readBody(raw, format);
  } catch (error) {
    if (!(error instanceof BodyFormatError)) throw error;
    return { kind: 'unreadable', reason: `the ${provider} sample cannot be read as ${format} (${error.message})` };
  }
  const sampleHeaders = Object.keys(sample.headers ?? {}).map((name) => name.toLowerCase());
  // Signature headers are always sent: the scheme puts them on every request.
  const headers = new Set([...sampleHeaders, ...signedParts(source.scheme).headers.map((name) => name.toLowerCase())]);
  return { kind: 'read', body, headers, sampleHeaders, headerValues: sample.headers ?? {} };
}

/** At most SAMPLE_FIELDS_SHOWN of them, and the text a message lists them with. */
export function shownFields(all: readonly string[]): { shown: string[]; text: string } {
  const shown = all.slice(0, SAMPLE_FIELDS_SHOWN);
  const more = all.length - shown.length;
  return { shown, text: `${shown.join(', ')}${more > 0 ? ` (and ${more} more)` : ''}` };
}

/** The findings of one source; none for a source without a preset. */
export function checkSource(source: SourceConfig): SampleFinding[] {
  const provider = source.provider;
  if (provider === undefined) return [];
  const sample = readSample(source);
  if (sample.kind === 'none') {
    const message = `source "${source.id}": ${provider} has no sample event in hookledger, so its attribution paths are checked only when a real delivery arrives`;
    return [{ source: source.id, provider, sampleFields: [], message }];
  }
  if (sample.kind === 'unreadable') {
    return [
      {
        source: source.id,
        provider,
        sampleFields: [],
        message: `source "${source.id}": ${sample.reason}; its attribution paths cannot be checked against it`,
      },
    ];
  }
  const findings: SampleFinding[] = [];
  for (const [field, where] of Object.entries(source.attribution) as [AttributionField, EventIdSource][]) {
    const finding = checkField(source, provider, sample, field, where);
    if (finding) findings.push(finding);
  }
  return findings;
}

function checkField(
  source: SourceConfig,
  provider: string,
  sample: Extract<SampleRead, { kind: 'read' }>,
  field: AttributionField,
  where: EventIdSource,
): SampleFinding | undefined {
  const about = { source: source.id, provider, field };
  const lacks = `the ${provider} sample event does not`;
  const refused = 'a delivery without it is refused (400 missing_attribution)';
  if ('header' in where) {
    if (sample.headers.has(where.header.toLowerCase())) return undefined;
    const { shown, text } = shownFields(sample.sampleHeaders);
    const message = `source "${source.id}" reads ${field} from header ${where.header}, which ${lacks} send: ${refused}; the sample's headers: ${text || 'none beside the signature'}`;
    return { ...about, location: `header ${where.header}`, sampleFields: shown, message };
  }
  if (!('body' in where)) return undefined;
  const value = readPath(sample.body, where.body);
  if (isIdValue(value)) return undefined;
  const { shown, text } = shownFields(leafPaths(sample.body).map((leaf) => leaf.path));
  const reads = `source "${source.id}" reads ${field} from body.${where.body}`;
  const message =
    value === undefined || value === null
      ? `${reads}, which ${lacks} have: ${refused}; the sample's fields: ${text}`
      : `${reads}, which is ${kindOf(value)} in the ${provider} sample event, not an id (a string or a whole number): a delivery like it is refused (400 invalid_attribution); the sample's fields: ${text}`;
  return { ...about, location: `body.${where.body}`, sampleFields: shown, message };
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number') return 'a fractional or too large number';
  if (typeof value === 'string') return 'a string with spaces or control characters, or over 200 characters,';
  return `a ${typeof value}`;
}

/** Every source's findings, in config order: what `npm start` prints as warnings and `doctor` as rows. */
export function sampleFindings(config: Pick<HookledgerConfig, 'sources'>): SampleFinding[] {
  return config.sources.flatMap(checkSource);
}

/**
 * What `npm start` prints before the stack starts: a `warning:` line per finding, then once, when a
 * path was missed, that samples are examples and where entries whose paths resolve come from.
 */
export function sampleWarnings(config: Pick<HookledgerConfig, 'sources'>): string[] {
  const findings = sampleFindings(config);
  const lines = findings.map((finding) => `warning: ${finding.message}`);
  if (findings.some((finding) => finding.field !== undefined)) {
    lines.push(
      '  the samples are examples: your deliveries may carry a field they lack; `npx hookledger sources add --provider <name>` prints paths that resolve in them',
    );
  }
  return lines;
}
