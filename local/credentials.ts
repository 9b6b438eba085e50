/**
 * The local stack's per-start credential: an access key (id and secret) that DynamoDB Local and
 * fauxqs accept as the only signer of a request, and a bearer token for the admin endpoint. Made
 * once per process at first use, so every `npm start` has a fresh one and every emulator, client and
 * listener of one process agrees on it without passing it around; `npm start` writes it 0600 beside
 * its state file (local/state.ts) for the CLI and the console, the processes that do not share it.
 *
 * What it keeps out: any other user of the machine, and any web page (a page cannot read the file,
 * and a form post or a CORS-less fetch cannot sign a request or set the admin token). What it does
 * not: a process of the same user can read the file, as it can read the data folder itself.
 */
import { randomBytes } from 'node:crypto';

/** A SigV4 signing key, as the SDK's `credentials` take it. */
export interface AccessKey {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

export interface LocalStackCredentials extends AccessKey {
  /** `Authorization: Bearer <adminToken>` on every request to the admin endpoint (local/admin-server.ts). */
  readonly adminToken: string;
}

/** Access key ids of the local stack start with it (AWS's own start with AKIA or ASIA: never one of those). */
export const LOCAL_ACCESS_KEY_PREFIX = 'AKHL';
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** An access key shaped like AWS's: a 20-character upper-case id and a 40-character secret (240 random bits). */
export function generateAccessKey(prefix = LOCAL_ACCESS_KEY_PREFIX): AccessKey {
  const random = randomBytes(20 - prefix.length);
  const id = [...random].map((byte) => ID_ALPHABET[byte % ID_ALPHABET.length]).join('');
  return { accessKeyId: `${prefix}${id}`, secretAccessKey: randomBytes(30).toString('base64url') };
}

export function generateStackCredentials(): LocalStackCredentials {
  return { ...generateAccessKey(), adminToken: randomBytes(32).toString('base64url') };
}

let current: LocalStackCredentials | undefined;

/** This process's credential (made at first use): what its emulators accept and its local clients sign with. */
export function processCredentials(): LocalStackCredentials {
  current ??= generateStackCredentials();
  return current;
}

/** Only the signing key, for an SDK client (the admin token never leaves for an emulator). */
export function signingKeyOf(credentials: AccessKey): AccessKey {
  return { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey };
}
