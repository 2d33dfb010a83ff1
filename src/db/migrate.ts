import { runner } from 'node-pg-migrate';
import { migrationsDir } from '../paths.js';

export interface MigrateLog {
  info: (message: string) => void;
}

/**
 * Applies pending migrations. node-pg-migrate holds a PostgreSQL advisory lock while it
 * runs, so instances starting together migrate one after the other, never twice.
 */
export async function migrate(databaseUrl: string, log: MigrateLog): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: migrationsDir,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    log: () => {},
    logger: { debug: () => {}, info: () => {}, warn: (m: string) => log.info(m), error: (m: string) => log.info(m) },
    noLock: false,
    checkOrder: true,
  });
  const names = applied.map((m) => m.name);
  if (names.length > 0) log.info(`applied migrations: ${names.join(', ')}`);
  return names;
}
