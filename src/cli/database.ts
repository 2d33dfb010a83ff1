// The database for command-line tools, resolved like the service's: DATABASE_URL, or the
// embedded PostgreSQL (shared with a running service, or started just for this command).
// Migrated to the current schema first, under the same lock the service uses.
import type pg from 'pg';
import { loadConfig, readEnvFile } from '../config.js';
import { openDatabase as resolve } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { closePool, createPool } from '../db/pool.js';

export async function openDatabase(): Promise<{ pool: pg.Pool; url: string; close: () => Promise<void> }> {
  readEnvFile();
  const config = loadConfig();
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const database = await resolve(config, { shareRunning: true, log });
  try {
    await migrate(database.url, { info: log });
  } catch (error) {
    await database.close();
    throw error;
  }
  const pool = createPool({ DATABASE_URL: database.url, DB_POOL_MAX: 2, DB_CONNECT_TIMEOUT_MS: 5000, DB_STATEMENT_TIMEOUT_MS: 30_000 });
  return {
    pool,
    url: database.url,
    close: async () => {
      // closePool, not end(): end() resolves before the server has seen the connections go,
      // and an embedded PostgreSQL stopped right after would report each as lost.
      await closePool(pool);
      await database.close();
    },
  };
}
