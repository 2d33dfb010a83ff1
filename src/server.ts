// Bootstrap only: configuration, database, migrations, listen, graceful close.
//
// Only what opening the database needs is imported up front. The rest (the app, the
// migrator, the pools) is imported while the embedded PostgreSQL starts in its own process,
// not before it, so that the two overlap.
import closeWithGrace from 'close-with-grace';
import { newSecret, type ApiKeyVerifier } from './api-keys/verifier.js';
import { ConfigError, loadConfig, readEnvFile, type Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { asciiOnlyWords } from './db/locale.js';
import { tracingRequested } from './tracing/context.js';
import type { buildApp } from './app.js';
import type { ApiKeysRepository } from './api-keys/repository.js';

const note = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

/**
 * SIGINT and SIGTERM start one graceful shutdown. The same signal again within a second is
 * the same request delivered twice, not a second one: under `npm start` (which execs node),
 * a terminal's Ctrl-C reaches this process from the terminal and again from npm, which
 * forwards it. Any later signal ends the process at once.
 */
function onStopSignals(stop: (signal: NodeJS.Signals) => void): void {
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  const handle = (signal: NodeJS.Signals): void => {
    if (!first) {
      first = { signal, at: Date.now() };
      stop(signal);
    } else if (signal !== first.signal || Date.now() - first.at > 1000) {
      note(`second ${signal}, exiting now`);
      process.exit(1);
    }
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
}

/** The modules the service needs once its database is open. */
async function startTracing() {
  const [{ startTracing: start }, { operationOf }] = await Promise.all([import('./tracing/tracing.js'), import('./contract/spec.js')]);
  return start(process.env, operationOf);
}

async function loadService() {
  const [app, migrator, pool, apiKeys] = await Promise.all([import('./app.js'), import('./db/migrate.js'), import('./db/pool.js'), import('./api-keys/repository.js')]);
  return { ...app, ...migrator, ...pool, ...apiKeys };
}

async function main(config: Config): Promise<void> {
  // Tracing, when the OTEL_* variables ask for it, starts before anything loads pg
  // (src/tracing/tracing.ts).
  const tracing = tracingRequested(process.env) ? await startTracing() : undefined;
  // Loading starts once the embedded PostgreSQL is spawned, not before: the module loader
  // would otherwise run first and delay the spawn until everything is loaded.
  let loading: ReturnType<typeof loadService> | undefined;
  const load = (): ReturnType<typeof loadService> => {
    if (!loading) {
      loading = loadService();
      loading.catch(() => undefined); // awaited below, once the database is open
    }
    return loading;
  };
  const db = await openDatabase(config, { shareRunning: false, log: note, onSpawned: load });
  let service: Awaited<ReturnType<typeof loadService>>;
  try {
    service = await load();
    // Migrate before building the app: the app reads the api_keys table as it starts.
    if (config.MIGRATE_ON_START) await service.migrate(db.url, { info: note });
  } catch (error) {
    await db.close();
    throw error;
  }
  const { buildApp, createLogger, closePool, createPool, createApiKeysRepository } = service;
  const logger = createLogger(config.LOG_LEVEL);
  const pool = createPool({ ...config, DATABASE_URL: db.url }, logger);
  const readPool = config.DATABASE_READ_URL ? createPool({ ...config, DATABASE_URL: config.DATABASE_READ_URL }, logger) : undefined;
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  // Drain HTTP first (stop accepting, finish in-flight requests), then release the pools,
  // and stop an embedded PostgreSQL last. Also what a failed start runs: whatever it had
  // started (an embedded PostgreSQL above all) must not outlive it.
  const close = async (): Promise<void> => {
    await app?.close();
    await Promise.all([closePool(pool), readPool && closePool(readPool)]);
    await db.close();
    await tracing?.shutdown().catch(() => undefined);
  };

  let address: string;
  // /readyz stays 503 until the development key below is stored and printed.
  let startedUp = false;
  try {
    app = await buildApp({ config: { ...config, DATABASE_URL: db.url }, pool, logger, ...(readPool ? { readPool } : {}), ...(tracing ? { tracing } : {}), startedUp: () => startedUp });
    address = await app.listen({ host: config.HOST, port: config.PORT });
  } catch (error) {
    await close().catch(() => undefined);
    throw listenError(error, config);
  }
  const served = app;
  // close-with-grace keeps the other events it handles (uncaught errors, SIGHUP, ...);
  // SIGINT and SIGTERM go through onStopSignals, which knows a repeated delivery.
  const grace = closeWithGrace({ delay: config.SHUTDOWN_TIMEOUT_MS, skip: ['SIGINT', 'SIGTERM'] }, async ({ err }) => {
    if (err) served.log.error({ err }, 'shutting down after an uncaught error');
    await close();
  });
  let stopping = false;
  onStopSignals((signal) => {
    stopping = true;
    served.log.info({ signal }, 'shutting down');
    void grace.close();
  });

  // Search needs the letters of every script to be letters (src/db/locale.ts).
  void asciiOnlyWords(pool).then((warning) => warning && served.log.warn(warning), () => undefined);
  if (db.embedded) note(`Using the embedded PostgreSQL in ${config.DATA_DIR} (port ${db.embedded.port}); set DATABASE_URL to use your own server.`);
  try {
    await showDevelopmentKey(createApiKeysRepository(pool), app.apiKeyVerifier, db, address);
    startedUp = true;
  } catch (error) {
    // Ctrl-C while the key is stored ends the pool under it: that is the shutdown asked
    // for, which close-with-grace finishes (and exits 0), not a failed start.
    if (stopping) return;
    // Still a failed start: what it started must not outlive it.
    await close().catch(() => undefined);
    throw error;
  }
}

/**
 * A development database starts with one key, shown once; never with DATABASE_URL. It is
 * stored only once the service listens, and printed once the key cache holds it (it would
 * learn of it later, by NOTIFY: a request sent at once with the key was 401): a start that
 * fails earlier leaves no key, so the next start makes and shows one.
 */
async function showDevelopmentKey(apiKeys: ApiKeysRepository, verifier: ApiKeyVerifier, db: Database, address: string): Promise<void> {
  if (!db.embedded || (await apiKeys.count()) > 0) return;
  const { secret: developmentKey, hash, prefix } = newSecret();
  const created = await apiKeys.create({ name: 'development', hash, prefix });
  await verifier.refresh(created.id);
  note(
    [
      '',
      `Development API key (shown once, keep it): ${developmentKey}`,
      'Try it:',
      `  curl -H "Authorization: Bearer ${developmentKey}" ${address}/v1/pets`,
      `  curl -H "Authorization: Bearer ${developmentKey}" -H "Content-Type: application/json" -d '{"name":"Rex","categoryId":1,"status":"available"}' ${address}/v1/pets`,
      'More keys: npm run --silent apikey -- create <name> [--scopes pets:read,orders:write] [--expires 30d]',
      '',
    ].join('\n'),
  );
}

/** Why the service could not listen, in terms of the settings that choose where. */
function listenError(error: unknown, { HOST, PORT }: Config): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === 'EADDRINUSE') return new Error(`${HOST}:${PORT} is already in use (EADDRINUSE): set PORT to a free port (or PORT=0 for any), or stop what listens there`);
  if (code === 'EACCES') return new Error(`not allowed to listen on ${HOST}:${PORT}: set PORT to 1024 or above`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new Error(`HOST=${HOST} is not an address of this machine: set HOST (127.0.0.1, or 0.0.0.0 for every interface)`);
  return error;
}

let config: Config;
try {
  const envFile = readEnvFile();
  if (envFile) note(`Settings read from ${envFile} (the environment's own win over it).`);
  config = loadConfig();
} catch (error) {
  note(error instanceof ConfigError ? error.message : String(error));
  process.exit(1);
}
await main(config).catch((error: unknown) => {
  note(`Start-up failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
