/**
 * The keyed payload hash kept on every receipt: HMAC-SHA256 of the exact bytes received, under the
 * deployment's payload-hash key (Secrets Manager on AWS, the secrets file locally). Unlike a plain
 * SHA-256 it cannot be inverted by guessing a low-entropy body (an amount, a card's last four
 * digits, a currency) from a table dump; whoever holds the key can still check a presented body
 * (`hookledger verify-payload`).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export function payloadHmac(key: Buffer, body: Buffer): string {
  return createHmac('sha256', key).update(body).digest('hex');
}

/** Whether `body` is the one whose keyed hash is `expected` (constant time). */
export function matchesPayloadHmac(key: Buffer, body: Buffer, expected: string): boolean {
  return sameHex(createHmac('sha256', key).update(body).digest(), expected);
}

/** The same check for receipts written before keyed hashes, which kept a plain SHA-256. */
export function matchesPlainSha256(body: Buffer, expected: string): boolean {
  return sameHex(createHash('sha256').update(body).digest(), expected);
}

function sameHex(actual: Buffer, expectedHex: string): boolean {
  const wanted = Buffer.from(expectedHex, 'hex');
  return wanted.length === actual.length && timingSafeEqual(actual, wanted);
}
