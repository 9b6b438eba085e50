/**
 * `hookledger sources add --provider <name>`: the source entry it prints for every preset with a
 * sample event parses through the real config schema, and every attribution path it reads resolves
 * in that sample as `send --provider` posts it, read with intake's own reader (core/body.ts readBody,
 * adapters/dotted-path.ts readPath). Writing the entry into hookledger.config.ts is
 * test/unit/cli/sources-add.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { readPath } from '../../adapters/dotted-path';
import { readBody } from '../../core/body';
import { defineConfig, type SourceConfig } from '../../core/config/schema';
import { PROVIDERS } from '../../core/providers/catalog';
import { renderSample } from '../../core/providers/samples';
import { signedBody, signedParts } from '../../core/schemes';
import defaultConfig from '../../hookledger.config';
import { sourceEntry } from '../../ops/source-entry';

const NOW = Date.parse('2026-11-30T08:00:00Z');
const EVENT_ID = 'evt_01J8K7M2Q4';
const WITH_SAMPLE = PROVIDERS.filter((p) => renderSample(p.name, { eventId: EVENT_ID, now: NOW }) !== undefined);

/** The printed text, evaluated as the config file would evaluate it (plain JavaScript plus comments). */
function evaluate(text: string): Record<string, unknown> {
  return new Function(`return (${text.trim().replace(/,$/, '')});`)() as Record<string, unknown>;
}

function parsed(text: string): SourceConfig {
  const config = defineConfig({ sources: [evaluate(text) as never], consumers: defaultConfig.consumers });
  return config.sources[0]!;
}

/** The sample as `send --provider` posts it (a scheme that signs inside the body has put its fields there). */
function sampleAsSent(source: SourceConfig) {
  const sample = renderSample(source.provider!, { eventId: EVENT_ID, now: NOW })!;
  const body = signedBody(source.scheme, {
    body: Buffer.from(sample.body, 'utf8'),
    secret: 'sample-secret-0123456789abcdef',
    now: NOW,
    messageId: EVENT_ID,
  });
  return { body: readBody(body, source.bodyFormat), headers: sample.headers ?? {} };
}

const isId = (value: unknown) => typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));

describe('sources add --provider prints an entry', () => {
  it(`for each of the ${WITH_SAMPLE.length} presets with a sample, that the config schema accepts and whose every path resolves in the sample`, () => {
    expect(WITH_SAMPLE.length).toBeGreaterThan(60);
    for (const preset of WITH_SAMPLE) {
      const entry = sourceEntry({ provider: preset.name });
      const source = parsed(entry.text);
      expect(source.id, preset.name).toBe(preset.name);
      expect(source.provider, preset.name).toBe(preset.name);
      const sent = sampleAsSent(source);
      const signedHeaders = signedParts(source.scheme).headers;
      for (const [field, where] of Object.entries(source.attribution)) {
        if ('body' in where) expect(isId(readPath(sent.body, where.body)), `${preset.name} ${field} body.${where.body}`).toBe(true);
        if ('header' in where) {
          const present = where.header in sent.headers || signedHeaders.includes(where.header);
          expect(present, `${preset.name} ${field} header ${where.header}`).toBe(true);
        }
      }
      // The events list is the sample's own event type, read where the preset reads it; none where the preset fixes the type.
      const type = source.attribution.eventType;
      if ('value' in type) expect(source.events, preset.name).toBeUndefined();
      else {
        const sampleType = 'header' in type ? sent.headers[type.header] : String(readPath(sent.body, type.body));
        expect(source.events, preset.name).toEqual([sampleType]);
      }
    }
  });

  it('reads a tenant from a field the sample has where the preset has none (github: installation.id), and says what each field reads', () => {
    const entry = sourceEntry({ provider: 'github' });
    expect(entry.attribution).toEqual({ tenantId: { body: 'installation.id' }, keyId: { value: 'github' } });
    expect(entry.text).toBe(
      [
        '    {',
        "      id: 'github',",
        "      provider: 'github',",
        '      attribution: {',
        "        // eventId: header x-github-delivery (the preset's)",
        '        // eventType: header x-github-event (the preset\'s; "pull_request" in the sample)',
        '        // tenantId: body installation.id (4210 in the sample): the account the event belongs to',
        "        tenantId: { body: 'installation.id' },",
        "        // keyId: GitHub's sample has no field naming a key (an app, API key or subscription): a fixed value; change it, or read a field your deliveries carry",
        "        keyId: { value: 'github' },",
        '      },',
        "      // The event types this endpoint receives, as GitHub names them ('*' for all); the sample's:",
        "      events: ['pull_request'],",
        '    },',
      ].join('\n'),
    );
  });

  it("keeps the preset's tenant and picks a key the sample carries (slack: team_id, api_app_id), under the id asked for", () => {
    const entry = sourceEntry({ provider: 'slack', id: 'slack-events' });
    expect(entry.attribution).toEqual({ keyId: { body: 'api_app_id' } });
    expect(entry.text).toContain("      id: 'slack-events',");
    expect(entry.text).toContain('        // tenantId: body team_id (the preset\'s; "T1DC2JH3J" in the sample)');
    expect(entry.text).toContain("        keyId: { body: 'api_app_id' },");
    expect(parsed(entry.text).attribution).toMatchObject({ tenantId: { body: 'team_id' }, keyId: { body: 'api_app_id' } });
  });

  it('gives a fixed value where the signature covers no field that fits (mailgun signs only its token and timestamp), and no events for a fixed type', () => {
    const entry = sourceEntry({ provider: 'mailgun' });
    expect(entry.attribution).toEqual({ tenantId: { value: 'mailgun' }, keyId: { value: 'mailgun' } });
    expect(entry.events).toBeUndefined();
    expect(entry.text).toContain(
      "      // events: ['<type>'], // The event types this endpoint receives, as Mailgun names them ('*' for all)",
    );
  });

  it('gives meta a random verify token, which the schema requires', () => {
    const entry = sourceEntry({ provider: 'meta' });
    expect(entry.text).toMatch(/ {6}verifyToken: 'vt_[0-9a-f]{24}',/);
    expect(parsed(entry.text).verifyToken).toMatch(/^vt_[0-9a-f]{24}$/);
  });

  it('for a preset without a sample, says there is nothing to check against and still parses', () => {
    const entry = sourceEntry({ provider: 'twitch' });
    expect(entry.text).toContain('twitch has no sample event in hookledger: check the paths against a real delivery');
    expect(parsed(entry.text).attribution).toMatchObject({ tenantId: { body: 'event.broadcaster_user_id' }, keyId: { value: 'twitch' } });
  });

  it('refuses an unknown provider with the close names (exit 2)', () => {
    expect(() => sourceEntry({ provider: 'strpe' })).toThrow(
      expect.objectContaining({ name: 'UsageError', message: 'unknown provider "strpe"; did you mean "stripe", "stream"?' }),
    );
  });
});
