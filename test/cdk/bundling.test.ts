/**
 * The one test that really bundles (everything else skips esbuild): a HookledgerFunction builds
 * locally without Docker into a minified ESM file whose banner provides `require`, with a source map
 * and the AWS SDK inside the bundle, and the bundle runs.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { ESM_REQUIRE_BANNER, HookledgerFunction } from '../../lib/constructs/hookledger-function';

describe('HookledgerFunction bundling', () => {
  it('bundles locally to ESM with the createRequire banner, a source map and the SDK inside, and runs', async () => {
    // No 'aws:cdk:bundling-stacks' override: this stack is bundled for real, and Docker is not available.
    const app = new App();
    const stack = new Stack(app, 'BundlingProbe');
    new HookledgerFunction(stack, 'Probe', {
      entry: 'test/cdk/fixtures/handler.ts',
      description: 'bundling probe',
      serviceName: 'probe',
    });
    const assembly = app.synth();

    const assetDirs = readdirSync(assembly.directory).filter((d) => d.startsWith('asset.'));
    expect(assetDirs).toHaveLength(1);
    const dir = join(assembly.directory, assetDirs[0]!);
    expect(readdirSync(dir).sort()).toEqual(['index.mjs', 'index.mjs.map']);
    const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
    expect(code.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
    // No import left for the SDK: it is pinned inside the bundle.
    expect(code).not.toMatch(/from\s*["']@aws-sdk\//);
    expect(code).toContain('DynamoDBClient');

    const mod = (await import(pathToFileURL(join(dir, 'index.mjs')).href)) as { handler: () => Promise<unknown> };
    await expect(mod.handler()).resolves.toEqual({ region: 'function', os: process.platform });
    expect(existsSync(join(dir, 'index.mjs.map'))).toBe(true);
  });
});
