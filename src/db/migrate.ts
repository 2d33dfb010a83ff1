import pg from 'pg';
import { PG_MIGRATE_LOCK_ID, runner } from 'node-pg-migrate';
import { migrationsDir } from '../paths.js';

export interface MigrateLog {
  info: (message: string) => void;
}

// node-pg-migrate's own lock (PG_MIGRATE_LOCK_ID, which it exports) is a *try*-lock: a
// second instance starting at the same moment fails with "Another migration is already
// running" instead of waiting. So we first wait for the same advisory lock on our own
// session, then run the migrations on that session (advisory locks are re-entrant within a
// session): the instances migrate one after the other, and the later ones find nothing to do.

export interface MigrateOptions {
  /** How long to wait for another migrator to finish (ms). */
  waitMs?: number;
  /** Only the first `count` pending migrations (a test stopping before one); default all. */
  count?: number;
}

/** Applies pending migrations, waiting up to `waitMs` for another migrator to finish. */
export async function migrate(databaseUrl: string, log: MigrateLog, { waitMs = 60_000, count }: MigrateOptions = {}): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'animal-store-api:migrate' });
  await client.connect();
  try {
    await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(waitMs))}`);
    await client.query('SELECT pg_advisory_lock($1)', [PG_MIGRATE_LOCK_ID]);
    await client.query('SET lock_timeout = 0');
    const applied = await runner({
      dbClient: client,
      dir: migrationsDir,
      direction: 'up',
      ...(count === undefined ? {} : { count }),
      migrationsTable: 'pgmigrations',
      log: () => {},
      logger: { debug: () => {}, info: () => {}, warn: (m: string) => log.info(m), error: (m: string) => log.info(m) },
      checkOrder: true,
    });
    const names = applied.map((m) => m.name);
    if (names.length > 0) log.info(`applied migrations: ${names.join(', ')}`);
    return names;
  } finally {
    await client.query('SELECT pg_advisory_unlock_all()').catch(() => {});
    await client.end();
  }
}
