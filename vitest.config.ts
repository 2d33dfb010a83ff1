import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/database.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // Two cores: more workers than that only adds contention with PostgreSQL.
    maxWorkers: 2,
  },
});
