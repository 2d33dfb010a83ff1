import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Conformance (tools we did not write) has CI gates of its own: npm run test:arazzo, test:portman.
    exclude: [...configDefaults.exclude, 'test/conformance/**'],
    globalSetup: ['test/setup/database.ts'],
    // Ample: a case that spawns processes can take many times its usual time on a busy
    // 2-core machine, and a timeout there is a failure that says nothing about the code.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Two cores: more workers than that only adds contention with PostgreSQL.
    maxWorkers: 2,
  },
});
