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
    // Two workers on two cores: the run is bound by CPU, so a third worker gains little time
    // and puts three heavy files side by side, each then slower (docs/testing.md, where the
    // suite's time goes). Files start largest first (vitest's order without a cache), so the
    // longest do not come last.
    maxWorkers: 2,
    // A worker keeps the modules it imported for its next file (every file has its own
    // database and app, and no file changes a module's state): importing the app again for
    // each of some 90 files cost about a fifth of the run. A file that mocks a module calls
    // vi.resetModules() first (test/contract/sunset.test.ts).
    isolate: false,
  },
});
