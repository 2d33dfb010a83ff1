// Which PostgreSQL server the tests use: TEST_DATABASE_URL (or DATABASE_URL) when set;
// otherwise one embedded PostgreSQL for the whole run, in a temporary folder, with
// durability off (a test run never needs to survive a crash).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openEmbeddedPostgres } from '../../src/db/embedded.js';

export interface TestServer {
  adminUrl: string;
  stop: () => Promise<void>;
}

export async function startTestServer(): Promise<TestServer> {
  const url = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (url) return { adminUrl: url, stop: async () => {} };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'animal-store-test-'));
  const server = await openEmbeddedPostgres({ dataDir, fast: true, log: () => {} });
  return {
    adminUrl: server.adminUrl,
    stop: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
