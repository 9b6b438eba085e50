/**
 * The one typed definition of sources and consumers.
 *
 * Read by the CDK app (to build queues, workers and alarms), by the Lambdas (routing and
 * verification, bundled in), by the local stack and by the CLI. `defineConfig` validates once and
 * throws a single `ConfigurationError` naming the bad value, so a typo fails `cdk synth`, not production.
 */
import * as z from 'zod';
import { DEFAULT_INLINE_PAYLOAD_BYTES, DEFAULT_MAX_BODY_BYTES, MAX_BODY_BYTES_CEILING, MAX_INLINE_PAYLOAD_BYTES } from '../blobs';
import {
  BODY_FORMATS,
  DEFAULT_MAX_FORM_FIELDS,
  DEFAULT_MAX_HEADERS,
  MAX_FORM_FIELDS_CEILING,
  MAX_HEADERS_CEILING,
  MIN_MAX_HEADERS,
} from '../body';
import { ConfigurationError } from '../errors';
import { checkPattern, type EventPattern } from '../filter';
import {
  baseUrlProblem,
  DEFAULT_GAP_MAX_EVENTS,
  DEFAULT_GAP_MAX_PAGES,
  EVERY_EVENT_TYPE,
  GAP_API_NAMES,
  type GAP_APIS,
  GAP_MAX_EVENTS_CEILING,
  GAP_MAX_PAGES_CEILING,
} from '../gaps';
import { HANDSHAKES } from '../handshakes';
import {
  DEFAULT_SIGNATURE_FAILURE_THRESHOLD,
  DEFAULT_SIGNATURE_FAILURE_WINDOW_MINUTES,
  MAX_SIGNATURE_FAILURE_WINDOW_MINUTES,
} from '../metrics';
import { closeProviderNames, type FieldLocation, findProvider, PROVIDER_NAMES } from '../providers/catalog';
import {
  SCHEME_TYPES,
  type SchemeConfig,
  type SchemeConfigInput,
  type SchemeType,
  schemeBodyFormat,
  schemeHandshake,
  schemeOptions,
  signedParts,
} from '../schemes';
import { parseTemplate } from '../schemes/template';
import type { OptionSpec, SignedParts } from '../schemes/types';
import { capacitySchema } from './capacity';
import { BATCHING_WINDOW_SECONDS, checkConsumer } from './consumer-rules';

const ID = /^[a-z][a-z0-9-]{0,39}$/;
const idSchema = (what: string) =>
  z.string().regex(ID, `${what} must be 1-40 chars of lower-case letters, digits and '-', starting with a letter`);

/**
 * Where one attribution field is read: a `FieldLocation` (core/providers/catalog.ts), validated: a
 * dotted path in the body, a request header, or a fixed `value` (for what no signed part carries:
 * Mailgun signs only a token, so its event type, tenant and key are fixed per source).
 */
export const fieldSourceSchema = z.union([
  z
    .object({
      body: z
        .string()
        .min(1)
        .regex(/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/, 'body path must be dotted keys like "data.id"'),
    })
    .strict(),
  z
    .object({
      header: z
        .string()
        .min(1)
        .regex(/^[A-Za-z0-9-]+$/, 'header must be a header name')
        .transform((h) => h.toLowerCase()),
    })
    .strict(),
  z
    .object({
      value: z
        .string()
        .min(1)
        .max(200)
        .regex(/^[\x21-\x7e]+$/, 'value must be printable ASCII without spaces'),
    })
    .strict(),
]) satisfies z.ZodType<FieldLocation>;

/**
 * An event id derived from the signed body, for providers whose webhooks carry none (Meta, Dropbox):
 * `bh_` + the deployment's keyed hash of the raw body bytes (the receipt's payload HMAC, see
 * adapters/payload-hash.ts). A retry of the same bytes gets the same id and is answered as a
 * duplicate; different bodies get different ids. Allowed only where the scheme signs the exact body
 * bytes (`signedParts(...).body === 'bytes'`, no shared secret): not Mailgun, Okta, Graph or Twilio.
 */
export const derivedEventIdSchema = z.object({ derived: z.literal('body-hash') }).strict();
export type DerivedEventId = z.infer<typeof derivedEventIdSchema>;
/** Where the event id is read: any attribution location, or derived from the signed body. */
export const eventIdSourceSchema = z.union([fieldSourceSchema, derivedEventIdSchema]);
export type EventIdSource = z.infer<typeof eventIdSourceSchema>;

/** One scheme option's validation, from its declaration in the scheme's module (core/schemes). */
function optionSchema(spec: OptionSpec): z.ZodType {
  switch (spec.kind) {
    case 'enum':
      return z.enum(spec.values as [string, ...string[]]).default(spec.default);
    case 'header':
      return z
        .string()
        .regex(/^[A-Za-z0-9-]+$/, 'must be a header name')
        .transform((h) => h.toLowerCase());
    case 'text':
      return z.string().default(spec.default);
    case 'template':
      return z
        .string()
        .default(spec.default)
        .refine((t) => parseTemplate(t) !== undefined, 'must be text with {body} and optionally {url}, {t} and {header:<lower-case name>}');
  }
}

function schemeVariant(type: SchemeType) {
  const options = Object.fromEntries(Object.entries(schemeOptions(type)).map(([name, spec]) => [name, optionSchema(spec)]));
  return z.object({ type: z.literal(type), ...options }).strict();
}

/** A source's signature scheme: one variant per entry of the scheme registry (core/schemes/index.ts). */
export const schemeSchema = z.discriminatedUnion(
  'type',
  SCHEME_TYPES.map(schemeVariant) as unknown as [ReturnType<typeof schemeVariant>, ...ReturnType<typeof schemeVariant>[]],
) as unknown as z.ZodType<SchemeConfig, SchemeConfigInput>;
export type VerificationScheme = SchemeConfig;

/** A MaximumBatchingWindowInSeconds: whole seconds within BATCHING_WINDOW_SECONDS; `why` says what it holds back. */
const batchingWindowSchema = (why: string) => {
  const message = `batchingWindowSeconds must be an integer from ${BATCHING_WINDOW_SECONDS.min} to ${BATCHING_WINDOW_SECONDS.max} (${why})`;
  return z.number({ error: message }).int(message).min(BATCHING_WINDOW_SECONDS.min, message).max(BATCHING_WINDOW_SECONDS.max, message);
};

const pagingBound = (name: string, ceiling: number) => {
  const message = `${name} must be an integer from 1 to ${ceiling}`;
  return z.number({ error: message }).int(message).min(1, message).max(ceiling, message);
};

/**
 * The provider event types a source's endpoint receives, by name as the provider sends them
 * (`invoice.paid`, `push`, `orders/create`), or `*` alone for every type (Stripe's and GitHub's
 * wildcard). No prefix patterns: a provider subscribes an endpoint to named types.
 */
export const declaredEventsSchema = z
  .array(
    z
      .string()
      .regex(
        /^(\*|[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,199})$/,
        'events are event type names as the provider sends them ("invoice.paid", "push"), or "*" alone; not patterns ("invoice.*"): a provider subscribes an endpoint to named types',
      ),
  )
  .min(1, 'events needs at least one event type (or leave it out)')
  .superRefine((events, ctx) => {
    if (events.length > 1 && events.includes(EVERY_EVENT_TYPE)) {
      ctx.addIssue({ code: 'custom', message: '"*" already means every type: give it alone, or only names' });
    }
  });

/**
 * The provider gap check of a source (`hookledger gaps`, and the scheduled run on AWS): the provider's
 * API that lists what it sent (core/gaps.ts), compared with the receipts. Its credential is
 * `sources.<id>.apiKey` in the local secrets file, on AWS the source's own API-key secret.
 */
export const gapCheckSchema = z
  .object({
    api: z.enum(GAP_API_NAMES as [keyof typeof GAP_APIS, ...(keyof typeof GAP_APIS)[]]),
    /** @default - the provider's (core/gaps.ts GAP_APIS); https only, http only to loopback (stand-ins). */
    baseUrl: z
      .string()
      .optional()
      .superRefine((value, ctx) => {
        const problem = value === undefined ? undefined : baseUrlProblem(value);
        if (problem) ctx.addIssue({ code: 'custom', message: `baseUrl ${problem}` });
      }),
    /** The scheduled run also recovers what it finds missing (`hookledger gaps --recover`). */
    recover: z.boolean().default(false),
    /** GitHub: the webhook whose deliveries are listed, `repos/<owner>/<repo>/hooks/<id>` or `orgs/<org>/hooks/<id>`. */
    hook: z
      .string()
      .regex(
        /^(repos\/[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+|orgs\/[A-Za-z0-9_.-]+)\/hooks\/[0-9]+$/,
        'hook must be repos/<owner>/<repo>/hooks/<id> or orgs/<org>/hooks/<id>',
      )
      .optional(),
    /** Paddle: only this notification destination's notifications (`ntfset_...`). @default - all */
    destination: z
      .string()
      .regex(/^ntfset_[a-z0-9]+$/, 'destination must be a Paddle notification setting id (ntfset_...)')
      .optional(),
    /** Moved to the source's `events` (one list for the gap check and the provider's subscription): refused with that fix. */
    types: z
      .never({ error: "gapCheck.types is now the source's events: list the event types the endpoint receives there by name" })
      .optional(),
    /** Hours between scheduled runs on AWS, each over the last closed window of that length. 1-168, default 24. */
    everyHours: z.number().int().min(1).max(168).default(24),
    /** Pages of the provider's list one run reads at most; a list going on past them fails the run. @default DEFAULT_GAP_MAX_PAGES (core/gaps.ts) */
    maxPages: pagingBound('maxPages', GAP_MAX_PAGES_CEILING).default(DEFAULT_GAP_MAX_PAGES),
    /** Distinct events of the window one run holds at most (with their bodies); more fails the run. @default DEFAULT_GAP_MAX_EVENTS (core/gaps.ts) */
    maxEvents: pagingBound('maxEvents', GAP_MAX_EVENTS_CEILING).default(DEFAULT_GAP_MAX_EVENTS),
  })
  .strict()
  .superRefine((g, ctx) => {
    if (g.api === 'github' && g.hook === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['hook'],
        message:
          "the github gap check lists one webhook's deliveries: give hook: 'repos/<owner>/<repo>/hooks/<id>' or 'orgs/<org>/hooks/<id>'",
      });
    }
    if (g.api !== 'github' && g.hook !== undefined)
      ctx.addIssue({ code: 'custom', path: ['hook'], message: 'hook is for the github gap check only' });
    if (g.api === 'stripe' && g.baseUrl !== undefined && URL.canParse(g.baseUrl) && !['', '/'].includes(new URL(g.baseUrl).pathname)) {
      ctx.addIssue({
        code: 'custom',
        path: ['baseUrl'],
        message: `the stripe SDK takes a host, port and protocol, no path: "${g.baseUrl}" would lose "${new URL(g.baseUrl).pathname}"; serve the API at the root`,
      });
    }
    if (g.api !== 'paddle' && g.destination !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['destination'], message: 'destination is for the paddle gap check only' });
    }
  });
export type GapCheckConfig = z.output<typeof gapCheckSchema>;

const baseSourceSchema = z
  .object({
    id: idSchema('source id'),
    scheme: schemeSchema,
    /** The catalog entry this source was built from (core/providers/catalog.ts), when it names one. */
    provider: z.string().optional(),
    /** A request answered without storing anything (set by the provider preset). */
    handshake: z.enum(HANDSHAKES).optional(),
    /**
     * Meta's `hub.verify_token`: the value typed into the app dashboard, sent back in the clear in the
     * subscription handshake's query string (not a signing secret; choose a random one). Required by
     * the `meta-hub-challenge` handshake.
     */
    verifyToken: z
      .string()
      .min(16, 'verifyToken must be at least 16 characters')
      .max(200)
      .regex(/^[\x21-\x7e]+$/, 'verifyToken must be printable ASCII without spaces')
      .optional(),
    /** Seconds a signed timestamp may differ from now, either way. */
    toleranceSeconds: z.number().int().min(1).max(3600).default(300),
    /**
     * Bodies larger than this are refused with 413. At most MAX_BODY_BYTES_CEILING (4 MiB: Lambda's
     * 6 MB synchronous request after API Gateway's envelope and base64, see core/blobs.ts); bodies
     * whose stored size passes `payloads.inlineMaxBytes` are kept in the payload bucket.
     */
    /**
     * Days this source's raw payloads are kept (payload items' TTL and payload-bucket objects, by
     * their retention tag); overrides `retention.payloadDays`. Receipts, ledger rows and usage stay.
     * @default retention.payloadDays
     */
    retentionDays: z.number().int().min(1).max(3650).optional(),
    maxBodyBytes: z
      .number()
      .int()
      .min(1024, 'maxBodyBytes must be at least 1024 bytes')
      .max(
        MAX_BODY_BYTES_CEILING,
        `maxBodyBytes must be at most ${MAX_BODY_BYTES_CEILING} bytes (4 MiB): Lambda's 6 MB synchronous request limit, after API Gateway's event envelope and base64 for binary bodies`,
      )
      .default(DEFAULT_MAX_BODY_BYTES),
    /**
     * How the body is read, by intake, the fan-out and `send` alike (core/body.ts): `json` (an object,
     * or an array) or `form` (application/x-www-form-urlencoded fields). Default: the scheme's (Twilio:
     * form; Mailgun: its carrier; every other scheme: json). Declare `form` for a provider that posts
     * forms under a scheme signing raw bytes (Slack slash commands), `json` for Twilio's bodySHA256
     * webhooks. The request's Content-Type never decides: one naming the other format is refused (415).
     * @default - the scheme's
     */
    bodyFormat: z.enum(BODY_FORMATS).optional(),
    /**
     * Form bodies with more fields than this are refused with 413 before verification (a verifier
     * sorts the fields; a consumer's narrowing reads them). 1-100,000, default 1,000.
     */
    maxFormFields: z.number().int().min(1).max(MAX_FORM_FIELDS_CEILING).default(DEFAULT_MAX_FORM_FIELDS),
    /**
     * Requests with more headers (distinct names) than this are refused with 400 before verification.
     * 16-1,000, default 100: providers send 10-25, API Gateway and proxies add about ten.
     */
    maxHeaders: z.number().int().min(MIN_MAX_HEADERS).max(MAX_HEADERS_CEILING).default(DEFAULT_MAX_HEADERS),
    attribution: z
      .object({
        eventId: eventIdSourceSchema,
        eventType: fieldSourceSchema,
        tenantId: fieldSourceSchema,
        keyId: fieldSourceSchema,
      })
      .strict(),
    /** Whether intake checks key_id against the tenant key registry (unknown or foreign key: 403). */
    enforceKeyRegistry: z.boolean().default(false),
    /**
     * What makes two requests the same event. `event-id` (default): the event id, which must then be
     * signed. `body`: also the exact signed bytes: one body makes at most one event, whatever its
     * headers say (one more write unit per webhook). Required to read attribution from a header the
     * scheme does not sign (GitHub's x-github-delivery, Shopify's x-shopify-event-id). Only for schemes
     * that sign the exact bytes: refused for Twilio (sorted parameters) and Mailgun (body unsigned).
     */
    replayProtection: z.enum(['event-id', 'body']).default('event-id'),
    /**
     * Hours the previous signing secret keeps verifying after a rotation (`hookledger secrets
     * rotate`), counted from the rotation; `secrets retire` ends it sooner. 1-720, default 72.
     */
    secretOverlapHours: z.number().int().min(1).max(720).default(72),
    /**
     * The provider event types this source's endpoint receives (declaredEventsSchema). The gap check
     * compares only these, and `gapCheck.recover` records only these, so it requires them by name.
     * @default - not declared: the gap check compares every listed type and cannot recover
     */
    events: declaredEventsSchema.optional(),
    /** Compare the provider's list of sent events with the receipts (`hookledger gaps`). @default - none */
    gapCheck: gapCheckSchema.optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    checkRecoverableEvents(s, ctx);
    checkVerifyToken(s, ctx);
    checkBodyFormat(s, ctx);
    checkSignedAttribution(s, ctx);
  })
  // One body format per source, resolved once: everything that reads a body reads `source.bodyFormat`.
  // Likewise the handshake: the source's (its preset's), else the one its scheme declares (Slack's).
  .transform((s) => {
    const handshake = s.handshake ?? schemeHandshake(s.scheme);
    return { ...s, bodyFormat: s.bodyFormat ?? schemeBodyFormat(s.scheme).format, ...(handshake ? { handshake } : {}) };
  });
/** A source as written with a scheme and its attribution spelled out. */
export type SchemeSourceInput = z.input<typeof baseSourceSchema>;
type BaseSourceInput = SchemeSourceInput;
type Attribution = BaseSourceInput['attribution'];

/**
 * A source that names a provider instead of a scheme: the preset's scheme, attribution defaults,
 * replay protection and handshake, each attribution field overridable by the source.
 */
export type ProviderSourceInput = Omit<BaseSourceInput, 'scheme' | 'attribution' | 'handshake'> & {
  readonly provider: string;
  readonly attribution?: Partial<Attribution>;
};

/** A preset resolves into exactly the shape a hand-written source has, so intake needs no change for presets. */
function resolveProvider(input: unknown, ctx: z.RefinementCtx): unknown {
  if (!input || typeof input !== 'object' || !('provider' in input) || 'scheme' in input) return input;
  const { provider, attribution, ...rest } = input as { provider: unknown; attribution?: Record<string, unknown> };
  const preset = typeof provider === 'string' ? findProvider(provider) : undefined;
  if (!preset) {
    const close = typeof provider === 'string' ? closeProviderNames(provider) : [];
    ctx.addIssue({
      code: 'custom',
      path: ['provider'],
      message:
        `unknown provider ${JSON.stringify(provider)}` +
        (close.length > 0 ? `; did you mean ${close.map((n) => `"${n}"`).join(', ')}?` : `; known providers: ${PROVIDER_NAMES.join(', ')}`),
    });
    return z.NEVER;
  }
  const defaults: Record<string, unknown> = { eventId: preset.eventId, eventType: preset.eventType };
  if (preset.tenantId) defaults.tenantId = preset.tenantId;
  if (preset.keyId) defaults.keyId = preset.keyId;
  return {
    replayProtection: preset.replayProtection,
    ...rest,
    provider: preset.name,
    scheme: preset.scheme,
    ...(preset.handshake ? { handshake: preset.handshake } : {}),
    attribution: { ...defaults, ...(attribution ?? {}) },
  };
}

/** The fields of a source the refinements read (the same before and after the source's transform). */
type RefinedSource = Pick<SourceConfig, 'id' | 'scheme' | 'attribution' | 'handshake' | 'verifyToken' | 'replayProtection'>;
const ATTRIBUTION_FIELDS = ['eventId', 'eventType', 'tenantId', 'keyId'] as const;

function checkVerifyToken(s: RefinedSource, ctx: z.RefinementCtx): void {
  if (s.handshake === 'meta-hub-challenge' && s.verifyToken === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['verifyToken'],
      message: "the meta-hub-challenge handshake needs verifyToken: the value typed as 'Verify token' in the app dashboard",
    });
  }
}

/** A body format the scheme does not fix, and body paths a form body can hold. */
function checkBodyFormat(s: RefinedSource & { readonly bodyFormat?: SourceConfig['bodyFormat'] }, ctx: z.RefinementCtx): void {
  const schemeFormat = schemeBodyFormat(s.scheme);
  if (s.bodyFormat !== undefined && schemeFormat.fixed && s.bodyFormat !== schemeFormat.format) {
    ctx.addIssue({
      code: 'custom',
      path: ['bodyFormat'],
      message:
        `the ${s.scheme.type} scheme reads its signature from the body as ${schemeFormat.format}, as its options say` +
        (s.scheme.type === 'mailgun' ? ` (carrier: '${schemeFormat.format}')` : '') +
        `, so the body cannot be read as ${s.bodyFormat}; remove bodyFormat, or change the scheme's options`,
    });
  }
  if ((s.bodyFormat ?? schemeFormat.format) === 'form') {
    // Form fields are flat: a dotted path would look for a field inside a field.
    for (const field of ATTRIBUTION_FIELDS) {
      const from = s.attribution[field];
      if ('body' in from && from.body.includes('.')) {
        ctx.addIssue({
          code: 'custom',
          path: ['attribution', field, 'body'],
          message: `source "${s.id}" reads its body as form fields, which are flat: body.${from.body} names no field; give the field's name`,
        });
      }
    }
  }
}

/**
 * Attribution read only from what the scheme signs (signedParts): a send time it checks but does
 * not sign, a body-hash id over a body it does not sign as bytes, unsigned body fields, replay
 * protection by body, unsigned headers.
 */
function checkSignedAttribution(s: RefinedSource, ctx: z.RefinementCtx): void {
  let parts: SignedParts;
  try {
    parts = signedParts(s.scheme);
  } catch {
    return; // an invalid scheme option (a template) is already reported where it is
  }
  if (parts.unsignedTimestamp) {
    // A send time the verifier checks but the signature does not cover: no replay protection at all.
    const { option, message } = parts.unsignedTimestamp;
    const resolved = (s.scheme as unknown as Record<string, unknown>)[option];
    ctx.addIssue({ code: 'custom', path: ['scheme', option], message, params: { resolved } });
  }
  const signed = `the ${s.scheme.type} signature covers ${parts.summary}`;
  checkDerivedEventId(s, parts, signed, ctx);
  if (!parts.body) checkUnsignedBodyFields(s, parts, signed, ctx);
  // Replay protection by body folds requests with the same bytes into one event: it protects only
  // where other bytes cannot verify. Refused (and the headers then checked as for 'event-id') otherwise.
  if (s.replayProtection === 'body') {
    if (parts.body === 'bytes') return;
    ctx.addIssue({
      code: 'custom',
      path: ['replayProtection'],
      message:
        `replayProtection: 'body' makes one event of one exact body, but ${signed}: ` +
        (parts.body === 'canonical-params'
          ? "the same request with its parameters reordered is other bytes and would be counted again; read attribution from signed parameters ({ body: '<name>' }) and keep replayProtection: 'event-id'"
          : `whoever holds one request can rewrite its unsigned body into other bytes that would be counted again; read attribution from ${(parts.bodyFields ?? []).map((f) => `body.${f}`).join(' or ')} or fixed { value }s and keep replayProtection: 'event-id'`),
    });
  }
  checkUnsignedHeaders(s, parts, signed, ctx);
}

/**
 * Only a signature over the exact bytes makes their hash an id: a shared secret (Okta, Graph) signs
 * nothing, Mailgun not the body, Twilio the sorted parameters (other bytes verify too).
 */
function checkDerivedEventId(s: RefinedSource, parts: SignedParts, signed: string, ctx: z.RefinementCtx): void {
  if (!('derived' in s.attribution.eventId)) return;
  if (parts.body === 'canonical-params') {
    ctx.addIssue({
      code: 'custom',
      path: ['attribution', 'eventId', 'derived'],
      message:
        `eventId { derived: 'body-hash' } hashes the exact body bytes, but ${signed}: the same parameters re-sent in another ` +
        "order or encoding verify and would hash to a new event id; read eventId from a signed parameter the provider sends ({ body: '<name>' }, Twilio: MessageSid, CallSid)",
    });
  } else if (!parts.body || parts.authentication === 'shared-secret') {
    ctx.addIssue({
      code: 'custom',
      path: ['attribution', 'eventId', 'derived'],
      message:
        `eventId { derived: 'body-hash' } needs a signed body, but ${signed}: ` +
        'anyone holding one request could change its body and have it counted as a new event; read eventId from ' +
        ((parts.bodyFields ?? []).length > 0
          ? `the signed ${(parts.bodyFields ?? []).map((f) => `body.${f}`).join(' or ')}`
          : 'an id the provider sends (a body path or header)') +
        ', or verify the source with a scheme that signs the body',
    });
  }
}

/** The body is not signed (Mailgun): replay protection by body cannot help, only signed fields may be read. */
function checkUnsignedBodyFields(s: RefinedSource, parts: SignedParts, signed: string, ctx: z.RefinementCtx): void {
  for (const field of ATTRIBUTION_FIELDS) {
    const from = s.attribution[field];
    if ('body' in from && !(parts.bodyFields ?? []).includes(from.body)) {
      ctx.addIssue({
        code: 'custom',
        path: ['attribution', field, 'body'],
        message:
          `body.${from.body} is not signed: ${signed}, so anyone holding one ` +
          `request could rewrite it; read ${field} from ${(parts.bodyFields ?? []).map((f) => `body.${f}`).join(' or ')}, or give a fixed { value }`,
      });
    }
  }
}

/** A header the signature does not cover could be re-sent with a new value and counted again. */
function checkUnsignedHeaders(s: RefinedSource, parts: SignedParts, signed: string, ctx: z.RefinementCtx): void {
  for (const field of ATTRIBUTION_FIELDS) {
    const from = s.attribution[field];
    if ('header' in from && !parts.headers.includes(from.header)) {
      ctx.addIssue({
        code: 'custom',
        path: ['attribution', field, 'header'],
        message:
          `header ${from.header} is not signed (${signed}), so a captured ` +
          `request could be re-sent with a new value and counted again; read ${field} from the body` +
          (parts.body === 'bytes' ? ", or set replayProtection: 'body' on the source" : ' (a signed part of it)'),
      });
    }
  }
}

/**
 * Recovery records what the provider's API lists as if the endpoint had received it, and a provider's
 * list holds every type (a Stripe account's): without the types the endpoint receives, by name, it
 * would record and charge events that were never webhooks.
 */
function checkRecoverableEvents(s: Pick<z.output<typeof baseSourceSchema>, 'id' | 'events' | 'gapCheck'>, ctx: z.RefinementCtx): void {
  if (!s.gapCheck?.recover) return;
  if (s.events === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['gapCheck', 'recover'],
      message:
        `recovery records what the ${s.gapCheck.api} API lists as if this endpoint had received it, and the provider's list holds every event type: ` +
        `declare the types the endpoint receives with events: ['invoice.paid', ...] on source "${s.id}", or remove recover`,
    });
  } else if (s.events.includes(EVERY_EVENT_TYPE)) {
    ctx.addIssue({
      code: 'custom',
      path: ['events'],
      message:
        '"*" is every type the provider lists, which gapCheck.recover would record; list the types the endpoint receives by name, or remove gapCheck.recover',
    });
  }
}

export const sourceSchema = z.preprocess(resolveProvider, baseSourceSchema) as unknown as z.ZodType<
  z.output<typeof baseSourceSchema>,
  BaseSourceInput | ProviderSourceInput
>;
export type SourceConfig = z.output<typeof baseSourceSchema>;

const PATTERN = /^(\*|[a-z0-9_-]+(\.[a-z0-9_-]+)*(\.\*)?)$/i;

/** A dotted path into the signed body (every scheme signs the whole body). */
const bodyPathSchema = z
  .object({
    body: z
      .string()
      .min(1)
      .regex(/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/, 'body path must be dotted keys like "data.account_id"'),
  })
  .strict();

/**
 * Per-key ordering: the consumer's queue and DLQ are FIFO, the key is the message group and the
 * ledger key the deduplication id. A failing event holds back the later events of its key (only its
 * key) until it succeeds or is quarantined.
 */
export const orderingSchema = z
  .object({
    /** `'tenant'`: the tenant captured at intake; `{ body: 'data.account_id' }`: a signed body field, read at intake. */
    key: z.union([z.literal('tenant'), bodyPathSchema]),
    /**
     * A signed body field (number, or a string compared as text such as an ISO timestamp). An event
     * whose version is lower than one already acknowledged for its key is acknowledged as `stale`
     * with 0 units and never handled.
     * @default - no stale dropping
     */
    version: bodyPathSchema.optional(),
  })
  .strict();
export type OrderingConfig = z.infer<typeof orderingSchema>;

/** Delivery controls of an HTTP destination consumer (`kind: 'http'`). */
export const httpDeliverySchema = z
  .object({
    /** Per-request timeout, ms; a timeout is retried like a 5xx. */
    timeoutMs: z.number().int().min(100).max(60_000).default(5000),
    /** At most this many deliveries per second from one worker (a token bucket per worker). */
    ratePerSecond: z.number().min(0.1).max(10_000).default(50),
    /** Status codes that quarantine at once (besides 410). 429 and 5xx are always retried. */
    permanentStatuses: z.array(z.number().int().min(400).max(499)).default([410]),
    /** Response header naming the units of the delivery (a number >= 0); otherwise `units`. */
    unitsHeader: z
      .string()
      .regex(/^[A-Za-z0-9-]+$/, 'must be a header name')
      .transform((h) => h.toLowerCase())
      .default('hookledger-units'),
    /** Units recorded when the response has no units header. */
    units: z.number().min(0).default(1),
    /**
     * Consecutive failed deliveries (any event) after which the consumer is paused, as by
     * `hookledger pause`, and alarms; `hookledger resume` closes the breaker.
     */
    breakAfterFailures: z.number().int().min(1).max(10_000).default(20),
  })
  .strict();
export type HttpDeliveryConfig = z.infer<typeof httpDeliverySchema>;

export const consumerSchema = z
  .object({
    id: idSchema('consumer id'),
    /** Event types this consumer receives: `*`, exact types, or prefixes like `payment.*`. */
    subscribes: z.array(z.string().regex(PATTERN, 'pattern must be "*", "a.b" or "a.*"')).min(1),
    /** Payload fields the handler may see (dotted paths); everything else is removed before it runs. */
    fields: z.array(z.string().min(1)).min(1),
    /** Receives before a message goes to this consumer's DLQ (the retry budget), 1-1000. */
    maxReceiveCount: z.number().default(5),
    /** The lease: SQS visibility timeout, seconds. Must be at least 6x `timeoutSeconds` (VISIBILITY_TIMEOUT_FACTOR). */
    visibilityTimeoutSeconds: z.number().int().min(6).max(43_200).default(60),
    /** Lambda timeout for the worker, seconds. */
    timeoutSeconds: z.number().int().min(1).max(900).default(10),
    /** Alarm when the oldest message in the queue is older than this, seconds. */
    alarmAgeSeconds: z.number().int().min(60).default(900),
    /**
     * `lambda` (default): a team's `handle` in `entry`. `http`: hookledger's shared worker POSTs the
     * narrowed payload to `url`, signed with Standard Webhooks under the consumer's own secret.
     */
    kind: z.enum(['lambda', 'http']).default('lambda'),
    /** Module exporting `handle` (the team's code) and `handler` (the Lambda entry). Lambda consumers only. */
    entry: z
      .string()
      .regex(/^lambdas\/consumers\/[a-z0-9-]+\.ts$/, 'entry must be lambdas/consumers/<name>.ts')
      .optional(),
    /** Where an HTTP consumer's deliveries are POSTed (https, or http on the local stack). */
    url: z
      .string()
      .url()
      .regex(/^https?:\/\//, 'url must be http(s)')
      .optional(),
    /** HTTP consumers: timeout, rate limit, permanent statuses, units, circuit breaker. */
    http: httpDeliverySchema.optional(),
    /** HTTP consumers: hours the previous signing secret keeps signing beside the new one after `secrets rotate`. */
    secretOverlapHours: z.number().int().min(1).max(720).default(72),
    /** Per-key ordered delivery (FIFO queue and DLQ). @default - unordered (standard queues) */
    ordering: orderingSchema.optional(),
    /** Processing-policy version recorded on every acknowledgement (rules or prompt version). */
    policyVersion: z.string().min(1).max(64).default('v1'),
    /** Messages per SQS receive, 1-10. */
    batchSize: z.number().default(10),
    /** Event-source maximum concurrency (2-1000): at most this many batches of this consumer run at once. */
    maxConcurrency: z.number().default(5),
    /**
     * Seconds the SQS event source may gather a batch before it invokes the worker (Lambda's
     * MaximumBatchingWindowInSeconds), 0-300: fuller batches, so fewer invocations and receives, for
     * up to this much more latency. The lease must then cover it too (6x `timeoutSeconds` plus the
     * window). Not on an ordered consumer: Lambda takes no window on a FIFO queue.
     * @default 0 (none: a batch is handed over as soon as a receive returns messages)
     */
    batchingWindowSeconds: z.number().default(0),
    /**
     * Reserved concurrency of the worker, opt-in (default none: the account's shared pool). A
     * reservation is refused when it leaves the account under 100 unreserved, which fails the first
     * deploy on a new account; when set it must be at least `maxConcurrency`, or throttled receives
     * count against `maxReceiveCount` and push messages into the DLQ early.
     */
    reservedConcurrency: z.number().optional(),
    memoryMb: z.number().int().min(128).max(10_240).default(256),
    /**
     * Content filter (docs/consumers.md): an EventBridge event pattern over `{ source, type, tenantId,
     * keyId, body }`, evaluated at intake after `subscribes`; the delivery set names only the consumers
     * whose type and filter matched. @default - every event of the subscribed types
     */
    filter: z
      .record(z.string(), z.unknown())
      .superRefine((pattern, ctx) => {
        for (const issue of checkPattern(pattern)) ctx.addIssue({ code: 'custom', path: [...issue.path], message: issue.message });
      })
      .transform((p) => p as EventPattern)
      .optional(),
    /**
     * HTTP consumers: a module (`transforms/<name>.ts`) exporting `transform({ eventId, eventType,
     * tenantId, keyId, payload })` returning `{ body, headers? }`, bundled into the worker and run
     * before signing. A throw quarantines the delivery. @default - the narrowed payload as JSON
     */
    transform: z
      .string()
      .regex(/^transforms\/[a-z0-9][a-z0-9-]*\.ts$/, 'transform must be transforms/<name>.ts (lower-case letters, digits and -)')
      .optional(),
  })
  .strict()
  .transform((c) => (c.kind === 'http' ? { ...c, http: c.http ?? httpDeliverySchema.parse({}) } : c))
  .superRefine((c, ctx) => {
    if (c.kind === 'lambda' && c.entry === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['entry'],
        message: "a lambda consumer needs entry (lambdas/consumers/<name>.ts); for an HTTP destination set kind: 'http' and url",
      });
    }
    if (c.kind === 'lambda' && (c.url !== undefined || c.http !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: "url and http apply to kind: 'http' consumers only; set kind: 'http' or remove them",
      });
    }
    if (c.kind === 'lambda' && c.transform !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['transform'],
        message: "transform applies to kind: 'http' consumers only; a lambda consumer shapes its input in its own handle",
      });
    }
    if (c.kind === 'http' && c.url === undefined) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'an http consumer needs the url its deliveries are POSTed to' });
    }
    if (c.kind === 'http' && c.entry !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['entry'], message: 'an http consumer runs the shared HTTP worker; remove entry' });
    }
    if (c.kind === 'http' && c.http && c.http.timeoutMs > c.timeoutSeconds * 1000) {
      ctx.addIssue({
        code: 'custom',
        path: ['http', 'timeoutMs'],
        message: `must not exceed the worker's timeoutSeconds (${c.timeoutSeconds * 1000} ms), got ${c.http.timeoutMs}`,
      });
    }
    // Lease, retry budget, batch and concurrency: the rule table ConsumerWorker checks too, bounds included.
    // `resolved`: a setting left at its default is shown as that default, not as missing.
    for (const problem of checkConsumer(c)) {
      ctx.addIssue({ code: 'custom', path: [...problem.path], message: problem.message, params: { resolved: c[problem.path[0]] } });
    }
  });
export type ConsumerConfig = z.infer<typeof consumerSchema>;

/**
 * Slack ids as Slack issues them: a workspace (team) id starts with T, a channel id with C (public)
 * or G (private); upper-case letters and digits, within the 255 characters Chatbot accepts. A channel
 * name (`#alerts`) is the usual mistake, and Chatbot only reports it at deploy time.
 */
export const SLACK_WORKSPACE_ID = /^T[A-Z0-9]{1,254}$/;

/** The configuration's `tracing` choices. */
export const TRACING_MODES = ['off', 'xray'] as const;

/** The configuration's `intake.endpoint` choices (lib/constructs/ingest-api.ts). */
export const INTAKE_ENDPOINTS = ['http-api', 'function-url'] as const;
export type IntakeEndpoint = (typeof INTAKE_ENDPOINTS)[number];
const INTAKE_RESERVED_CONCURRENCY_MESSAGE =
  "must be an integer of at least 1 (concurrent executions reserved for intake); remove it to use the account's shared pool";
export const SLACK_CHANNEL_ID = /^[CG][A-Z0-9]{1,254}$/;

const alarmsSchema = z
  .object({
    email: z.string().email().optional(),
    /** The Slack channel the alarm topic posts to through AWS Chatbot (the workspace authorized in its console first). */
    slack: z
      .object({
        workspaceId: z
          .string()
          .regex(
            SLACK_WORKSPACE_ID,
            'must be a Slack workspace id: starts with T, then upper-case letters and digits (the Chatbot console shows it)',
          ),
        channelId: z
          .string()
          .regex(
            SLACK_CHANNEL_ID,
            "must be a Slack channel id, not its name: starts with C or G, then upper-case letters and digits (the end of the channel's Copy link URL)",
          ),
      })
      .strict()
      .optional(),
    /** Endpoints SNS POSTs every alarm and recovery to (a pager's events URL); https only, the message names the alarm. */
    https: z
      .array(
        z
          .string()
          .url('must be an absolute https:// URL')
          .refine((u) => u.startsWith('https://'), 'must be an https:// URL: SNS would send alarms over plain HTTP'),
      )
      .refine((urls) => new Set(urls).size === urls.length, 'lists the same URL twice')
      .optional(),
    /**
     * Each source's signature-failure alarm: ALARM at `threshold` verification failures within
     * `windowMinutes` (the defaults, and why, in core/metrics.ts); locally the same rule in `hookledger alarms`.
     */
    signatureFailures: z
      .object({
        threshold: z.number().int().min(1).default(DEFAULT_SIGNATURE_FAILURE_THRESHOLD),
        windowMinutes: z
          .number()
          .int()
          .min(1)
          .max(
            MAX_SIGNATURE_FAILURE_WINDOW_MINUTES,
            `windowMinutes must be at most ${MAX_SIGNATURE_FAILURE_WINDOW_MINUTES}: the local stack keeps that many minutes of counts`,
          )
          .default(DEFAULT_SIGNATURE_FAILURE_WINDOW_MINUTES),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export const configSchema = z
  .object({
    sources: z.array(sourceSchema).min(1),
    consumers: z.array(consumerSchema).min(1),
    retention: z
      .object({
        /** Days a raw payload is kept; afterwards only its SHA-256 and the attribution/audit trail remain. */
        payloadDays: z.number().int().min(1).max(3650).default(30),
      })
      .strict()
      .default({ payloadDays: 30 }),
    /** Where each stored body is kept: its payload item, or the payload bucket (core/blobs.ts). */
    payloads: z
      .object({
        /**
         * A body whose stored size (gzip, when smaller) is above this many bytes goes to the payload
         * bucket and its payload item keeps the object key; up to it, the bytes stay in the item. The
         * default (7,000 bytes) is just under where the two cost the same at list prices and 30-day
         * retention (docs/configuration.md, "Where a body is stored"); a longer retention moves that point lower.
         */
        inlineMaxBytes: z
          .number()
          .int()
          .min(0)
          .max(
            MAX_INLINE_PAYLOAD_BYTES,
            `inlineMaxBytes must be at most ${MAX_INLINE_PAYLOAD_BYTES} bytes: a larger stored body does not fit a DynamoDB item (400 KB)`,
          )
          .default(DEFAULT_INLINE_PAYLOAD_BYTES),
      })
      .strict()
      .default({ inlineMaxBytes: DEFAULT_INLINE_PAYLOAD_BYTES }),
    // prefault: the default object is parsed, so signatureFailures gets its defaults when alarms is absent.
    alarms: alarmsSchema.prefault({}),
    /** What every function sends to CloudWatch Logs (priced per GB ingested). */
    logs: z
      .object({
        /**
         * Lambda's own lines (START, END, REPORT and the init lines). `WARN`, the default, keeps only
         * platform warnings and errors: the per-invocation REPORT line is about half of all log bytes
         * at low traffic, and duration, errors and throttles stay in the Lambda metrics and alarms.
         * `INFO` brings the REPORT lines back (per-invocation duration and memory in the log).
         */
        platformLevel: z.enum(['WARN', 'INFO', 'DEBUG']).default('WARN'),
        /**
         * The handlers' own lines. At `INFO`, the default, they log what went wrong (rejections,
         * failures, fencing, quarantines), duplicates and the teams' own lines; each success is on
         * record in the tables (receipt, ledger row: `hookledger trace`). `DEBUG` adds one line per
         * accepted webhook and per acknowledged delivery, and per queued message.
         */
        applicationLevel: z.enum(['INFO', 'DEBUG']).default('INFO'),
      })
      .strict()
      .default({ platformLevel: 'WARN', applicationLevel: 'INFO' }),
    /**
     * `'xray'`: every function traced with AWS X-Ray (active tracing, Powertools Tracer), the trace
     * context carried on the receipt and on each queue's messages (lambdas/shared/tracing.ts).
     * `'off'`, the default: no tracing code in any bundle (core/bundled-features.ts).
     */
    tracing: z
      .enum(TRACING_MODES, {
        error: 'must be "off" (no tracing code in any bundle) or "xray" (every function traced with AWS X-Ray)',
      })
      .default('off'),
    /** How webhooks reach intake (lib/constructs/ingest-api.ts; docs/configuration.md). */
    intake: z
      .object({
        /**
         * `'http-api'`, the default: an API Gateway HTTP API with stage throttling and access logs.
         * `'function-url'`: intake's own Lambda function URL (auth NONE: each webhook is verified by its
         * signature, as behind the HTTP API), no per-request API Gateway price; no stage throttling,
         * access log, WAF or custom domain.
         */
        endpoint: z
          .enum(INTAKE_ENDPOINTS, {
            error: 'must be "http-api" (API Gateway HTTP API, the default) or "function-url" (intake\'s Lambda function URL)',
          })
          .default('http-api'),
        /**
         * Reserved concurrency of the intake function, for either endpoint, opt-in (default none: the
         * account's shared pool). Intake then always has this many executions and never more: requests
         * above it are refused (429 on a function URL; providers retry) rather than taking the
         * concurrency the fan-out and the consumers need. A reservation is refused when it leaves the
         * account under 100 unreserved, which fails the first deploy on a new account. The
         * IntakeThrottles alarm fires on the first refused request.
         */
        reservedConcurrency: z
          .number({ error: INTAKE_RESERVED_CONCURRENCY_MESSAGE })
          .int(INTAKE_RESERVED_CONCURRENCY_MESSAGE)
          .min(1, INTAKE_RESERVED_CONCURRENCY_MESSAGE)
          .optional(),
      })
      .strict()
      .prefault({}),
    /** The fan-out's event source on the EventStore stream (lib/constructs/fan-out.ts). */
    fanout: z
      .object({
        /**
         * Seconds each shard's batch may gather before the fan-out is invoked (Lambda's
         * MaximumBatchingWindowInSeconds), 0-300: fuller batches, so fewer fan-out invocations and
         * SQS send requests, for up to this much more latency before delivery.
         * @default 0 (none: a batch is handed over at the shard's next read)
         */
        batchingWindowSeconds: batchingWindowSchema("seconds the stream's batches may gather before the fan-out runs; 0: none").default(0),
      })
      .strict()
      .prefault({}),
    /** The scheduled reconciler (lambdas/reconcile). */
    reconcile: z
      .object({
        /** Re-queue the missing and stalled deliveries each run finds (ledger-safe; paused consumers are skipped). */
        repair: z.boolean().default(true),
        /** At most this many re-queues per run; the rest are logged and left to the next run or an operator. */
        maxRepairsPerRun: z.number().int().min(1).max(10_000).default(500),
      })
      .strict()
      .default({ repair: true, maxRepairsPerRun: 500 }),
    /** The window index (core/model.ts WINDOW_INDEX): what window queries read instead of scanning. */
    windowIndex: z
      .object({
        /**
         * Tenants sending more than about 1,000 webhooks a second (one index partition's write limit):
         * tenant id -> how many index partitions a day of its receipts is spread over (hash of the
         * event id). Every other tenant has one partition per day.
         */
        hotTenants: z.record(z.string().min(1), z.number().int().min(2).max(64)).default({}),
      })
      .strict()
      .default({ hotTenants: {} }),
    /**
     * How the tables are billed: `'on-demand'` (default) or `{ mode: 'provisioned', minWrite, maxWrite,
     * minRead, maxRead, targetUtilization }` with auto scaling on every table and index; one setting for
     * both tables or `{ default?, eventStore?, ledger? }` (core/config/capacity.ts; docs/cost-and-scale.md "Capacity").
     */
    capacity: capacitySchema,
  })
  .strict()
  .superRefine((c, ctx) => {
    for (const [list, what] of [
      [c.sources, 'source'],
      [c.consumers, 'consumer'],
    ] as const) {
      const seen = new Set<string>();
      list.forEach((item, i) => {
        if (seen.has(item.id)) {
          ctx.addIssue({ code: 'custom', path: [`${what}s`, i, 'id'], message: `duplicate ${what} id "${item.id}"` });
        }
        seen.add(item.id);
      });
    }
  });

export type HookledgerConfigInput = z.input<typeof configSchema>;
export type HookledgerConfig = z.infer<typeof configSchema>;

/** Validates a configuration; throws one ConfigurationError naming every bad value and where it is. */
export function defineConfig(input: HookledgerConfigInput): HookledgerConfig {
  // One parse per process: building zod's compiled fast path would cost more than it saves.
  const parsed = configSchema.safeParse(input, { jitless: true });
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => {
    // A value the source did not write (a scheme option's default, a preset's) is shown as its default.
    const resolved = issue.code === 'custom' ? (issue.params as { resolved?: unknown } | undefined)?.resolved : undefined;
    const where = describePath(input, issue.path, resolved);
    return `${where}: ${issue.message}`;
  });
  throw new ConfigurationError(`invalid hookledger config:\n  ${lines.join('\n  ')}`);
}

function describePath(input: unknown, path: readonly PropertyKey[], resolved?: unknown): string {
  let node: unknown = input;
  const parts: string[] = [];
  for (const key of path) {
    const child = node && typeof node === 'object' ? (node as Record<PropertyKey, unknown>)[key] : undefined;
    if (typeof key === 'number' && child && typeof child === 'object' && 'id' in child) {
      parts.push(`[id=${String((child as { id: unknown }).id)}]`);
    } else {
      parts.push(typeof key === 'number' ? `[${key}]` : `.${String(key)}`);
    }
    node = child;
  }
  const shown = node !== undefined ? JSON.stringify(node) : resolved !== undefined ? `default ${JSON.stringify(resolved)}` : 'missing';
  return `${parts.join('').replace(/^\./, '')} (value ${shown})`;
}
