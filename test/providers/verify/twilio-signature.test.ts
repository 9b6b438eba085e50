/**
 * The core tests (test/unit/ingest-providers, test/e2e/provider-families) sign Twilio requests with
 * test/support/twilio.ts, written from Twilio's documentation so they need no provider SDK. This
 * proves that helper is Twilio's algorithm: it equals what the `twilio` package computes.
 */
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { twilioSignature } from '../../support/twilio';

const TOKEN = '9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a';

describe("test/support/twilio.ts signs exactly as the twilio package's getExpectedTwilioSignature", () => {
  it('on the status-callback form the e2e suite posts to the gateway URL', () => {
    const url = 'http://127.0.0.1:43517/hooks/twilio';
    const form = {
      AccountSid: 'AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c',
      ApiVersion: '2010-04-01',
      Body: 'Your code is 482913',
      From: '+14155550123',
      MessageSid: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
      MessageStatus: 'delivered',
      MessagingServiceSid: 'MG9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d',
      To: '+14155550199',
    };
    const expected = twilio.getExpectedTwilioSignature(TOKEN, url, form);
    expect(twilioSignature(TOKEN, url, form)).toBe(expected);
    expect(expected).toMatch(/^[A-Za-z0-9+/]{27}=$/);
  });

  it('on fields given out of order, with non-ASCII values, on a URL with a query string', () => {
    const url = 'https://hooks.example.com/hooks/twilio-sms?region=eu';
    const form = { To: '+14155550199', Body: 'Réservé ☕ 204', MessageSid: 'SM00000000000000000000000000000204', AccountSid: 'AC204' };
    expect(twilioSignature(TOKEN, url, form)).toBe(twilio.getExpectedTwilioSignature(TOKEN, url, form));
    expect(twilioSignature(TOKEN, `${url}&x=1`, form)).not.toBe(twilio.getExpectedTwilioSignature(TOKEN, url, form));
  });
});
