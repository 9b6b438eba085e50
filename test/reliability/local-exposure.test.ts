/**
 * What `npm start` exposes: every socket its processes (Node and the DynamoDB Local JVM) listen on is
 * on the loopback interface, so webhook bodies and the ledger are not readable from the network; and
 * the data folder (DynamoDB Local's database, the stream checkpoints) is its owner's only.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../local/emulators';
import { platformEvent, signedHeaders } from '../support/factories';
import { type NpmStart, npmStart, signingSecret } from './npm-start';

/** Listening TCP sockets (address, port) of these processes, read from /proc. */
function listeningSockets(pids: readonly number[]): { address: string; port: number }[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match) inodes.add(match[1]!);
      } catch {
        // closed meanwhile
      }
    }
  }
  const out: { address: string; port: number }[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address, st (0A = LISTEN), inode
      if (cols.length < 10 || cols[3] !== '0A' || !inodes.has(cols[9]!)) continue;
      const [hex, portHex] = cols[1]!.split(':') as [string, string];
      out.push({ address: decodeAddress(hex), port: Number.parseInt(portHex, 16) });
    }
  }
  return out.sort((a, b) => a.port - b.port);
}

/** /proc/net/tcp{,6} addresses: 32-bit words in host (little-endian) order. */
function decodeAddress(hex: string): string {
  const words = hex.match(/.{8}/g)!.map((w) => w.match(/../g)!.reverse().join(''));
  if (words.length === 1)
    return words[0]!
      .match(/../g)!
      .map((b) => Number.parseInt(b, 16))
      .join('.');
  const bytes = words.join('').toLowerCase();
  if (bytes.startsWith('00000000000000000000ffff')) {
    return `::ffff:${bytes
      .slice(24)
      .match(/../g)!
      .map((b) => Number.parseInt(b, 16))
      .join('.')}`;
  }
  if (/^0{32}$/.test(bytes)) return '::';
  if (/^0{31}1$/.test(bytes)) return '::1';
  return bytes;
}

/** Every process in a process group (npm start runs detached: its group is its pid). */
function processGroup(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

const LOOPBACK = new Set(['127.0.0.1', '::ffff:127.0.0.1', '::1']);
const mode = (file: string) => statSync(file).mode & 0o777;

describe('npm start on this machine', () => {
  let run: NpmStart | undefined;
  const home = mkdtempSync(path.join(tmpdir(), 'hookledger-exposure-'));
  afterAll(async () => {
    run?.signal('SIGKILL');
    await run?.exited;
    run?.ddb.destroy();
    rmSync(home, { recursive: true, force: true });
  });

  it('listens on loopback only (DynamoDB Local, the SQS emulator, the gateway, the console), and keeps its data folder 0700 and files 0600', async () => {
    // A data folder left world-readable by an earlier version, with a file in it.
    const data = path.join(home, 'data');
    mkdirSync(data, { recursive: true });
    chmodSync(data, 0o755);
    writeFileSync(path.join(data, 'stream-checkpoints.json'), '{}\n', { mode: 0o644 });
    chmodSync(path.join(data, 'stream-checkpoints.json'), 0o644);

    run = await npmStart(home, await freePort());
    const { state } = run;
    const sockets = listeningSockets(processGroup(run.child.pid!));
    const ports = sockets.map((s) => s.port);
    // The operator console too: its printed URL is on 127.0.0.1, and without the token it answers 403.
    const consoleUrl = new URL(/console URL\s+(\S+)/.exec(run.output())?.[1] ?? 'http://missing');
    expect(consoleUrl.hostname).toBe('127.0.0.1');
    expect(ports).toEqual(expect.arrayContaining([state.dynamo.port, state.sqs.port, state.gateway.port, Number(consoleUrl.port)]));
    expect(sockets.filter((s) => !LOOPBACK.has(s.address))).toEqual([]);
    expect((await fetch(`${consoleUrl.origin}/api/overview`)).status).toBe(403);

    // One webhook through the gateway: the stream poller then rewrites its checkpoints file.
    const body = JSON.stringify(platformEvent({ id: 'evt_01J8K7Z001' }));
    const res = await fetch(`${state.gateway.url}/hooks/platform`, {
      method: 'POST',
      headers: signedHeaders(body, { secret: await signingSecret(home), msgId: 'msg_exposure_1', at: Date.now() }),
      body,
    });
    expect(res.status).toBe(202);
    const checkpoints = path.join(data, 'stream-checkpoints.json');
    const deadline = Date.now() + 60_000;
    while (readFileSync(checkpoints, 'utf8') === '{}\n' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(readFileSync(checkpoints, 'utf8')).toContain('shardId');

    expect(mode(data)).toBe(0o700);
    expect(readdirSync(data).sort()).toEqual(expect.arrayContaining(['s3', 'shared-local-instance.db', 'stream-checkpoints.json']));
    // Every folder below it 0700 (the payload bucket's, s3/<bucket>/), every file 0600.
    const entries = readdirSync(data, { recursive: true, withFileTypes: true }).map((e) => path.join(e.parentPath, e.name));
    expect(entries).toContain(path.join(data, 's3', 'hookledger-payloads'));
    expect(Object.fromEntries(entries.map((f) => [path.relative(data, f), mode(f).toString(8)]))).toEqual(
      Object.fromEntries(entries.map((f) => [path.relative(data, f), statSync(f).isDirectory() ? '700' : '600'])),
    );
  });
});
