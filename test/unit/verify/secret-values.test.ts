/**
 * What a source's secret may be under each scheme: an unreadable key (a generated `whsec_` value
 * where the scheme wants the provider's public key or hex key) is a non-match like any wrong key,
 * never an error, so the still-valid previous key keeps verifying; and each scheme says, as data,
 * whether a generated value can be used at all and how a provider's value (`secrets rotate
 * --value-file`) is checked before it is written.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PROVIDERS } from '../../../core/providers/catalog';
import { SCHEME_TYPES, type SchemeConfigInput, secretSpec, signatureHeaders, verifierFor } from '../../../core/schemes';
import { newWebhookSecret } from '../../../local/secrets-file';

const NOW = Date.parse('2026-11-30T08:00:00Z');
const BODY = Buffer.from('{"id":"evt_01J8K7M2Q4","type":"invoice.paid","tenant_id":"tenant_204","key_id":"key_42"}');
const GENERATED = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'; // what `secrets rotate` wrote before --value-file

const schemeOf = (provider: string): SchemeConfigInput => {
  const preset = PROVIDERS.find((p) => p.name === provider);
  if (!preset) throw new Error(`no preset ${provider}`);
  return preset.scheme;
};

const ed = generateKeyPairSync('ed25519');
const edRaw = (der: Buffer) => der.subarray(-32);
const edPublic = edRaw(ed.publicKey.export({ format: 'der', type: 'spki' }));
const edSeed = edRaw(ed.privateKey.export({ format: 'der', type: 'pkcs8' }));
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ADYEN_HMAC_KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const ONFLEET_SECRET = '9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a';

/** Per provider: what intake verifies with (the provider's value) and what the provider signs with. */
const CASES: Array<[provider: string, verifyWith: string, signWith: string]> = [
  ['discord', edPublic.toString('hex'), edSeed.toString('hex')],
  ['telnyx', edPublic.toString('base64'), edSeed.toString('base64')],
  ['standard-webhooks-v1a', `whpk_${edPublic.toString('base64')}`, `whsk_${edSeed.toString('base64')}`],
  [
    'sendgrid',
    ec.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    ec.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
  ],
  ['adyen', ADYEN_HMAC_KEY, ADYEN_HMAC_KEY],
  ['onfleet', ONFLEET_SECRET, ONFLEET_SECRET],
];

function request(scheme: SchemeConfigInput, secret: string) {
  const url = 'https://hooks.example.com/hooks/source';
  const headers = signatureHeaders(scheme, { body: BODY, secret, now: NOW, messageId: 'msg_2Lx9pQ', url });
  return { rawBody: BODY, headers, now: NOW, toleranceSeconds: 300, url };
}

describe('an unreadable key is a non-match, never an error', () => {
  it.each(CASES)(
    '%s: a generated whsec_ current does not stop the still-valid previous key (previous verifies, nothing thrown)',
    (provider, verifyWith, signWith) => {
      const scheme = schemeOf(provider);
      const result = verifierFor(scheme).verify(request(scheme, signWith), {
        current: GENERATED,
        previous: verifyWith,
        previousUntil: NOW + 1,
      });
      expect(result).toEqual({ ok: true, secretVersion: 'previous' });
    },
  );

  it.each(CASES)(
    '%s: with only an unreadable key the request is refused signature_mismatch (401), naming no secret',
    (provider, _, signWith) => {
      const scheme = schemeOf(provider);
      const result = verifierFor(scheme).verify(request(scheme, signWith), { current: GENERATED });
      expect(result).toMatchObject({ ok: false, code: 'signature_mismatch' });
      expect(JSON.stringify(result)).not.toContain(GENERATED.slice('whsec_'.length));
    },
  );
});

describe("each scheme's secret, as data", () => {
  it.each([
    ['discord', false],
    ['telnyx', false],
    ['standard-webhooks-v1a', false],
    ['sendgrid', false],
    ['adyen', false],
    ['onfleet', false],
    ['plaid', false],
    ['livekit', false],
    ['standard-webhooks', 'whsec'],
    ['stripe', 'whsec'],
    ['github', 'whsec'],
    ['twilio', 'whsec'],
    ['okta', 'whsec'],
  ] as const)('%s: a generated value is %s', (provider, generated) => {
    expect(secretSpec(schemeOf(provider)).generated).toBe(generated);
  });

  it('every scheme that says a generated value works verifies with one, and every one that says not cannot use it', () => {
    const generated = newWebhookSecret();
    // Every preset, and the plain `hmac` scheme no preset uses: every scheme of the registry.
    const schemes: SchemeConfigInput[] = [...PROVIDERS.map((p) => p.scheme), { type: 'hmac', header: 'x-signature' }];
    expect(new Set(schemes.map((s) => s.type))).toEqual(new Set(SCHEME_TYPES));
    for (const scheme of schemes) {
      const spec = secretSpec(scheme);
      expect(spec.usable(generated), JSON.stringify(scheme)).toBe(spec.generated === 'whsec');
    }
    // The public-key presets, the hex HMAC keys, LiveKit's key:secret and Plaid's credentials.
    expect(PROVIDERS.filter((p) => secretSpec(p.scheme).generated === false).map((p) => p.name)).toEqual([
      'standard-webhooks-v1a',
      'discord',
      'telnyx',
      'sendgrid',
      'adyen',
      'livekit',
      'plaid',
      'onfleet',
    ]);
  });

  it.each(CASES)("%s: the provider's own value is usable; a mangled one is not", (provider, verifyWith) => {
    const spec = secretSpec(schemeOf(provider));
    expect(spec.usable(verifyWith)).toBe(true);
    expect(spec.usable(`${verifyWith.slice(0, -6)}zz_z!#`)).toBe(false);
    expect(spec.usable('')).toBe(false);
  });

  it('says what the value is without quoting one: the ed25519 key and its encoding, the hex HMAC key, Plaid credentials', () => {
    expect(secretSpec(schemeOf('discord')).expected).toBe("the provider's ed25519 public key (32 bytes, hex)");
    expect(secretSpec(schemeOf('telnyx')).expected).toBe("the provider's ed25519 public key (32 bytes, base64)");
    expect(secretSpec(schemeOf('adyen')).expected).toBe("the provider's HMAC key, in hex");
    expect(secretSpec(schemeOf('plaid')).expected).toBe('<client_id>:<secret>, the credentials the key endpoint authenticates');
    expect(secretSpec(schemeOf('plaid')).usable('client_5f2a7c1e:secret_9c1d3b8a')).toBe(true);
    expect(secretSpec(schemeOf('plaid')).usable('client_5f2a7c1e')).toBe(false);
  });
});
