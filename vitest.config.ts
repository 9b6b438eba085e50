import { configDefaults, defineConfig } from 'vitest/config';

/** The guarantee tests the `low-cost` project runs a second time, on the lower-cost configuration. */
const LOW_COST_GUARANTEES = [
  'test/e2e/eval-matrix.test.ts',
  'test/e2e/lease.test.ts',
  'test/e2e/operations.test.ts',
  'test/e2e/repair.test.ts',
  'test/e2e/erasure.test.ts',
];

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
      // The delivery guarantees again on the documented lower-cost configuration (core/config/low-cost.ts,
      // applied by test/support/stack.ts startTestStack): the eval matrix's crashes and duplicates, leases,
      // replay, reconcile's repairs and erasure.
      {
        extends: true,
        test: {
          name: 'low-cost',
          include: LOW_COST_GUARANTEES,
          env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', HOOKLEDGER_TEST_PROFILE: 'low-cost' },
        },
      },
    ],
  },
});
