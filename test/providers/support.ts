/**
 * What every catalog proof shares: a source built from the preset through the config schema (as a
 * team would write it), our verifier and signer for it, and attribution read exactly as intake reads it.
 */
import { generateKeyPairSync } from 'node:crypto';
import { payloadHmac } from '../../adapters/payload-hash';
import { defineConfig, type SourceConfig } from '../../core/config/schema';
import { findProvider, type ProviderPreset } from '../../core/providers/catalog';
import { signatureHeaders, signedParts, type VerifyResult, verifierFor } from '../../core/schemes';
import { extractAttribution, parseBody } from '../../lambdas/recording/parse';

/** The deployment's payload-hash key in these proofs: an event id derived from the body is `bh_` + HMAC-SHA256 under it. */
export const PAYLOAD_HASH_KEY = Buffer.from('0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0', 'hex');

/** SDKs check the timestamp against the real clock, so proofs sign "now" (whole seconds). */
export const NOW = Math.floor(Date.now() / 1000) * 1000;
export const TOLERANCE = 300;

export function preset(name: string): ProviderPreset {
  const found = findProvider(name);
  if (!found) throw new Error(`no catalog entry ${name}`);
  return found;
}

/**
 * The source a team gets by writing `{ id, provider }` with the preset's own replay protection. Where
 * the preset has no tenant or key, they are read from where its event id is (signed, or covered by
 * the preset's replay protection), so the config's door-integrity rule judges the preset itself.
 */
export function sourceFor(name: string): SourceConfig {
  const entry = preset(name);
  // An id derived from the body is no location to read a tenant from: the event type's is (signed too).
  const at = 'derived' in entry.eventId ? entry.eventType : entry.eventId;
  const attribution = { tenantId: entry.tenantId ?? at, keyId: entry.keyId ?? at };
  const config = defineConfig({
    sources: [
      {
        id: 'acme',
        provider: name,
        attribution,
        ...(entry.handshake === 'meta-hub-challenge' ? { verifyToken: 'vt_9c2f7a1e5b3d4c6e' } : {}),
      },
    ],
    consumers: [{ id: 'billing', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/billing.ts' }],
  });
  return config.sources[0]!;
}

export interface Request {
  readonly body: string;
  readonly headers: Record<string, string>;
  readonly url?: string;
}

export function verifyWith(name: string, request: Request, secret: string, now = NOW): VerifyResult {
  const source = sourceFor(name);
  const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), v]));
  return verifierFor(source.scheme).verify(
    { rawBody: Buffer.from(request.body, 'utf8'), headers, now, toleranceSeconds: TOLERANCE, url: request.url },
    { current: secret },
  );
}

export function signWith(name: string, body: string, secret: string, options: { now?: number; url?: string; messageId?: string } = {}) {
  const source = sourceFor(name);
  return signatureHeaders(source.scheme, {
    body: Buffer.from(body, 'utf8'),
    secret,
    now: options.now ?? NOW,
    messageId: options.messageId ?? 'msg_2Kp7QeWd9Lm',
    url: options.url,
  });
}

export const hasTimestamp = (name: string): boolean => signedParts(sourceFor(name).scheme).timestamp !== undefined;

/** The event id and type intake would record for this request. */
export function attributionOf(name: string, request: Request) {
  const source = sourceFor(name);
  const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const body = parseBody(Buffer.from(request.body, 'utf8'), source.bodyFormat);
  const raw = Buffer.from(request.body, 'utf8');
  const { eventId, eventType } = extractAttribution(source, body, headers, payloadHmac(PAYLOAD_HASH_KEY, raw));
  return { eventId, eventType };
}

/** true when `run` neither throws nor returns false: how the SDKs say yes. */
export async function accepts(run: () => unknown): Promise<boolean> {
  try {
    return (await run()) !== false;
  } catch {
    return false;
  }
}

export function ed25519Pair() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { seed, raw };
}

export function p256Pair() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
    publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
  };
}
