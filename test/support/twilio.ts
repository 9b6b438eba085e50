/**
 * Twilio's request signature, computed the way Twilio documents it
 * (https://www.twilio.com/docs/usage/security#validating-requests): the full URL, then each form
 * field's name and value in field-name order, HMAC-SHA1 under the auth token, base64. Written here
 * from the documentation, not from core/schemes, so the core tests stay independent of our signer
 * without installing Twilio's SDK; test/providers/verify/twilio-signature.test.ts proves it equals
 * the `twilio` package's getExpectedTwilioSignature.
 */
import { createHmac } from 'node:crypto';

export function twilioSignature(authToken: string, url: string, form: Readonly<Record<string, string | readonly string[]>>): string {
  // A repeated field: its name once per distinct value, the values sorted (as the twilio package does).
  const field = (name: string, value: string | readonly string[]): string =>
    typeof value === 'string'
      ? name + value
      : [...new Set(value)]
          .sort()
          .map((one) => name + one)
          .join('');
  const data = Object.keys(form)
    .sort()
    .reduce((text, name) => text + field(name, form[name] as string | readonly string[]), url);
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}
