import pg from 'pg';
import type { Config } from '../config.js';

// Every statement of the repositories is named (src/db/query.ts), so PostgreSQL plans it
// once per connection, and always with its generic plan: left to itself it re-planned the
// list statements on every execution, which took longer than running them. The statements
// are written so that their generic plans are right whatever the parameters (the status
// scan in src/catalogue/pets.ts; test/db/generic-plans.test.ts). PostgreSQL 12+.
export const PLAN_CACHE_MODE = 'force_generic_plan';

export type DbSettings = Pick<Config, 'DB_POOL_MAX' | 'DB_CONNECT_TIMEOUT_MS' | 'DB_STATEMENT_TIMEOUT_MS'> & { DATABASE_URL: string };

/** Where a pool reports a connection it lost while idle (the service's JSON logger). */
export interface PoolLog {
  warn(fields: object, message: string): void;
}

const stderrLog: PoolLog = { warn: (fields, message) => process.stderr.write(`${message} ${JSON.stringify(fields)}\n`) };

/** A pool of the process. Connection waits and statements are both bounded. */
export function createPool(settings: DbSettings, log: PoolLog = stderrLog): pg.Pool {
  const pool = new pg.Pool({
    connectionString: settings.DATABASE_URL,
    max: settings.DB_POOL_MAX,
    // A request never waits longer than this for a connection: it gets 503 instead.
    connectionTimeoutMillis: settings.DB_CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    statement_timeout: settings.DB_STATEMENT_TIMEOUT_MS,
    application_name: 'animal-store-api',
    // No JIT: PostgreSQL compiles a plan whose estimated cost passes jit_above_cost anew at
    // every execution, prepared or not, and a generic plan's estimate grows with the tables
    // (docs/performance.md#no-jit).
    options: `-c plan_cache_mode=${PLAN_CACHE_MODE} -c jit=off`,
  });
  // An idle client losing its connection (database restart) must not crash the process;
  // the pool drops it and the next checkout opens a new one. Logged, without the server's
  // address or credentials: an operator sees connections dropping.
  pool.on('error', (error: Error & { code?: string }) => log.warn({ err: { message: error.message, code: error.code } }, 'database: an idle connection was lost'));
  let open = 0;
  pool.on('connect', () => open++);
  pool.on('remove', () => open--);
  openConnections.set(pool, () => open);
  return pool;
}

const openConnections = new WeakMap<pg.Pool, () => number>();

/**
 * Ends a pool and resolves once its connections are closed. pg-pool's `end()` resolves as
 * soon as it has asked each client to end, before the server has seen them go: an embedded
 * PostgreSQL stopped right after would terminate them, and each would be reported as an
 * idle connection lost ('remove' is emitted once a client has ended).
 */
export async function closePool(pool: pg.Pool): Promise<void> {
  const open = openConnections.get(pool) ?? (() => 0);
  await pool.end();
  while (open() > 0) await new Promise((resolve) => pool.once('remove', resolve));
}
