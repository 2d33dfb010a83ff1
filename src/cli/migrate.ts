// `npm run migrate`: apply pending migrations and exit, for deployments that migrate as a
// separate step (then start the service with MIGRATE_ON_START=false).
import { openDatabase } from './database.js';

try {
  const db = await openDatabase();
  await db.close();
  process.stderr.write('migrations: up to date\n');
} catch (error) {
  process.stderr.write(`migrate: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
