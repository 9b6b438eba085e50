/**
 * The catalog as data for people: the rows `hookledger providers --json` prints and the Markdown
 * table of docs/providers.md (written by scripts/providers-table.ts, kept in sync by a test).
 */
import { signedParts } from '../schemes';
import { type EventIdLocation, PROVIDERS, type ProviderPreset, type ProviderSummary } from './catalog';

const where = (from: EventIdLocation): string =>
  'derived' in from
    ? 'body hash (assigned at intake)'
    : 'body' in from
      ? `body.${from.body}`
      : 'header' in from
        ? `header ${from.header}`
        : `fixed "${from.value}"`;

export function providerSummary(preset: ProviderPreset): ProviderSummary {
  return {
    name: preset.name,
    scheme: preset.scheme.type,
    signedParts: signedParts(preset.scheme).summary,
    eventId: where(preset.eventId),
    handshake: preset.handshake ?? null,
    proof: preset.proof,
  };
}

/** Every catalog entry, in catalog order. */
export const providerSummaries = (): ProviderSummary[] => PROVIDERS.map(providerSummary);

const cell = (text: string): string => text.replace(/\|/g, '\\|');

export function providersMarkdown(): string {
  const counts = { sdk: 0, vector: 0, unproved: 0 };
  for (const p of PROVIDERS) counts[p.proof]++;
  const rows = [...PROVIDERS]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((p) => {
      const s = providerSummary(p);
      const replay = p.replayProtection === 'body' ? 'body' : 'event id';
      const proof = p.proof === 'unproved' ? 'unproved' : `${p.proof}: ${p.provedBy ?? ''}`;
      return `| \`${p.name}\` | [${cell(p.title)}](${p.docs}) | ${s.scheme} | ${cell(s.signedParts)} | ${cell(s.eventId)} | ${replay} | ${s.handshake ?? ''} | ${cell(proof)} |`;
    });
  return [
    '# Provider catalog',
    '',
    '<!-- Generated from core/providers/catalog.ts by `npx tsx scripts/providers-table.ts`; test/providers/table.test.ts fails when it is stale. -->',
    '',
    `${PROVIDERS.length} providers: ${counts.sdk} proved by the provider's own npm code (\`sdk\`, test/providers/sdk.test.ts), ` +
      `${counts.vector} by a signature published in the provider's docs (\`vector\`, test/providers/vectors.test.ts), ` +
      `${counts.unproved} listed but not yet proved (\`unproved\`: their presets work, nothing outside this project has confirmed them).`,
    '',
    "A source names one with `provider: '<name>'` instead of `scheme`; any attribution field it gives overrides the preset's.",
    '',
    'Read the "signature covers" column before relying on a preset:',
    '',
    '- **`mailgun`: the body is NOT signed.** Mailgun signs only `signature.timestamp` and `signature.token`; whoever holds one ' +
      'request can rewrite its `event-data` within the timestamp window and it still verifies. Attribution reads only the signed token ' +
      '(the event id); event type, tenant and key are fixed `{ value }`s of the source (config refuses unsigned body paths). ' +
      "Treat the stored `event-data` as unauthenticated: fetch the event from Mailgun's API by its id before acting on it.",
    '- **`okta`, `microsoft-graph`: nothing is signed.** The request carries a shared secret (Okta: the `Authorization` value ' +
      "configured on the hook; Graph: each notification's `clientState`), compared in constant time. One captured request reveals it; " +
      'only TLS protects it, and there is no timestamp, so replay protection is the event-id dedupe alone.',
    '- **`twilio`: the form parameters are signed, not the bytes.** Twilio signs the URL and the parameters sorted by name, so ' +
      'the same parameters in another order or percent-encoding verify too. The event id is the signed `MessageSid` (a re-sent request, ' +
      "reordered or not, makes no second event); config refuses `eventId: { derived: 'body-hash' }` and `replayProtection: 'body'` for " +
      'twilio sources, since both hash the exact bytes.',
    "- **`plaid`: keys are fetched.** The source's secret is `<client_id>:<secret>`; intake fetches the key named by the token's " +
      '`kid` from `/webhook_verification_key/get` (cached by kid, an unknown kid fetched once per minute, at most 10 fetches a minute). ' +
      "Plaid webhooks carry no event id: the preset derives it from the signed body (an item's webhooks share `item_id`).",
    '- **No event id is sent** by `meta`, `dropbox`, `pusher`, `plaid`, and the ids `adyen`, `onfido`, `elevenlabs`, `retell`, ' +
      "`cloudinary` and `hygraph` send are a resource's, shared by several events. Their event id is derived from the signed body " +
      '("body hash"): `bh_` + the deployment\'s keyed hash of the exact bytes, assigned at intake. A retry of the same bytes is a ' +
      'duplicate; a different body is a different event (a provider that re-serialised a retry would have it counted twice).',
    '- **Handshakes answered without storing anything**: signed POSTs (`slack-url-verification`, `zoom-url-validation`, ' +
      "`discord-ping`), GETs on the webhook path (`meta-hub-challenge`: only for the source's `verifyToken`, 403 otherwise; " +
      "`dropbox-challenge`; `okta-verification`: only with the hook's `Authorization` value) and Microsoft Graph's " +
      '`POST ?validationToken=` (`graph-validation-token`). Sources without a GET handshake answer GET with `405`, `Allow: POST`.',
    '',
    '| name | provider | scheme | signature covers | event id | replay protection | handshake | proof |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}
