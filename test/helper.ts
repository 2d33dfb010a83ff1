// Builds the app for tests, the way src/server.ts builds it, on a database of the test
// file's own (a copy of the migrated template). Every response that goes through `api`
// is checked against the contract.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { isIP } from 'node:net';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pg from 'pg';
import { pino } from 'pino';
import { expect, inject } from 'vitest';
import { buildApp, LOG_REDACT, type AppConfig } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { generateApiKey, hashApiKey } from '../src/api-keys/verifier.js';
import { closePool, createPool } from '../src/db/pool.js';
import { createApiKeysRepository } from '../src/api-keys/repository.js';
import type { Resolver } from '../src/events/webhooks/target.js';
import { operationInfo } from '../src/contract/spec.js';
import { contractViolations } from './contract.js';
import { startInstances, within, WAIT_MS, type ServerProcess } from './process.js';
import { databaseUrl } from './setup/database.js';

export { databaseUrl };

/**
 * A database of the test file's own: a copy of the migrated template, or (`empty`) one
 * with no tables at all, for tests of migrating itself.
 */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = inject('adminUrl');
  const name = `animal_store_t${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  await admin(options.empty ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`);
  return { url: databaseUrl(adminUrl, name), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/**
 * A pool for a test's own SQL on its database. End it with `closePool` (src/db/pool.ts), not
 * `end()`: `end()` resolves before the server has seen the connections go, and the database's
 * drop (`WITH (FORCE)`) would then terminate one mid-close, which a bare pg.Pool throws as an
 * uncaught error.
 */
export function testPool(url: string, max = 2): pg.Pool {
  return createPool({ DATABASE_URL: url, DB_POOL_MAX: max, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 60_000 });
}

export { closePool };

/**
 * The configuration production would load, for this database, with logging off, and no load
 * shedding unless a test turns it on (MAX_EVENT_LOOP_DELAY_MS): a test's answers must not
 * depend on how busy the machine running it is.
 */
export function testConfig(url: string, overrides: Record<string, string> = {}): AppConfig {
  return { ...loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', ...overrides }), DATABASE_URL: url };
}

/** The webhook resolver of test apps that give none: no name resolves, so no test ever makes a DNS query. */
const resolvesNothing: Resolver = async (hostname) => {
  throw Object.assign(new Error(`${hostname}: tests resolve no names`), { code: 'ENOTFOUND' });
};

/**
 * A test's fake resolver, held to the network rule: a delivery about to connect is given only
 * loopback addresses. Any other answer fails the test (its log says which) instead of
 * connecting: tests never reach a private or public address, not even to see it refused.
 */
function loopbackAtConnect(resolve: Resolver): Resolver {
  return async (hostname, purpose) => {
    const found = await resolve(hostname, purpose);
    const away = purpose === 'connect' ? found.find((a) => !(isIP(a.address) === 4 ? a.address.startsWith('127.') : /^(::1|::ffff:127\.[0-9.]+)$/i.test(a.address))) : undefined;
    if (away) throw new Error(`test resolver: ${hostname} answered ${away.address} to a delivery; tests connect to loopback only`);
    return found;
  };
}

export interface ApiRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  payload?: InjectOptions['payload'];
}

export interface TestApp {
  app: FastifyInstance;
  pool: pg.Pool;
  url: string;
  /** Every log line the app wrote, as text. */
  logs: string[];
  /** A valid API key. */
  key: string;
  /** Sends a request through inject and checks the answer against the contract. */
  api: (request: ApiRequest) => Promise<Awaited<ReturnType<FastifyInstance['inject']>>>;
  auth: Record<string, string>;
  close: () => Promise<void>;
}

export async function createApiKey(pool: pg.Pool, name = 'test'): Promise<{ key: string; id: number }> {
  const key = generateApiKey();
  const record = await createApiKeysRepository(pool).insert(name, hashApiKey(key));
  return { key, id: record.id };
}

/**
 * Waits until a service's key cache holds every key change made so far (a revocation above
 * all: NOTIFY is asynchronous, and a busy machine delays it). A key created now is accepted
 * only once a reload has read the table after it, and reloads run one after another, so
 * every earlier change is in force by then, for good.
 */
export async function keysSettled(pool: pg.Pool, accepts: (key: string) => Promise<boolean>): Promise<void> {
  const sentinel = await createApiKey(pool, 'sentinel');
  await within(WAIT_MS, () => accepts(sentinel.key));
}

/**
 * What the app sends through `pool` until `restore()`: the first argument of each
 * `pool.query` call (its text, or its config with `name` for our named statements).
 */
export function recordQueries(pool: pg.Pool): { sent: unknown[]; requests: () => string[]; restore: () => void } {
  const sent: unknown[] = [];
  const query = pool.query.bind(pool);
  pool.query = ((...args: Parameters<typeof query>) => {
    sent.push(args[0]);
    return query(...args);
  }) as typeof pool.query;
  // The names of the statements sent, but for those of the instance's own work on a schedule
  // (src/app.ts `jobs`, the webhook dispatcher), which may run at any moment.
  const requests = () => sent.map((q) => (q as { name?: string }).name ?? 'unnamed').filter((name) => !BACKGROUND.test(name));
  return { sent, requests, restore: () => void (pool.query = query) };
}

const BACKGROUND = /^(orders-expire|inventory-fold|api-keys-record-use|events-purge|idempotency-purge|webhook-deliveries-purge|webhook-endpoints-forget-secrets|webhook-dispatch-.*)$/;

/** Makes a placed order's hold have ended an hour ago (placed two hours ago, as the table's CHECK wants): the expiry job closes it at its next run. */
export async function lapseOrder(pool: pg.Pool, orderId: number): Promise<void> {
  await pool.query("UPDATE orders SET placed_at = now() - interval '2 hours', expires_at = now() - interval '1 hour' WHERE id = $1", [orderId]);
}

/** The pets of each status, counted one by one (removed ones left out): what getInventory must answer. */
export async function countPetsByStatus(pool: pg.Pool): Promise<{ available: number; pending: number; sold: number; noStatus: number }> {
  const rows = (await pool.query<{ s: string; n: string }>("SELECT coalesce(status, 'none') AS s, count(*) AS n FROM pets WHERE deleted_at IS NULL GROUP BY 1")).rows;
  const n = (s: string) => Number(rows.find((r) => r.s === s)?.n ?? 0);
  return { available: n('available'), pending: n('pending'), sold: n('sold'), noStatus: n('none') };
}

/** The app on a database of its own (or on `url`), with one API key. */
export async function buildTestApp(options: { url?: string; pool?: pg.Pool; readUrl?: string; env?: Record<string, string>; webhookResolver?: Resolver } = {}): Promise<TestApp> {
  const database = options.url ? undefined : await createTestDatabase();
  const url = options.url ?? (database as { url: string }).url;
  // Waits for a connection bounded at 10 s, not production's 1 s: on a busy 2-core machine
  // a burst of concurrent requests can wait longer than 1 s, and a 503 there would be the
  // machine's, not the code's. Tests of the bound build their own pool.
  const pool = options.pool ?? createPool({ DATABASE_URL: url, DB_POOL_MAX: 5, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 10_000 });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  // Production's redaction, so that what tests read of the log is what production writes.
  const logger = pino({ level: 'info', redact: [...LOG_REDACT] }, sink);
  const { key } = options.pool ? { key: '' } : await createApiKey(pool);
  const readPool = options.readUrl ? createPool({ DATABASE_URL: options.readUrl, DB_POOL_MAX: 5, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 10_000 }) : undefined;
  const app = await buildApp({ config: testConfig(url, options.env), pool, logger, ...(readPool ? { readPool } : {}), webhookResolver: options.webhookResolver ? loopbackAtConnect(options.webhookResolver) : resolvesNothing });
  const auth = { authorization: `Bearer ${key}` };
  return {
    app,
    pool,
    url,
    logs,
    key,
    auth,
    api: async (request) => {
      const response = await app.inject({ ...request, method: request.method as InjectOptions['method'] });
      expect(contractViolations(request.method, request.url, response), `${request.method} ${request.url}`).toEqual([]);
      return response;
    },
    close: async () => {
      await app.close();
      // closePool, not end(): end() resolves before the server has seen the connections go,
      // and dropping the database then terminates them (57P01, an error on an ending client).
      if (readPool) await closePool(readPool);
      if (!options.pool) await closePool(pool);
      await database?.drop();
    },
  };
}

/** A pet's times as an answer carries them (contract 1.5.0: UTC, to the millisecond), for a whole-pet comparison. */
export const PET_TIMES = { createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/), updatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/) };

/** A Pet as the API answers it (contract 1.5.0). */
export interface ApiPet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
  tags?: string[];
  createdAt: string;
  updatedAt: string;
}

/** The target of a `Link: <...>; rel="next"` header, if any. */
export const nextOf = (link: unknown): string | undefined => /^<([^>]+)>; rel="next"$/.exec(String(link ?? ''))?.[1];

/** Every pet a walk of listPets returns from `url`, following rel="next" to the last page, and the links it followed. */
export async function walkPets(t: TestApp, url: string): Promise<{ pets: ApiPet[]; links: string[] }> {
  const pets: ApiPet[] = [];
  const links: string[] = [];
  for (let next: string | undefined = url; next; ) {
    const response = await t.api({ method: 'GET', url: next, headers: t.auth });
    expect(response.statusCode, response.body).toBe(200);
    pets.push(...(response.json() as ApiPet[]));
    next = nextOf(response.headers.link);
    if (next) links.push(next);
  }
  return { pets, links };
}

/** A database of its own with one API key, and `count` service processes on it (the races of test/e2e/). */
export async function keyedInstances(count: number): Promise<{ database: { url: string; drop: () => Promise<void> }; key: string; servers: ServerProcess[] }> {
  const database = await createTestDatabase();
  const pool = testPool(database.url, 1);
  const key = (await createApiKey(pool)).key;
  await closePool(pool);
  return { database, key, servers: await startInstances(database.url, count) };
}

/** The query parameters an operation takes, in the contract's order, as a refusal of an unknown one lists them: `limit, status, ...`. */
export const queryParameters = (operationId: string): string =>
  operationInfo(operationId)
    .parameters.filter((p) => p.in === 'query')
    .map((p) => p.name)
    .join(', ');
