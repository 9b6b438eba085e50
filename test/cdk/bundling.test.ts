/**
 * The tests that really bundle (everything else skips esbuild): a HookledgerFunction builds locally
 * without Docker into a minified ESM file whose banner provides `require`, with a source map, the AWS
 * SDK inside and what it imports with `import()` split into chunks/, and the bundle runs; two
 * functions never share a bundle.
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
    expect(readdirSync(dir).sort()).toEqual(['chunks', 'index.mjs', 'index.mjs.map']);
    // The SDK's own import()s (credential providers this function never needs at start) are chunks.
    expect(readdirSync(join(dir, 'chunks')).filter((f) => f.endsWith('.mjs')).length).toBeGreaterThan(0);
    const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
    expect(code.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
    // No import left for the SDK: it is pinned inside the bundle.
    expect(code).not.toMatch(/from\s*["']@aws-sdk\//);
    expect(code).toContain('DynamoDBClient');

    const mod = (await import(pathToFileURL(join(dir, 'index.mjs')).href)) as { handler: () => Promise<unknown> };
    await expect(mod.handler()).resolves.toEqual({ region: 'function', os: process.platform });
    expect(existsSync(join(dir, 'index.mjs.map'))).toBe(true);
    // The map names sources as the repository does (read on the error path: lambdas/shared/stack-map.ts) ...
    const map = JSON.parse(readFileSync(join(dir, 'index.mjs.map'), 'utf8')) as { sources: string[] };
    expect(map.sources).toContain('test/cdk/fixtures/handler.ts');
    expect(map.sources.filter((s) => s.startsWith('../'))).toEqual([]);
    // ... and the function does not parse maps at each cold start.
    const [fn] = Object.values(
      assembly.getStackByName('BundlingProbe').template.Resources as Record<
        string,
        { Type: string; Properties: { Environment: { Variables: Record<string, string> } } }
      >,
    ).filter((r) => r.Type === 'AWS::Lambda::Function');
    expect(fn!.Properties.Environment.Variables.NODE_OPTIONS).toBeUndefined();
  });

  it('gives two functions two bundles, each with its own entry (the asset cache is keyed by the entry)', () => {
    const app = new App();
    const stack = new Stack(app, 'TwoBundles');
    new HookledgerFunction(stack, 'Probe', { entry: 'test/cdk/fixtures/handler.ts', description: 'probe', serviceName: 'probe' });
    new HookledgerFunction(stack, 'Other', { entry: 'test/cdk/fixtures/other-handler.ts', description: 'other', serviceName: 'other' });
    const assembly = app.synth();
    const dirs = readdirSync(assembly.directory).filter((d) => d.startsWith('asset.'));
    expect(dirs).toHaveLength(2);
    const codes = dirs.map((d) => readFileSync(join(assembly.directory, d, 'index.mjs'), 'utf8'));
    expect(codes.filter((c) => c.includes('hookledger-other-probe'))).toHaveLength(1);
  });
});
