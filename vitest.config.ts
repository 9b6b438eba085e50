import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // End-to-end suites each start their own emulators on distinct ports; two cores, so keep it modest.
    maxWorkers: 2,
    // In CI also write a machine-readable summary; .ci/run prints its totals as the closing line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.ci/results/vitest.json' }]] : ['default'],
    // The SDK's notice that Node 20 support ends in 2027 would open every suite's output.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      // Everything hookledger needs; runs on the root `npm ci` alone.
      { extends: true, test: { name: 'core', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/providers/**'] } },
      // The provider proofs: their packages are test/providers' own, installed by its globalSetup when
      // missing (vitest runs it only when a proof is queued, so `vitest run test/unit` installs nothing).
      { extends: true, test: { name: 'providers', include: ['test/providers/**/*.test.ts'], globalSetup: ['test/providers/install.ts'] } },
    ],
  },
});
