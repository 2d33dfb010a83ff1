// Service processes on one database of a test file's own, started before its tests and
// stopped after them, with a pool to inspect what the database holds and an API key that
// both instances accept.
import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { closePool, createPool } from '../../src/db/pool.js';
import { createApiKey, createTestDatabase } from '../helper.js';
import { startInstances, type ServerProcess } from '../process.js';

export interface Instances {
  /** The database's URL. */
  url: string;
  /** A pool on the database (the service's own kind: it waits for each connection to end on close). */
  db: pg.Pool;
  /** An API key, created before the instances started. */
  key: string;
  servers: ServerProcess[];
}

/** Registers beforeAll/afterAll that start `count` instances; the fields are set once beforeAll has run. */
export function useInstances(count: number, keyName: string): Instances {
  const it = {} as Instances;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    it.url = database.url;
    it.db = createPool({ DATABASE_URL: database.url, DB_POOL_MAX: 4, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 60_000 });
    it.key = (await createApiKey(it.db, keyName)).key;
    it.servers = await startInstances(database.url, count);
  }, 120_000);
  afterAll(async () => {
    await Promise.all((it.servers ?? []).map((s) => s.stop('SIGKILL')));
    if (it.db) await closePool(it.db);
    await drop?.();
  });
  return it;
}
