/**
 * Send: a signed test webhook to the stack's intake, as the provider would send it. The sample body
 * puts each attribution field where the source's config reads it from (a body path or a header), so
 * it is accepted by any source; or the body comes from a file, sent byte for byte.
 *
 * Signing: every configured scheme (cli/ops/sign.ts).
 */
import { readFile } from 'node:fs/promises';
import type { FieldSource } from '../../core/config/schema';
import { findSource } from '../../core/config/routing';
import type { ConfigDeps } from './deps';
import { UsageError } from '../errors';
import { newEventId, ulid } from './ids';
import { signatureHeaders } from '../../core/schemes';

export interface SendRequest {
  readonly source?: string;
  /** A file whose bytes are the body; attribution then comes from the file. */
  readonly file?: string;
  /** @default 'payment.succeeded' */
  readonly type?: string;
  /** @default 'tenant_204' */
  readonly tenant?: string;
  /** @default 'key_42' */
  readonly key?: string;
  /** @default a new `evt_` id */
  readonly eventId?: string;
}

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
  /** The sample's event id (absent when the body came from a file). */
  readonly eventId?: string;
  readonly status: number;
  readonly body: unknown;
}

export async function send(deps: SendDeps, request: SendRequest): Promise<SendResult> {
  const sourceId = request.source ?? onlySource(deps);
  const source = findSource(deps.config, sourceId);
  if (!source) throw new UsageError(`unknown source "${sourceId}"; configured: ${deps.config.sources.map((s) => s.id).join(', ')}`);
  const now = (deps.clock ?? Date.now)();
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  let payload: Buffer;
  let eventId: string | undefined;
  if (request.file !== undefined) {
    payload = await readFile(request.file).catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read --file ${request.file}: ${error.code ?? error.message}`);
    });
  } else {
    eventId = request.eventId ?? newEventId(now);
    const body: Record<string, unknown> = { created: Math.floor(now / 1000), data: { amount: 4200, currency: 'eur' } };
    const values: Record<keyof typeof source.attribution, string> = {
      eventId,
      eventType: request.type ?? 'payment.succeeded',
      tenantId: request.tenant ?? 'tenant_204',
      keyId: request.key ?? 'key_42',
    };
    for (const [field, where] of Object.entries(source.attribution) as [keyof typeof values, FieldSource][]) {
      if ('header' in where) headers[where.header] = values[field];
      else setPath(body, where.body, values[field]);
    }
    payload = Buffer.from(JSON.stringify(body), 'utf8');
  }
  const messageId = `msg_${ulid(now)}`;
  const secret = await deps.signingSecret(source.id);
  Object.assign(headers, signatureHeaders(source.scheme, { body: payload, secret, now, messageId }));

  const url = deps.webhookUrl(source.id);
  const response = await (deps.fetch ?? fetch)(url, { method: 'POST', headers, body: payload });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { url, source: source.id, ...(eventId ? { eventId } : {}), status: response.status, body: parsed };
}

function onlySource(deps: ConfigDeps): string {
  const [first, ...rest] = deps.config.sources;
  if (!first || rest.length > 0) {
    throw new UsageError(`several sources are configured (${deps.config.sources.map((s) => s.id).join(', ')}); pass --source`);
  }
  return first.id;
}

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (!node[part] || typeof node[part] !== 'object') node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1] as string] = value;
}
