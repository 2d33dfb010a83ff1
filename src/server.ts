// Bootstrap only: configuration, database, migrations, listen, graceful close.
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { generateApiKey, hashApiKey } from './auth/apiKeys.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { createStore } from './db/store.js';

const note = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

async function main(config: Config): Promise<void> {
  let database: Database | undefined;
  try {
    database = await openDatabase(config, { shareRunning: false, log: note });
    // Migrate before building the app: the app reads the api_keys table as it starts.
    if (config.MIGRATE_ON_START) await migrate(database.url, { info: note });
  } catch (error) {
    await database?.close();
    throw error;
  }
  const db = database;
  const pool = createPool({ ...config, DATABASE_URL: db.url });
  const readPool = config.DATABASE_READ_URL ? createPool({ ...config, DATABASE_URL: config.DATABASE_READ_URL }) : undefined;
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  // Drain HTTP first (stop accepting, finish in-flight requests), then release the pools,
  // and stop an embedded PostgreSQL last. Also what a failed start runs: whatever it had
  // started (an embedded PostgreSQL above all) must not outlive it.
  const close = async (): Promise<void> => {
    await app?.close();
    await Promise.all([pool.end(), readPool?.end()]);
    await db.close();
  };

  let address: string;
  try {
    app = await buildApp({ config: { ...config, DATABASE_URL: db.url }, pool, ...(readPool ? { readPool } : {}) });
    app.server.headersTimeout = Math.min(config.REQUEST_TIMEOUT_MS, 20_000);
    address = await app.listen({ host: config.HOST, port: config.PORT });
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
  const served = app;
  closeWithGrace({ delay: config.SHUTDOWN_TIMEOUT_MS }, async ({ signal, err }) => {
    if (err) served.log.error({ err }, 'shutting down after an uncaught error');
    else served.log.info({ signal }, 'shutting down');
    await close();
  });

  if (db.embedded) note(`Using the embedded PostgreSQL in ${config.DATA_DIR} (port ${db.embedded.port}); set DATABASE_URL to use your own server.`);
  // A development database starts with one key, shown once; never with DATABASE_URL. It is
  // stored only now that the service listens and the key is printed right after: a start
  // that fails earlier leaves no key, so the next start makes and shows one.
  const store = createStore(pool);
  if (db.embedded && (await store.countApiKeys()) === 0) {
    const developmentKey = generateApiKey();
    await store.insertApiKey('development', hashApiKey(developmentKey));
    note(
      [
        '',
        `Development API key (shown once, keep it): ${developmentKey}`,
        'Try it:',
        `  curl -H "Authorization: Bearer ${developmentKey}" ${address}/v1/pets`,
        `  curl -H "Authorization: Bearer ${developmentKey}" -H "Content-Type: application/json" -d '{"name":"Rex","categoryId":1,"status":"available"}' ${address}/v1/pets`,
        'More keys: npm run --silent apikey -- create <name>',
        '',
      ].join('\n'),
    );
  }
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  note(error instanceof ConfigError ? error.message : String(error));
  process.exit(1);
}
await main(config).catch((error: unknown) => {
  note(`Start-up failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
