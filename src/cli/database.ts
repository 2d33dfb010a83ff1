// The database for command-line tools: DATABASE_URL, migrated to the current schema first
// (under node-pg-migrate's lock, so it is safe next to running services).
import type pg from 'pg';
import { ConfigError } from '../config.js';
import { migrate } from '../db/migrate.js';
import { createPool } from '../db/pool.js';

export async function openDatabase(): Promise<{ pool: pg.Pool; url: string; close: () => Promise<void> }> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new ConfigError('DATABASE_URL is not set');
  await migrate(url, { info: (m) => process.stderr.write(`${m}\n`) });
  const pool = createPool({ DATABASE_URL: url, DB_POOL_MAX: 2, DB_CONNECT_TIMEOUT_MS: 5000, DB_STATEMENT_TIMEOUT_MS: 30_000 });
  return { pool, url, close: () => pool.end() };
}
