/**
 * Signatures said to be published in providers' docs. An entry is `proof: 'vector'` in the catalog only
 * when its vector is `confirmed`: the secret, request and signature were found on the cited page.
 *
 * The four below were written from memory, then looked up (the docs and pages search corpora), and
 * none could be confirmed on its cited page; what was found is in `confirmation`. They stay as
 * fixed-request consistency checks of the verifiers (accepted at their instant; refused under
 * another secret, with a changed byte, and late), but they prove nothing about the providers and
 * no catalog entry counts them: Slack, GitHub, Svix and Twilio are each proved by the provider's own
 * npm code in sdk.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { PROVIDERS } from '../../core/providers/catalog';
import { attributionOf, hasTimestamp, signWith, TOLERANCE, verifyWith } from './support';

interface Vector {
  readonly provider: string;
  /** Where the provider publishes it. */
  readonly page: string;
  readonly secret: string;
  readonly otherSecret: string;
  readonly body: string;
  readonly headers: Record<string, string>;
  readonly url?: string;
  /** The instant the vector was signed, epoch ms (its timestamp), or any instant when none is signed. */
  readonly at: number;
  /** True only when the values were found on `page`. */
  readonly confirmed: boolean;
  /** What looking the values up found. */
  readonly confirmation: string;
}

const SLACK_BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar' +
  '&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com' +
  '%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';

const VECTORS: readonly Vector[] = [
  {
    provider: 'slack',
    page: 'https://api.slack.com/authentication/verifying-requests-from-slack (the "Validating a request" walkthrough)',
    secret: '8f742231b10e8888abcd99yyyzzz85a5',
    otherSecret: '8f742231b10e8888abcd99yyyzzz85a6',
    body: SLACK_BODY,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': '1531420618',
      'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
    },
    at: 1531420618_000,
    confirmed: false,
    confirmation: 'the page was found; the walkthrough with these values was not in what search returned',
  },
  {
    provider: 'github',
    page: 'https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation',
    secret: "It's a Secret to Everybody",
    otherSecret: "It's a Secret to Nobody",
    body: 'Hello, World!',
    headers: { 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' },
    at: Date.parse('2026-11-30T08:00:00Z'),
    confirmed: false,
    confirmation: 'the page was found; the secret, body and signature were not in what search returned',
  },
  {
    provider: 'svix',
    page: 'https://docs.svix.com/receiving/verifying-payloads/how-manual (the worked example)',
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    body: '{"test": 2432232314}',
    headers: {
      'svix-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'svix-timestamp': '1614265330',
      'svix-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    },
    at: 1614265330_000,
    confirmed: false,
    confirmation:
      'the same secret, headers, body and signature are on a Svix customer page quoting the Svix example (developer.ongoody.com/webhooks/webhook-security), not in what search returned of the cited page',
  },
  {
    provider: 'twilio',
    page: 'https://www.twilio.com/docs/usage/security#validating-requests (the worked example)',
    secret: '12345',
    otherSecret: '12346',
    body: 'CallSid=CA1234567890ABCDE&Caller=%2B12349013030&Digits=1234&From=%2B12349013030&To=%2B18005551212',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': '0/KCTR6DLpKmkAf8muzZqo1nDgQ=' },
    url: 'https://mycompany.com/myapp.php?foo=1&bar=2',
    at: Date.parse('2026-11-30T08:00:00Z'),
    confirmed: false,
    confirmation: "the token 12345 and this URL are in twilio-php's validation docs; the signature and parameters were not found",
  },
];

function tamper(body: string): string {
  const at = body.search(/[0-9]/);
  return `${body.slice(0, at)}${body[at] === '9' ? '8' : String(Number(body[at]) + 1)}${body.slice(at + 1)}`;
}

describe.each(VECTORS)('$provider: a recalled vector, not confirmed on its page (a consistency check, not a proof)', (vector) => {
  const request = { body: vector.body, headers: vector.headers, url: vector.url };

  it('is accepted at the instant it was made', () => {
    expect(verifyWith(vector.provider, request, vector.secret, vector.at)).toEqual({ ok: true, secretVersion: 'current' });
  });

  it('is what our signer produces for the same request', () => {
    const ours = signWith(vector.provider, vector.body, vector.secret, {
      now: vector.at,
      url: vector.url,
      messageId: vector.headers['svix-id'] ?? 'unused',
    });
    for (const [name, value] of Object.entries(ours)) expect(vector.headers[name], name).toBe(value);
  });

  it('is refused under another secret: signature_mismatch', () => {
    expect(verifyWith(vector.provider, request, vector.otherSecret, vector.at)).toMatchObject({ ok: false, code: 'signature_mismatch' });
  });

  it('is refused with one byte of the body changed: signature_mismatch', () => {
    expect(verifyWith(vector.provider, { ...request, body: tamper(vector.body) }, vector.secret, vector.at)).toMatchObject({
      ok: false,
      code: 'signature_mismatch',
    });
  });

  if (hasTimestamp(vector.provider)) {
    it('is refused once it is older than the tolerance: timestamp_out_of_tolerance', () => {
      const late = vector.at + (TOLERANCE + 1) * 1000;
      expect(verifyWith(vector.provider, request, vector.secret, late)).toMatchObject({ ok: false, code: 'timestamp_out_of_tolerance' });
    });
  }
});

describe('entries proved by vector', () => {
  it('are exactly the providers with a confirmed vector here: none today', () => {
    const byVector = PROVIDERS.filter((p) => p.proof === 'vector').map((p) => p.name);
    expect(byVector).toEqual(VECTORS.filter((v) => v.confirmed).map((v) => v.provider));
    expect(byVector).toEqual([]);
  });

  it('leave every provider with a recalled vector proved by its own npm code instead', () => {
    for (const vector of VECTORS) expect(PROVIDERS.find((p) => p.name === vector.provider)?.proof, vector.provider).toBe('sdk');
  });

  it("reads a Slack Events API event's id, type and team through the preset", () => {
    const body = '{"type":"event_callback","team_id":"T1DC2JH3J","event_id":"Ev08MFMKH6","event":{"type":"app_mention","text":"hi"}}';
    const headers = signWith('slack', body, '8f742231b10e8888abcd99yyyzzz85a5');
    expect(attributionOf('slack', { body, headers })).toEqual({ eventId: 'Ev08MFMKH6', eventType: 'app_mention' });
  });
});
