/**
 * Verification: the source's secrets are read once per request (`readSecrets`), and that one read
 * serves the verifier, a fetched key's credentials and the handshake's answer. Only a mismatch looks
 * again (`refresh`, once): the secret may have been rotated since it was cached.
 */

import { activeSecrets, type SecretsPort } from '../../adapters/secrets';
import { WiringError } from '../../core/errors';
import type { SecretVersion } from '../../core/model';
import type { SchemeSet } from '../../core/schemes/set';
import type { JsonWebKey, SigningSecrets, VerificationKeysPort, VerifyInput } from '../../core/schemes/types';
import { InputError } from '../recording/parse';
import type { IngestRequest } from '../recording/request';

/** A verified request: which secret verified it (kept on the receipt), and that secret (Zoom's answer is an HMAC under it). */
export interface Verified {
  readonly secretVersion: SecretVersion;
  readonly secret: string;
}

export interface VerifyPorts {
  /** The configured sources' schemes (intake's bundle holds only those: core/schemes/bundled.ts). */
  readonly schemes: SchemeSet;
  readonly secrets: SecretsPort;
  /** Where key-fetching schemes (jwks: Plaid) get the key a request names; without it such sources answer 503. */
  readonly verificationKeys?: VerificationKeysPort;
}

/**
 * The source's secrets that may verify this request: `previous` only inside its rotation overlap. The
 * ports keep an open overlap fresh themselves (the secrets file is re-read, Secrets Manager cached
 * for 30 s), so a `secrets retire` reaches a previous-secret match without help here.
 */
export async function readSecrets(port: SecretsPort, request: IngestRequest): Promise<SigningSecrets> {
  return activeSecrets(await port.get(request.source.id), request.receivedAt);
}

/** The request verified under `secrets` (refreshed once after a mismatch), or a 401 InputError with the verifier's code. */
export async function verify(request: IngestRequest, secrets: SigningSecrets, ports: VerifyPorts): Promise<Verified> {
  const { source, rawBody, headers, url, receivedAt: now } = request;
  const verifier = ports.schemes.verifierFor(source.scheme);
  const base: VerifyInput = { rawBody, headers, now, toleranceSeconds: source.toleranceSeconds, url };
  // Only key-fetching schemes (jwks) name a key; every other scheme verifies without awaiting anything more.
  const wanted = ports.schemes.keyRequestFor(source.scheme, base);
  const input: VerifyInput = wanted ? { ...base, publicKeys: await publicKeys(request, wanted, secrets, ports) } : base;
  let used = secrets;
  let result = verifier.verify(input, used);
  if (!result.ok && result.code === 'signature_mismatch') {
    // A mismatch: the secret may have been rotated since it was cached. Look once more.
    used = activeSecrets(await ports.secrets.refresh(source.id), now);
    result = verifier.verify(input, used);
  }
  if (!result.ok) throw new InputError(result.code, result.message, 401);
  const secret = result.secretVersion === 'previous' && used.previous !== undefined ? used.previous : used.current;
  return { secretVersion: result.secretVersion, secret };
}

/** The key the request names, fetched with the source's credentials (its secret); {} when the endpoint knows none. */
async function publicKeys(
  request: IngestRequest,
  wanted: { kid: string; url: string },
  secrets: SigningSecrets,
  ports: VerifyPorts,
): Promise<Record<string, JsonWebKey>> {
  if (!ports.verificationKeys) {
    throw new WiringError(
      `verify: source ${request.source.id}'s scheme fetches its keys, but intake was built without a verification keys port`,
    );
  }
  const key = await ports.verificationKeys.get({ ...wanted, sourceId: request.source.id, credentials: secrets.current });
  return key ? { [wanted.kid]: key } : {};
}
