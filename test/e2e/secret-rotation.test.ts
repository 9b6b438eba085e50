/**
 * `hookledger secrets rotate|retire` against the running local stack, through HTTP: a secret the
 * provider issues (Discord's public key, Adyen's hex HMAC key) is rotated with `--value-file`, never
 * generated; and a secret retired by the CLI gets 401 at the stack's very next request, whatever the
 * stack had cached.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanAll } from '../../adapters/table-scan';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import { signatureHeaders } from '../../core/schemes';
import defaults from '../../hookledger.config';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { runCli } from '../support/cli';
import { startTestStack } from '../support/stack';

let stack: LocalStack;
let config: HookledgerConfig;
let statePath: string;
let dir: string;

const edRaw = (der: Buffer) => der.subarray(-32).toString('hex');
/** A Discord application's key pair: the stack keeps the public key, Discord signs with the private one. */
function discordKeys() {
  const pair = generateKeyPairSync('ed25519');
  return {
    publicKey: edRaw(pair.publicKey.export({ format: 'der', type: 'spki' })),
    privateKey: edRaw(pair.privateKey.export({ format: 'der', type: 'pkcs8' })),
  };
}
const DISCORD_BEFORE = discordKeys();
const DISCORD_AFTER = discordKeys();
const ADYEN_BEFORE = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const ADYEN_AFTER = '9F2C1A7E5B3D9C4E6F0A8B7C6D5E4F3A11D2C3B4A59687F0E1D2C3B4A5968701';

function cli(argv: string[], stdin?: NodeJS.ReadableStream) {
  return runCli(argv, config, { USER: 'e2e-rotation', HOOKLEDGER_STATE: statePath }, stdin);
}

const secretsFile = () => JSON.parse(readFileSync(stack.secretsFile, 'utf8')) as { sources: Record<string, Record<string, unknown>> };

async function post(source: string, body: object, secret: string, messageId: string) {
  const raw = Buffer.from(JSON.stringify(body));
  const scheme = config.sources.find((s) => s.id === source)!.scheme;
  const headers = signatureHeaders(scheme, { body: raw, secret, now: Date.now(), messageId, url: stack.webhookUrl(source) });
  const res = await fetch(stack.webhookUrl(source), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: raw,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const interaction = (id: string) => ({ id, type: 2, application_id: 'app_1187', guild_id: 'guild_204', data: { name: 'ping' } });
const adyenEvent = (id: string) => ({ type: 'balancePlatform.transfer.updated', data: { id, sequenceNumber: 3, amount: { value: 4200 } } });
const platformEvent = (id: string) => ({ id, type: 'invoice.paid', tenant_id: 'tenant_311', key_id: 'key_7' });

beforeAll(async () => {
  config = defineConfig({
    sources: [
      defaults.sources[0]!,
      { id: 'discord', provider: 'discord', attribution: { keyId: { body: 'application_id' } } },
      { id: 'adyen', provider: 'adyen', attribution: { tenantId: { value: 'tenant_204' }, keyId: { value: 'key_adyen' } } },
    ],
    consumers: [{ ...defaults.consumers.find((c) => c.id === 'audit-writer')!, subscribes: ['*'] }],
  });
  dir = mkdtempSync(path.join(tmpdir(), 'hookledger-rotation-'));
  const file = path.join(dir, 'secrets.json');
  // As an operator sets them up: the providers' own values (the platform source keeps a generated one).
  writeFileSync(
    file,
    JSON.stringify({
      sources: {
        platform: { current: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
        discord: { current: DISCORD_BEFORE.publicKey },
        adyen: { current: ADYEN_BEFORE },
      },
      payloadHashKey: 'e2e-payload-hash-key-7Qm2xV9Lr4Tb8Nc1',
    }),
    { mode: 0o600 },
  );
  stack = await startTestStack({ config, secretsFile: file });
  statePath = path.join(dir, 'state.json');
  await writeState(statePath, stackState(stack, null));
}, 120_000);
afterAll(() => stack?.stop());

describe('secrets rotate of a secret the provider issues', () => {
  it('refuses to generate a value for discord (exit 2, naming --value-file) and leaves the secrets file as it was', async () => {
    const before = readFileSync(stack.secretsFile, 'utf8');
    const refused = await cli(['secrets', 'rotate', 'discord']);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      'error: source "discord" (discord) cannot use a generated secret: its secret is the provider\'s ed25519 public key (32 bytes, hex). ' +
        'Rotate with the value the provider gave you: `hookledger secrets rotate discord --value-file <path>` (- for standard input)\n',
    );
    expect(readFileSync(stack.secretsFile, 'utf8')).toBe(before);
    expect(await post('discord', interaction('1187200000000000001'), DISCORD_BEFORE.privateKey, 'm1')).toMatchObject({ status: 202 });
  });

  it("--value-file puts Discord's new public key: the new key verifies, the previous one inside the overlap, a forged request 401; the key is never printed", async () => {
    const keyFile = path.join(dir, 'discord-public-key.txt');
    writeFileSync(keyFile, `${DISCORD_AFTER.publicKey}\n`, { mode: 0o600 });
    const rotated = await cli(['secrets', 'rotate', 'discord', '--value-file', keyFile, '--overlap', '6h']);
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(
      /^rotated the signing secret of discord on local stack .* to the value in .*discord-public-key\.txt\.\n/,
    );
    expect(secretsFile().sources.discord).toMatchObject({ current: DISCORD_AFTER.publicKey, previous: DISCORD_BEFORE.publicKey });

    expect(await post('discord', interaction('1187200000000000002'), DISCORD_AFTER.privateKey, 'm2')).toMatchObject({ status: 202 });
    expect(await post('discord', interaction('1187200000000000003'), DISCORD_BEFORE.privateKey, 'm3')).toMatchObject({ status: 202 });
    expect(await post('discord', interaction('1187200000000000004'), discordKeys().privateKey, 'm4')).toMatchObject({
      status: 401,
      body: { error: 'signature_mismatch' },
    });
    const traced = await cli(['trace', '1187200000000000003', '--source', 'discord', '--json']);
    expect(JSON.parse(traced.stdout).receipt).toMatchObject({ eventId: '1187200000000000003', secretVersion: 'previous' });

    const audits = (await scanAll<Record<string, unknown>>(stack.handlers.ddb, { TableName: stack.resources.tables.events })).filter(
      (i) => i.kind === 'audit' && i.action === 'secret.rotate',
    );
    expect(audits).toEqual([expect.objectContaining({ source: 'discord', operator: 'e2e-rotation', where: 'local', value: 'provided' })]);
    const written = JSON.stringify(audits) + rotated.stdout + traced.stdout;
    expect(written).not.toContain(DISCORD_AFTER.publicKey);
    expect(written).not.toContain(DISCORD_BEFORE.publicKey);
  });

  it("--value-file - reads Adyen's new hex key from standard input; the old key keeps verifying inside the overlap", async () => {
    const rotated = await cli(['secrets', 'rotate', 'adyen', '--value-file', '-'], Readable.from([Buffer.from(`${ADYEN_AFTER}\n`)]));
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toContain('to the value in standard input');
    expect(rotated.stdout).not.toContain(ADYEN_AFTER);
    expect(secretsFile().sources.adyen).toMatchObject({ current: ADYEN_AFTER, previous: ADYEN_BEFORE });
    expect(await post('adyen', adyenEvent('TRF_01J8K7M2Q4'), ADYEN_AFTER, 'a1')).toMatchObject({ status: 202 });
    expect(await post('adyen', adyenEvent('TRF_01J8K7M2R5'), ADYEN_BEFORE, 'a2')).toMatchObject({ status: 202 });
  });

  it('refuses an empty file, a missing file and a value that is no key of the scheme, naming the file and what was expected, never the value', async () => {
    const before = readFileSync(stack.secretsFile, 'utf8');
    const empty = path.join(dir, 'empty.txt');
    writeFileSync(empty, '\n  \n');
    const wrong = path.join(dir, 'not-a-key.txt');
    writeFileSync(wrong, 'whsec_C2FVsBQIhrscChlQIMV5b5sSYspob7oD\n');

    const emptyRun = await cli(['secrets', 'rotate', 'discord', '--value-file', empty]);
    expect([emptyRun.code, emptyRun.stderr]).toEqual([
      2,
      `error: --value-file ${empty} is empty; put the value the provider gave you in it (the provider's ed25519 public key (32 bytes, hex))\n`,
    ]);
    const missing = await cli(['secrets', 'rotate', 'discord', '--value-file', path.join(dir, 'nope.txt')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /^error: cannot read --value-file .*nope\.txt \(ENOENT\); give the path of a file holding the new secret, or - for standard input\n$/,
    );
    const wrongRun = await cli(['secrets', 'rotate', 'discord', '--value-file', wrong]);
    expect([wrongRun.code, wrongRun.stderr]).toEqual([
      2,
      `error: --value-file ${wrong} does not hold what source "discord" (discord) verifies with: expected the provider's ed25519 public key (32 bytes, hex)\n`,
    ]);
    const stdinRun = await cli(['secrets', 'rotate', 'adyen', '--value-file', '-'], Readable.from([Buffer.from('not-hex-at-all')]));
    expect([stdinRun.code, stdinRun.stderr]).toEqual([
      2,
      'error: --value-file - (standard input) does not hold what source "adyen" (adyen) verifies with: expected the provider\'s HMAC key, in hex\n',
    ]);
    expect(emptyRun.stderr + wrongRun.stderr + stdinRun.stderr).not.toMatch(/C2FVsBQ|not-hex-at-all/);
    expect(readFileSync(stack.secretsFile, 'utf8')).toBe(before);
  });
});

describe('secrets retire on a running local stack', () => {
  it('a secret retired by the CLI gets 401 at the very next request, although the stack had it cached as current', async () => {
    const old = secretsFile().sources.platform!.current as string;
    // The stack reads and caches the secret it verifies with.
    expect(await post('platform', platformEvent('evt_01J9RETIRE00'), old, 'r0')).toMatchObject({ status: 202 });

    const rotated = await cli(['secrets', 'rotate', 'platform', '--overlap', '6h']);
    expect(rotated.code).toBe(0);
    const fresh = secretsFile().sources.platform!.current as string;
    // Inside the overlap the old secret verifies, as the previous one.
    expect(await post('platform', platformEvent('evt_01J9RETIRE01'), old, 'r1')).toMatchObject({ status: 202 });
    const traced = await cli(['trace', 'evt_01J9RETIRE01', '--source', 'platform', '--json']);
    expect(JSON.parse(traced.stdout).receipt).toMatchObject({ secretVersion: 'previous' });

    const retired = await cli(['secrets', 'retire', 'platform']);
    expect(retired.code).toBe(0);
    expect(await post('platform', platformEvent('evt_01J9RETIRE02'), old, 'r2')).toEqual({
      status: 401,
      body: { error: 'signature_mismatch', message: expect.any(String) },
    });
    expect(await post('platform', platformEvent('evt_01J9RETIRE03'), fresh, 'r3')).toMatchObject({ status: 202 });
    expect(await post('platform', platformEvent('evt_01J9RETIRE04'), old, 'r4')).toMatchObject({ status: 401 });
  });
});
