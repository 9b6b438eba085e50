/** Time-sortable random ids: a ULID (48-bit ms time + 80 random bits, Crockford base32) with a prefix. */
import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function ulid(now: number = Date.now()): string {
  let time = '';
  let t = Math.floor(now);
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const random = randomBytes(10);
  let bits = 0n;
  for (const byte of random) bits = (bits << 8n) | BigInt(byte);
  let rand = '';
  for (let i = 0; i < 16; i++) {
    rand = CROCKFORD[Number(bits & 31n)] + rand;
    bits >>= 5n;
  }
  return time + rand;
}

/** `rpl_01J...`: names one replay or backfill; sorts by when it was made. */
export const newReplayId = (now?: number) => `rpl_${ulid(now)}`;
export const newAuditId = (now?: number) => `aud_${ulid(now)}`;
export const newEventId = (now?: number) => `evt_${ulid(now)}`;
export const newKeyId = (now?: number) => `key_${ulid(now).slice(-12).toLowerCase()}`;
/** `rep_01J...`: names one repair run (`reconcile --repair`, the scheduled reconciler, `npm start`). */
export const newRepairId = (now?: number) => `rep_${ulid(now)}`;
