// Conformance runs with tools we did not write (`npm run test:arazzo`, `npm run
// test:portman`, each naming its file); kept out of `npm test` so that CI runs each as its
// own gate.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/conformance/**/*.test.ts'],
    globalSetup: ['test/setup/database.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
