/**
 * Send: a signed test webhook to the stack's intake, as the provider would send it.
 *
 *   --source    a sample body that puts each attribution field where the source's config reads it
 *               from (a body path or a header), so any source accepts it; or a file, byte for byte.
 *   --provider  the provider's own sample event (core/providers/samples.ts: its body format,
 *               content type and unsigned headers), signed with the preset's scheme for the source
 *               configured with that provider; attribution fields the source reads from elsewhere
 *               (a tenant path of its own) are added to the sample before it is signed.
 *
 * Signing: every configured scheme (core/schemes), over the URL the request is sent to where the
 * scheme signs the URL (Twilio, Square, HubSpot, QStash, MessageBird).
 */
import { readFile } from 'node:fs/promises';
import { readPath } from '../adapters/dotted-path';
import { MEDIA_TYPES, mediaTypeConflict, mediaTypeOf, readBody } from '../core/body';
import { findSource } from '../core/config/routing';
import type { EventIdSource, SourceConfig } from '../core/config/schema';
import { closeProviderNames, findProvider } from '../core/providers/catalog';
import { renderSample } from '../core/providers/samples';
import { type SignInput, SigningSecretError, signatureHeaders, signedBody } from '../core/schemes';
import type { ConfigDeps } from './deps';
import { TargetError, UsageError } from './errors';
import { newEventId, ulid } from './ids';
import { locationLiteral, sourceEntry } from './source-entry';

export interface SendRequest {
  readonly source?: string;
  /** A catalog provider: send its sample event, signed as it signs. */
  readonly provider?: string;
  /** A file whose bytes are the body; attribution then comes from the file. */
  readonly file?: string;
  /** @default 'payment.succeeded' (the provider's own type with --provider) */
  readonly type?: string;
  /** @default 'tenant_204' */
  readonly tenant?: string;
  /** @default 'key_42' */
  readonly key?: string;
  /** @default a new `evt_` id */
  readonly eventId?: string;
}

export const PROVIDER_WITH_FILE = '--provider sends its own sample: leave out --file';

export interface SendDeps extends ConfigDeps {
  /** Intake's URL for one source (`<WebhookUrl output><source>` on AWS). */
  readonly webhookUrl: (sourceId: string) => string;
  /** The source's current signing secret. */
  readonly signingSecret: (sourceId: string) => Promise<string>;
  readonly fetch?: typeof fetch;
  readonly clock?: () => number;
}

export interface SendResult {
  readonly url: string;
  readonly source: string;
  readonly provider?: string;
  /**
   * The event id intake records for the request (absent when the body came from a file). For a source
   * whose event id is derived from the body (`{ derived: 'body-hash' }`), the id intake answered with.
   */
  readonly eventId?: string;
  /**
   * Set when the source derives its event id from the body: `bh_` + the deployment's keyed hash of the
   * bytes, which only intake can compute, so the id is the one intake assigned (in its answer).
   */
  readonly eventIdAssignedAtIntake?: true;
  readonly status: number;
  readonly body: unknown;
}

/**
 * The source `send --provider <name>` sends to, checked before any stack is reached: the provider
 * must be in the catalog and configured on exactly one source (or the one `--source` names).
 */
export function providerSource(deps: ConfigDeps, provider: string, sourceId?: string): SourceConfig {
  const preset = findProvider(provider);
  if (!preset) {
    const close = closeProviderNames(provider);
    throw new UsageError(
      `unknown provider "${provider}"` +
        (close.length > 0 ? `; did you mean ${close.map((n) => `"${n}"`).join(', ')}?` : '; `npx hookledger providers` lists the catalog'),
    );
  }
  const sources = deps.config.sources.filter((s) => s.provider === preset.name);
  if (sources.length === 0) {
    // What the preset leaves to the source, read from fields of the provider's sample (ops/source-entry.ts).
    const needs = Object.entries(sourceEntry({ provider: preset.name }).attribution);
    throw new UsageError(
      `no source in hookledger.config.ts uses provider "${preset.name}"; add one to sources, e.g. ` +
        `{ id: '${preset.name}', provider: '${preset.name}'` +
        (needs.length > 0 ? `, attribution: { ${needs.map(([f, at]) => `${f}: ${locationLiteral(at)}`).join(', ')} }` : '') +
        ` } (\`npx hookledger sources add --provider ${preset.name} --write\` adds it, saying what each field reads), then restart \`npm start\` (or deploy) so intake has it`,
    );
  }
  if (preset.publicKey) {
    throw new UsageError(
      `${preset.name} signs with its own private key (${preset.scheme.type}); hookledger keeps only the public key its source ` +
        `verifies with (${sources.map((s) => s.id).join(', ')}), so it cannot sign as ${preset.name}: send a real delivery from ${preset.title} instead`,
    );
  }
  if (sourceId !== undefined) {
    const named = sources.find((s) => s.id === sourceId);
    if (!named) {
      throw new UsageError(
        `source "${sourceId}" does not use provider "${preset.name}"; sources that do: ${sources.map((s) => s.id).join(', ')}`,
      );
    }
    return named;
  }
  const [only, ...more] = sources;
  if (!only || more.length > 0) {
    throw new UsageError(`several sources use provider "${preset.name}" (${sources.map((s) => s.id).join(', ')}); pass --source`);
  }
  return only;
}

export interface ProviderRequestInput {
  readonly source: SourceConfig;
  readonly provider: string;
  readonly secret: string;
  /** Epoch ms. */
  readonly now: number;
  /** Fills the sample's `{{event_id}}`. */
  readonly eventId: string;
  /** The delivery id schemes sign (Standard Webhooks' `webhook-id`). */
  readonly messageId: string;
  /** The URL the request goes to (signed by URL-signing schemes). */
  readonly url: string;
  readonly tenant?: string;
  readonly key?: string;
}

export interface SignedRequest {
  readonly body: Buffer;
  readonly headers: Record<string, string>;
  /**
   * What intake records as the event id, read where the source's attribution reads it; undefined when
   * the source derives it from the body (`derivedEventId`): intake assigns it with the deployment's key.
   */
  readonly eventId: string | undefined;
  readonly derivedEventId?: true;
}

/** The provider's sample, completed for the source's attribution and signed as the provider signs: what `send --provider` posts. */
export function providerRequest(input: ProviderRequestInput): SignedRequest {
  const sample = renderSample(input.provider, { eventId: input.eventId, now: input.now });
  // The sample is written in its provider's format; the source reads its body in its own (core/body.ts).
  const format = input.source.bodyFormat;
  const contentType = sample?.contentType ?? MEDIA_TYPES[format];
  if (mediaTypeConflict(contentType, format, input.source.id)) {
    throw new UsageError(
      `the ${input.provider} sample is ${mediaTypeOf(contentType)}, but source "${input.source.id}" reads its body as ` +
        `${format === 'json' ? 'JSON' : 'form fields'} (bodyFormat '${format}') and would refuse it (415); ` +
        `send a body of your own with --source ${input.source.id} --file <path>`,
    );
  }
  const headers: Record<string, string> = { 'content-type': contentType, ...sample?.headers };
  const values = { eventId: input.eventId, eventType: 'test.event', tenantId: input.tenant ?? 'tenant_204', keyId: input.key ?? 'key_42' };
  const form = format === 'form';
  let text = sample?.body ?? (form ? '' : '{}');
  const json = form ? undefined : readBody(Buffer.from(text, 'utf8'), 'json');
  const fields = form ? new URLSearchParams(text) : undefined;
  let added = false;
  for (const [field, where] of Object.entries(input.source.attribution) as [keyof typeof values, EventIdSource][]) {
    // A fixed value, or an id intake derives from the body: nothing to put in the request.
    if ('value' in where || 'derived' in where) continue;
    if ('header' in where) {
      headers[where.header] ??= values[field];
    } else if (fields) {
      if (!fields.has(where.body)) {
        fields.append(where.body, values[field]);
        added = true;
      }
    } else if (readPath(json, where.body) === undefined && json && typeof json === 'object' && !Array.isArray(json)) {
      setPath(json, where.body, values[field]);
      added = true;
    }
  }
  if (added) text = fields ? fields.toString() : JSON.stringify(json);
  const signed = sign(input.source, {
    body: Buffer.from(text, 'utf8'),
    secret: input.secret,
    now: input.now,
    messageId: input.messageId,
    url: input.url,
  });
  Object.assign(headers, signed.headers);
  const body = signed.body;
  // Read from what is sent, as intake reads it: schemes that sign inside the body (Mailgun's token) put the id there.
  const at = input.source.attribution.eventId;
  if ('derived' in at) return { body, headers, eventId: undefined, derivedEventId: true };
  const eventId = 'value' in at ? at.value : 'header' in at ? headers[at.header] : textOf(readPath(readBody(body, format), at.body));
  return { body, headers, eventId };
}

/** The body as sent (schemes that sign inside it put their signature there) and the signature headers over it. */
function sign(source: SourceConfig, input: SignInput): { body: Buffer; headers: Record<string, string> } {
  try {
    const body = signedBody(source.scheme, input);
    return { body, headers: signatureHeaders(source.scheme, { ...input, body }) };
  } catch (error) {
    if (!(error instanceof SigningSecretError)) throw error;
    throw new TargetError(
      `the signing secret of source "${source.id}" is not a ${source.provider ?? source.scheme.type} secret (${error.message}); ` +
        'set it to the one the provider gave you (local stack: sources.' +
        `${source.id}.current in the secrets file, .hookledger/secrets.json by default; AWS: the source's secret in Secrets Manager)`,
    );
  }
}

export async function send(deps: SendDeps, request: SendRequest): Promise<SendResult> {
  if (request.provider !== undefined && request.file !== undefined)
    throw new UsageError('--provider sends its own sample: leave out --file');
  const source =
    request.provider !== undefined
      ? providerSource(deps, request.provider, request.source)
      : findSource(deps.config, request.source ?? onlySource(deps));
  if (!source) throw new UsageError(`unknown source "${request.source}"; configured: ${deps.config.sources.map((s) => s.id).join(', ')}`);
  const now = (deps.clock ?? Date.now)();
  const url = deps.webhookUrl(source.id);
  const messageId = `msg_${ulid(now)}`;
  const secret = await deps.signingSecret(source.id);
  const signed =
    request.provider !== undefined
      ? providerRequest({
          source,
          provider: request.provider,
          secret,
          now,
          eventId: request.eventId ?? newEventId(now),
          messageId,
          url,
          tenant: request.tenant,
          key: request.key,
        })
      : await sourceRequest(source, request, { secret, now, messageId, url });
  const response = await (deps.fetch ?? fetch)(url, { method: 'POST', headers: signed.headers, body: signed.body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  const derived = signed.derivedEventId === true;
  let eventId = signed.eventId;
  if (derived) {
    const answered = parsed && typeof parsed === 'object' ? (parsed as { event_id?: unknown }).event_id : undefined;
    eventId = typeof answered === 'string' ? answered : undefined;
  }
  return {
    url,
    source: source.id,
    ...(request.provider !== undefined ? { provider: source.provider } : {}),
    ...(eventId ? { eventId } : {}),
    ...(derived ? { eventIdAssignedAtIntake: true as const } : {}),
    status: response.status,
    body: parsed,
  };
}

/** What `send --source` posts: the file's bytes, or a sample body (sampleBody), signed with the source's scheme. */
async function sourceRequest(source: SourceConfig, request: SendRequest, signing: Omit<SignInput, 'body'>): Promise<SignedRequest> {
  // Sent in the source's body format: the one intake reads it in (core/body.ts).
  const headers: Record<string, string> = { 'content-type': MEDIA_TYPES[source.bodyFormat] };
  let payload: Buffer;
  let eventId: string | undefined;
  let derived = false;
  if (request.file !== undefined) {
    payload = await readFile(request.file).catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read --file ${request.file}: ${error.code ?? error.message}`);
    });
  } else {
    derived = 'derived' in source.attribution.eventId;
    eventId = derived ? undefined : (request.eventId ?? newEventId(signing.now));
    payload = sampleBody(source, request, signing.now, eventId, headers);
  }
  const { secret, now, messageId, url } = signing;
  const signed = sign(source, { body: payload, secret, now, messageId, url });
  Object.assign(headers, signed.headers);
  return { body: signed.body, headers, eventId, ...(derived ? { derivedEventId: true as const } : {}) };
}

/**
 * A sample body in the source's format with each attribution field where the source reads it: a body
 * path, or a header (added to `headers`).
 */
function sampleBody(
  source: SourceConfig,
  request: SendRequest,
  now: number,
  eventId: string | undefined,
  headers: Record<string, string>,
): Buffer {
  const values: Record<keyof typeof source.attribution, string> = {
    eventId: eventId ?? '',
    eventType: request.type ?? 'payment.succeeded',
    tenantId: request.tenant ?? 'tenant_204',
    keyId: request.key ?? 'key_42',
  };
  // A form's fields are flat (`amount=4200&currency=eur&...`); a JSON body nests them.
  const form = source.bodyFormat === 'form';
  const body: Record<string, unknown> = form
    ? { created: String(Math.floor(now / 1000)), amount: '4200', currency: 'eur' }
    : { created: Math.floor(now / 1000), data: { amount: 4200, currency: 'eur' } };
  for (const [field, where] of Object.entries(source.attribution) as [keyof typeof values, EventIdSource][]) {
    if ('value' in where || 'derived' in where) continue;
    if ('header' in where) headers[where.header] = values[field];
    else if (form) body[where.body] = values[field];
    else setPath(body, where.body, values[field]);
  }
  const text = form ? new URLSearchParams(body as Record<string, string>).toString() : JSON.stringify(body);
  return Buffer.from(text, 'utf8');
}

function onlySource(deps: ConfigDeps): string {
  const [first, ...rest] = deps.config.sources;
  if (!first || rest.length > 0) {
    throw new UsageError(`several sources are configured (${deps.config.sources.map((s) => s.id).join(', ')}); pass --source`);
  }
  return first.id;
}

const textOf = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : undefined;

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (!node[part] || typeof node[part] !== 'object') node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1] as string] = value;
}
