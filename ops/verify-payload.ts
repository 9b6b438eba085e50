/**
 * Is this the body we received? Receipts keep HMAC-SHA256(deployment key, body), not the body's plain
 * SHA-256 (which a table dump would give away for low-entropy bodies), so checking a presented body
 * needs the key: this reads it (secrets file locally, Secrets Manager on AWS), computes, compares in
 * constant time. Works after retention too: the receipt's hash stays. Never prints the key.
 */
import { matchesPayloadHmac, matchesPlainSha256 } from '../adapters/payload-hash';
import { type ConfigDeps, now as clockNow, type StoreDeps } from './deps';
import { findReceipt } from './receipts';

export interface VerifyPayloadResult {
  readonly source: string;
  readonly eventId: string;
  readonly matches: boolean;
  /** `hmac-sha256` for receipts with a keyed hash; `sha256` for receipts written before it. */
  readonly hash: 'hmac-sha256' | 'sha256';
  readonly receivedBytes: number;
  readonly presentedBytes: number;
  readonly receivedAt: number;
  /** Whether the stored payload itself is past retention (the check works either way). */
  readonly payloadExpired: boolean;
}

export async function verifyPayload(
  deps: StoreDeps & ConfigDeps & { readonly payloadHashKey: () => Promise<Buffer> },
  eventId: string,
  body: Buffer,
  options: { readonly source?: string } = {},
): Promise<VerifyPayloadResult> {
  const receipt = await findReceipt(deps, eventId, options.source);
  let matches: boolean;
  let hash: VerifyPayloadResult['hash'];
  if (receipt.payloadHmac) {
    hash = 'hmac-sha256';
    matches = matchesPayloadHmac(await deps.payloadHashKey(), body, receipt.payloadHmac);
  } else {
    hash = 'sha256';
    matches = matchesPlainSha256(body, receipt.payloadSha256 ?? '');
  }
  return {
    source: receipt.source,
    eventId: receipt.eventId,
    matches,
    hash,
    receivedBytes: receipt.payloadBytes,
    presentedBytes: body.length,
    receivedAt: receipt.receivedAt,
    payloadExpired: receipt.payloadExpiresAt <= clockNow(deps),
  };
}
