import { spawn } from 'node:child_process';
import { createConnection, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { assertJava, freePort, JAVA_INSTALL_COMMAND, startDynamoLocal } from '../../local/emulators';

const FIXTURE = fileURLToPath(new URL('./fixtures/dynamo-child.ts', import.meta.url));

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function portFreed(port: number, timeoutMs = 8000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!(await portAnswers(port))) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** Runs the fixture until DynamoDB Local answers, then ends it the given way; resolves when it exited. */
async function runChild(port: number, end: 'exit' | 'SIGTERM' | 'SIGINT'): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, String(port), end === 'exit' ? 'exit' : 'wait'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`fixture exited early (${String(code)}): ${stderr}`)));
  });
  expect(await portAnswers(port)).toBe(true);
  if (end !== 'exit') child.kill(end);
  await exited;
}

describe('emulators', () => {
  describe('assertJava', () => {
    it('names the install command when java cannot run', () => {
      expect(() => assertJava('java-not-installed-here')).toThrow(JAVA_INSTALL_COMMAND);
      expect(JAVA_INSTALL_COMMAND).toBe('apt-get update && apt-get install -y openjdk-17-jre-headless');
    });

    it('passes where java is installed', () => {
      expect(() => assertJava()).not.toThrow();
    });
  });

  describe('startDynamoLocal', () => {
    it('refuses a port something already listens on instead of talking to it', async () => {
      const port = await freePort();
      const squatter = createServer().listen(port, '127.0.0.1');
      await new Promise((resolve) => squatter.once('listening', resolve));
      try {
        await expect(startDynamoLocal({ port, dbPath: null })).rejects.toThrow(`port ${port} is already in use`);
      } finally {
        squatter.close();
      }
    });

    it.each(['exit', 'SIGTERM', 'SIGINT'] as const)('leaves no JVM holding the port when its process ends by %s', async (end) => {
      const port = await freePort();
      await runChild(port, end);
      expect(await portFreed(port)).toBe(true);
    });
  });
});
