// Bootstrap only: configuration, database, migrations, listen, graceful close.
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';

async function main(config: Config): Promise<void> {
  // Migrate before building the app: the app reads the api_keys table as it starts.
  if (config.MIGRATE_ON_START) await migrate(config.DATABASE_URL, { info: (m) => console.error(m) });
  const pool = createPool(config);
  const app = await buildApp({ config, pool });
  app.server.headersTimeout = Math.min(config.REQUEST_TIMEOUT_MS, 20_000);

  // Drain HTTP first (stop accepting, finish in-flight requests), then release the pool.
  closeWithGrace({ delay: config.SHUTDOWN_TIMEOUT_MS }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an uncaught error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
    await pool.end();
  });

  await app.listen({ host: config.HOST, port: config.PORT });
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : String(error));
  process.exit(1);
}
await main(config).catch((error: unknown) => {
  console.error(`Start-up failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
