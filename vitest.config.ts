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
    // Three workers on two cores: much of a file's time is spent waiting (for a child
    // process, a socket, a timer or PostgreSQL), and a third file fills those waits. Files
    // start largest first (vitest's order without a cache), so the longest do not come last.
    maxWorkers: 3,
    // A worker keeps the modules it imported for its next file (every file has its own
    // database and app, and no file changes a module's state): importing the app again for
    // each of some 90 files cost about a fifth of the run. A file that mocks a module calls
    // vi.resetModules() first (test/contract/sunset.test.ts).
    isolate: false,
  },
});
