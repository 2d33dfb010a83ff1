// Conformance runs with tools we did not write (`npm run test:arazzo`); kept out of
// `npm test` so that CI runs them as their own gate.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/conformance/**/*.test.ts'],
    globalSetup: ['test/setup/database.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
