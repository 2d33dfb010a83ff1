// Which PostgreSQL the process uses: DATABASE_URL when it is set (production, CI), or
// else the embedded server in DATA_DIR, started on demand.
import path from 'node:path';
import type { Config } from '../config.js';
import { ensureDatabase, openEmbeddedPostgres, type EmbeddedPostgres } from './embedded.js';

export interface Database {
  url: string;
  /** Set when the embedded server is in use. */
  embedded?: EmbeddedPostgres;
  /** Stops the embedded server if this process started it. */
  close: () => Promise<void>;
}

export const EMBEDDED_DATABASE = 'animal_store';

export async function openDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'EMBEDDED_PG_PORT'>,
  options: { shareRunning: boolean; log: (message: string) => void; onSpawned?: () => void },
): Promise<Database> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, close: async () => {} };
  const embedded = await openEmbeddedPostgres({
    dataDir: path.resolve(config.DATA_DIR),
    port: config.EMBEDDED_PG_PORT,
    log: options.log,
    shareRunning: options.shareRunning,
    ...(options.onSpawned ? { onSpawned: options.onSpawned } : {}),
  });
  try {
    const url = await ensureDatabase(embedded, EMBEDDED_DATABASE);
    return { url, embedded, close: () => embedded.stop() };
  } catch (error) {
    await embedded.stop();
    throw error;
  }
}
