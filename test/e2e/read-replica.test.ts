// DATABASE_READ_URL against a real streaming replica (two PostgreSQL clusters on loopback,
// the second a base backup of the first: test/support/replication.ts). Replay is paused while a pet is created, so what
// each read returns shows where it was served from: the replica does not have the pet yet,
// the primary does.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { closePool, createPool } from '../../src/db/pool.js';
import { buildTestApp, createApiKey, type TestApp } from '../helper.js';
import { startReplicatedPair, type ReplicatedPair } from '../support/replication.js';

let pair: ReplicatedPair;
let t: TestApp;
let primary: pg.Pool;
let writer: { authorization: string };
let reader: { authorization: string };
const WINDOW_MS = 3000;

beforeAll(async () => {
  pair = await startReplicatedPair();
  await migrate(pair.primaryUrl, { info: () => {} });
  primary = createPool({ DATABASE_URL: pair.primaryUrl, DB_POOL_MAX: 2, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 60_000 });
  writer = { authorization: `Bearer ${(await createApiKey(primary, 'writer')).key}` };
  reader = { authorization: `Bearer ${(await createApiKey(primary, 'reader')).key}` };
  await pair.waitForReplay();
  t = await buildTestApp({ url: pair.primaryUrl, pool: primary, readUrl: pair.replicaUrl, env: { READ_YOUR_WRITES_MS: String(WINDOW_MS) } });
}, 120_000);
afterAll(async () => {
  await t?.close();
  // Ended before the clusters stop (test/helper.ts says why closePool).
  if (primary) await closePool(primary);
  await pair?.stop();
});

const list = async (auth: { authorization: string }) => {
  const response = await t.api({ method: 'GET', url: '/v1/pets?limit=100', headers: auth });
  expect(response.statusCode).toBe(200);
  return (response.json() as { id: number }[]).map((p) => p.id);
};
const get = (auth: { authorization: string }, id: number) => t.api({ method: 'GET', url: `/v1/pets/${id}`, headers: auth });
const replicaConnections = async () => {
  const client = new pg.Client({ connectionString: pair.replicaUrl });
  await client.connect();
  const n = (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'animal-store-api'")).rows[0]?.n;
  await client.end();
  return n ?? 0;
};

describe('reads from a streaming replica (DATABASE_READ_URL)', () => {
  let id: number;

  it('writes go to the primary: a create succeeds while the replica (read-only) replays nothing', async () => {
    await pair.pauseReplay();
    const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...writer, 'content-type': 'application/json' }, payload: { name: 'Fresh', categoryId: 1 } });
    expect(created.statusCode).toBe(201);
    id = (created.json() as { id: number }).id;
    const onPrimary = await primary.query('SELECT 1 FROM pets WHERE id = $1', [id]);
    expect(onPrimary.rowCount).toBe(1);
  });

  it('reads go to the replica: another key lists the catalogue without the pet the replica has not replayed', async () => {
    expect(await list(reader)).not.toContain(id);
    expect(await replicaConnections()).toBeGreaterThan(0);
  });

  it('read-your-writes: the creator lists and gets its pet at once (primary, for the window)', async () => {
    expect(await list(writer)).toContain(id);
    const response = await get(writer, id);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ id, name: 'Fresh' });
  });

  it('getPet finds a pet the replica does not have yet, for any key (not found there: the primary is asked)', async () => {
    const response = await get(reader, id);
    expect(response.statusCode).toBe(200);
    expect((await get(reader, id + 1000)).statusCode).toBe(404);
  });

  it('after the window the creator reads from the replica again; once replay resumes, everyone sees the pet', async () => {
    await new Promise((r) => setTimeout(r, WINDOW_MS + 100));
    expect(await list(writer)).not.toContain(id);
    await pair.resumeReplay();
    await pair.waitForReplay();
    expect(await list(reader)).toContain(id);
    expect(await list(writer)).toContain(id);
  });

  it('a replica that cannot answer is skipped: reads fall back to the primary', async () => {
    await pair.stopReplica();
    expect(await list(reader)).toContain(id);
    expect((await get(reader, id)).statusCode).toBe(200);
  });
});
