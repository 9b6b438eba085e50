/**
 * Microsoft Graph change notifications: no signature; every item of the body's `value` array
 * carries the `clientState` given when the subscription was created, a shared secret compared in
 * constant time (all items must carry it). NOTHING IS SIGNED: one captured notification reveals the
 * secret; only TLS protects it. (Rich notifications' `validationTokens` JWTs are not checked here.)
 * https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks
 */
import { rejected } from './crypto';
import { matchSharedSecret } from './shared-secret';
import type { Scheme, Verifier } from './types';

const MAX_ITEMS = 1000;

function itemsOf(raw: Buffer): Array<Record<string, unknown>> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    return 'the body is not JSON, so it carries no clientState';
  }
  const value = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>).value : undefined;
  if (!Array.isArray(value) || value.length === 0) return 'the body has no value[] of notifications';
  if (value.length > MAX_ITEMS) return `the body has more than ${MAX_ITEMS} notifications`;
  if (!value.every((item) => item && typeof item === 'object' && !Array.isArray(item)))
    return 'value[] holds something other than notifications';
  return value as Array<Record<string, unknown>>;
}

export const clientStateVerifier: Verifier = {
  verify(input, secrets) {
    const items = itemsOf(input.rawBody);
    if (typeof items === 'string') return rejected('missing_signature', items);
    let result: ReturnType<Verifier['verify']> | undefined;
    for (const [i, item] of items.entries()) {
      const state = item.clientState;
      if (typeof state !== 'string' || state === '') return rejected('missing_signature', `value.${i}.clientState is missing`);
      const matched = matchSharedSecret(state, secrets, `value.${i}.clientState`);
      if (!matched.ok) return matched;
      // One batch, one secret: items under different secrets would be a confused sender.
      if (result?.ok && result.secretVersion !== matched.secretVersion) {
        return rejected('signature_mismatch', 'the notifications carry different clientState values');
      }
      result = matched;
    }
    return result ?? rejected('missing_signature', 'the body has no value[] of notifications');
  },
};

export const clientState: Scheme = {
  signedParts: {
    body: 'bytes',
    authentication: 'shared-secret',
    headers: [],
    summary: 'nothing: each value[] item carries the shared secret as clientState (no signature, no timestamp; TLS only)',
  },
  options: {},
  verifier: () => clientStateVerifier,
  sign: () => ({ 'content-type': 'application/json' }),
  /** Sets `clientState` on every item of `value`. */
  signBody(_options, input) {
    const parsed = JSON.parse(input.body.toString('utf8')) as { value?: unknown };
    if (!Array.isArray(parsed.value)) throw new TypeError('a Microsoft Graph body has a value[] of notifications');
    const value = parsed.value.map((item: Record<string, unknown>) => ({ ...item, clientState: input.secret }));
    return Buffer.from(JSON.stringify({ ...parsed, value }), 'utf8');
  },
};
