import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // End-to-end suites each start their own emulators on distinct ports; two cores, so keep it modest.
    maxWorkers: 2,
  },
});
