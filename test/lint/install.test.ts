/**
 * What a fresh clone's install promises. One Node line is named everywhere: package.json's engines,
 * the README's quick start, the Node CI runs on (.ci/node) and the Lambda runtime; every locked
 * package (the root's and the provider proofs' that `npm test` installs) accepts its lowest version, so
 * `npm ci` prints no engine warning there; every locked package with an install script has an entry in
 * allowScripts, so npm prints no install-script notice. The repository carries the licence text
 * package.json declares, and copyleft code stays in the development dependencies named here.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUNTIME } from '../../lib/constructs/hookledger-function';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
// npm's own range parser, so an engines range means here what it means to `npm ci`.
const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean };

interface Manifest {
  readonly license?: string;
  readonly engines?: { readonly node?: string };
  readonly allowScripts?: Readonly<Record<string, boolean>>;
}
interface LockEntry {
  readonly version?: string;
  readonly license?: string;
  readonly dev?: boolean;
  readonly hasInstallScript?: boolean;
  readonly engines?: { readonly node?: string } | readonly string[];
}
const manifest = (dir: string): Manifest => JSON.parse(read(path.join(dir, 'package.json')));
const locked = (dir: string): [string, LockEntry][] =>
  Object.entries((JSON.parse(read(path.join(dir, 'package-lock.json'))) as { packages: Record<string, LockEntry> }).packages)
    .filter(([key]) => key !== '')
    .map(([key, entry]) => [key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length), entry]);

/** The root package and the provider proofs' package (test/providers), which `npm test` installs with `npm ci`. */
const PACKAGES = ['.', 'test/providers'];
/** sha256 of the Apache License 2.0 as apache.org publishes it (LICENSE-2.0.txt), appendix included. */
const APACHE_2_0_SHA256 = 'cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30';
const PERMISSIVE = new Set('Apache-2.0 MIT MIT-0 ISC 0BSD BSD-2-Clause BSD-3-Clause BlueOak-1.0.0 Unlicense Zlib'.split(' '));
/** AGPL-3.0-or-later: the assembly mode's IAM simulator and its own packages; local only, never bundled into a Lambda. */
const DEV_ONLY_COPYLEFT = ['@cloud-copilot/iam-policy', '@cloud-copilot/iam-simulate', '@cloud-copilot/iam-utils'];

/** An SPDX expression that can be taken under permissive terms alone (one OR branch whose every AND term is permissive). */
const permissive = (expression: string) =>
  expression
    .replace(/[()]/g, '')
    .split(' OR ')
    .some((branch) => branch.split(' AND ').every((id) => PERMISSIVE.has(id.trim())));

const minimum = /^>=(\d+(?:\.\d+){0,2})$/.exec(manifest('.').engines?.node ?? '')?.[1] ?? '';
const [major] = minimum.split('.');
const lowest = [...minimum.split('.'), '0', '0'].slice(0, 3).join('.');

describe('the supported Node versions', () => {
  it('are one line: engines names its lowest release, the README the same, and CI and Lambda run its major', () => {
    expect(manifest('.').engines?.node).toBe('>=22.12.0');
    const quickStart = read('README.md').match(/^npm ci\b.*$/m)?.[0] ?? '';
    expect(quickStart).toContain(`Node ${minimum.replace(/(\.0)+$/, '')} or newer`);
    expect([...read('README.md').matchAll(/\bNode(?:\.js)? (\d+)/g)].map((m) => m[1]).filter((m) => m !== major)).toEqual([]);
    expect(execFileSync('bash', [path.join(ROOT, '.ci/node'), '--major'], { encoding: 'utf8' }).trim()).toBe(major);
    const ci = read('.ci/run');
    expect(ci.indexOf('PATH="$(bash .ci/node):$PATH"')).toBeGreaterThan(-1);
    expect(ci.indexOf('PATH="$(bash .ci/node):$PATH"')).toBeLessThan(ci.indexOf('npm ci'));
    expect(RUNTIME.name).toBe(`nodejs${major}.x`);
  });

  it.each(PACKAGES)('are accepted by the engines of every package locked in %s/package-lock.json', (dir) => {
    const refusing = locked(dir)
      .filter(([, entry]) => entry.engines !== undefined && !Array.isArray(entry.engines) && 'node' in entry.engines)
      .filter(([, entry]) => !semver.satisfies(lowest, (entry.engines as { node: string }).node))
      .map(([name, entry]) => `${name}@${entry.version} wants node ${(entry.engines as { node: string }).node}`);
    expect(refusing, `Node ${lowest} is refused by`).toEqual([]);
  });
});

describe('what npm runs and what the repository licenses', () => {
  it.each(PACKAGES)("approves in allowScripts exactly the install scripts %s/package-lock.json's packages have", (dir) => {
    const withScripts = locked(dir)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([name]) => name);
    expect(Object.keys(manifest(dir).allowScripts ?? {}).sort()).toEqual([...new Set(withScripts)].sort());
  });

  it('carries the Apache License 2.0 text, unmodified, as package.json declares', () => {
    expect(PACKAGES.map((dir) => manifest(dir).license)).toEqual(['Apache-2.0', 'Apache-2.0']);
    expect(createHash('sha256').update(read('LICENSE')).digest('hex')).toBe(APACHE_2_0_SHA256);
  });

  it('installs only permissive licences, but for the AGPL development dependencies named here', () => {
    const entries = locked('.');
    const others = entries.filter(([, entry]) => !permissive(entry.license ?? 'none'));
    expect(others.map(([name, entry]) => `${name} ${entry.license} ${entry.dev ? 'dev' : 'runtime'}`)).toEqual(
      DEV_ONLY_COPYLEFT.map((name) => `${name} AGPL-3.0-or-later dev`),
    );
  });
});
