/**
 * The catalog as data for people: the rows `hookledger providers --json` prints and the Markdown
 * table of docs/providers.md (written by scripts/providers-table.ts, kept in sync by a test).
 */
import { signedParts } from '../schemes';
import { type FieldLocation, PROVIDERS, type ProviderPreset, type ProviderSummary } from './catalog';

const where = (from: FieldLocation): string =>
  'body' in from ? `body.${from.body}` : 'header' in from ? `header ${from.header}` : `fixed "${from.value}"`;

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
    '| name | provider | scheme | signature covers | event id | replay protection | handshake | proof |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}
