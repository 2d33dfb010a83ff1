// Every documented combination of settings starts (docs/production.md, "Settings"):
// the real service process (src/server.ts) with metrics open or off, a streaming replica
// (DATABASE_READ_URL) or none, Redis for the rate limit or none, CORS or none, and an
// external or the embedded PostgreSQL. All 32 combinations would be 32 starts; the rows
// below are a covering array instead: every value of any two settings meets every value of
// the other in some row (the first case checks it), which is where a start-up failure of
// two settings together shows (metrics with a replica registered one metric twice, and the
// service did not start).
//
// One pair cannot be: a replica with the embedded database. The replica streams from a
// primary the service does not start, so DATABASE_READ_URL needs DATABASE_URL
// (src/config.ts); the last case checks that such a start is refused, saying so.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { closePool, createPool } from '../../src/db/pool.js';
import { createApiKey, createTestDatabase } from '../helper.js';
import { runTs, startServer, within, WAIT_MS, type ServerProcess } from '../process.js';
import { startReplicatedPair, type ReplicatedPair } from '../support/replication.js';
import { REDIS_URL, requires } from '../support/requires.js';
import { call, type RawAnswer } from '../support/wire.js';

interface Settings {
  /** METRICS=open, else off. */
  metrics: boolean;
  /** DATABASE_READ_URL: a real streaming replica of the primary. */
  replica: boolean;
  /** REDIS_URL: the rate limit counted in Redis. */
  redis: boolean;
  /** CORS_ORIGINS=https://app.example. */
  cors: boolean;
  /** No DATABASE_URL: the embedded PostgreSQL in a DATA_DIR of the row's own. */
  embedded: boolean;
}
type Setting = keyof Settings;

/** Whether settings can go together: a replica needs an external primary. */
const possible = (s: Partial<Settings>): boolean => !(s.replica === true && s.embedded === true);

const ROWS: Settings[] = [
  { metrics: false, replica: false, redis: false, cors: false, embedded: false },
  { metrics: false, replica: true, redis: false, cors: false, embedded: false },
  { metrics: true, replica: true, redis: true, cors: false, embedded: false },
  { metrics: true, replica: true, redis: false, cors: true, embedded: false },
  { metrics: true, replica: false, redis: false, cors: false, embedded: true },
  { metrics: false, replica: false, redis: true, cors: true, embedded: true },
];

const title = (s: Settings): string =>
  [s.metrics ? 'metrics open' : 'metrics off', s.replica ? 'a replica' : 'no replica', s.redis ? 'Redis' : 'no Redis', s.cors ? 'CORS' : 'no CORS', s.embedded ? 'embedded database' : 'external database'].join(', ');

const ORIGIN = 'https://app.example';
const haveRedis = await requires('redis', 'test/deploy/settings.test.ts (the rows with REDIS_URL)');

let pair: ReplicatedPair | undefined;
let replicaKey = '';
const folders: string[] = [];

beforeAll(async () => {
  pair = await startReplicatedPair();
  await migrate(pair.primaryUrl, { info: () => {} });
  replicaKey = await keyFor(pair.primaryUrl);
  // The replica has the key (the service reads keys from the primary, but be exact).
  await pair.waitForReplay();
}, 180_000);
afterAll(async () => {
  await pair?.stop();
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

/** A new API key stored in the database at `url`. */
async function keyFor(url: string): Promise<string> {
  const pool = createPool({ DATABASE_URL: url, DB_POOL_MAX: 1, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 10_000 });
  try {
    return (await createApiKey(pool, 'settings')).key;
  } finally {
    await closePool(pool);
  }
}

/** The service's connections open on the replica. */
async function replicaConnections(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'animal-store-api'")).rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/** The Redis keys under `prefix`. */
async function redisKeys(prefix: string): Promise<string[]> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    return await redis.keys(`${prefix}*`);
  } finally {
    await redis.quit();
  }
}

const newDataDir = (): string => {
  folders.push(mkdtempSync(path.join(tmpdir(), 'animal-store-settings-')));
  return folders.at(-1) as string;
};

describe('every documented combination of settings starts and answers', () => {
  it('the rows hold every pair of values of any two settings that can go together', () => {
    const settings = Object.keys(ROWS[0] as Settings) as Setting[];
    const missing: string[] = [];
    for (const [i, a] of settings.entries()) {
      for (const b of settings.slice(i + 1)) {
        for (const x of [false, true]) {
          for (const y of [false, true]) {
            if (!possible({ [a]: x, [b]: y })) continue;
            if (!ROWS.some((row) => row[a] === x && row[b] === y)) missing.push(`${a}=${x} with ${b}=${y}`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
    expect(ROWS.filter((row) => !possible(row))).toEqual([]);
  });

  // A row with Redis where there is none is skipped (requires() said so, once).
  for (const row of ROWS) it.skipIf(row.redis && !haveRedis)(title(row), () => answers(row));

  it('a replica with the embedded database is refused at start, saying why', async () => {
    const result = await runTs('src/server.ts', [], { DATA_DIR: newDataDir(), DATABASE_READ_URL: (pair as ReplicatedPair).replicaUrl, PORT: '0' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('DATABASE_READ_URL needs DATABASE_URL');
  });
});

/**
 * Starts the service with the row's settings and checks that each took effect: the list
 * of pets (200), /metrics (200 when open, 404 when off), a CORS preflight (allowed only
 * with CORS), the reads on the replica, the rate limit's count in Redis. Then a clean stop.
 */
async function answers(row: Settings): Promise<void> {
  const replica = row.replica ? (pair as ReplicatedPair) : undefined;
  const env: Record<string, string> = { METRICS: row.metrics ? 'open' : 'off' };
  let key = '';
  let drop: (() => Promise<void>) | undefined;
  if (row.embedded) {
    env.DATA_DIR = newDataDir();
  } else if (replica) {
    Object.assign(env, { DATABASE_URL: replica.primaryUrl, DATABASE_READ_URL: replica.replicaUrl });
    key = replicaKey;
  } else {
    const database = await createTestDatabase();
    drop = database.drop;
    env.DATABASE_URL = database.url;
    key = await keyFor(database.url);
  }
  const redisPrefix = `settings-${randomUUID()}:`;
  if (row.redis) Object.assign(env, { REDIS_URL, REDIS_PREFIX: redisPrefix });
  if (row.cors) env.CORS_ORIGINS = ORIGIN;

  let server: ServerProcess | undefined;
  try {
    server = await startServer(env);
    const port = Number(new URL(server.url).port);
    const get = (target: string, headers: Record<string, string> = {}): Promise<RawAnswer> => call(port, { method: 'GET', target, headers });
    const listPets = () => get('/v1/pets', { Authorization: `Bearer ${key}` });

    if (row.embedded) {
      expect(server.output()).toContain(`Using the embedded PostgreSQL in ${env.DATA_DIR}`);
      // The development key is stored and printed once the service listens; /readyz is
      // 200 from then on, and the key cache has it once the table's NOTIFY arrives.
      await within(WAIT_MS, async () => (await get('/readyz')).status === 200, 100);
      key = /Development API key \(shown once, keep it\): (ask_\S+)/.exec(server.output())?.[1] ?? '';
      expect(key, server.output()).not.toBe('');
      await within(WAIT_MS, async () => {
        const status = (await listPets()).status;
        if (status !== 200 && status !== 401) throw new Error(`GET /v1/pets answered ${status}`);
        return status === 200;
      });
    } else {
      expect(server.output()).not.toContain('Using the embedded PostgreSQL');
    }

    const pets = await listPets();
    expect(pets.status, pets.text).toBe(200);
    expect(Array.isArray(pets.json)).toBe(true);

    const metrics = await get('/metrics');
    if (row.metrics) {
      expect(metrics.status, metrics.text).toBe(200);
      expect(metrics.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      for (const pool of row.replica ? ['primary', 'replica'] : ['primary']) expect(metrics.body).toContain(`animal_store_db_pool_connections{pool="${pool}",state="total"}`);
      if (!row.replica) expect(metrics.body).not.toContain('pool="replica"');
    } else {
      expect(metrics.status, metrics.text).toBe(404);
      expect(metrics.json).toMatchObject({ code: 'not_found', status: 404 });
    }

    const preflight = await call(port, { method: 'OPTIONS', target: '/v1/pets', headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'GET' } });
    if (row.cors) {
      expect(preflight.status, preflight.text).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe(ORIGIN);
    } else {
      expect(preflight.status, preflight.text).toBe(405);
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    }

    // The settings took effect: the list was read on the replica, counted in Redis.
    if (replica) expect(await replicaConnections(replica.replicaUrl)).toBeGreaterThan(0);
    if (row.redis) expect(await redisKeys(redisPrefix)).not.toEqual([]);

    expect(await server.stop('SIGTERM'), server.output()).toBe(0);
    // The next row counts the replica's connections from zero.
    if (replica) await within(WAIT_MS, async () => (await replicaConnections(replica.replicaUrl)) === 0, 50);
  } finally {
    await server?.stop('SIGKILL');
    await drop?.();
  }
}
