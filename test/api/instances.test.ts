// Two service processes on one database: they migrate safely when started together,
// share the catalogue, and both refuse a revoked key.
import { readdirSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, PET_TIMES } from '../helper.js';
import { apikey, root, startServer, within, WAIT_MS, type ServerProcess } from '../process.js';

let database: { url: string; drop: () => Promise<void> };
let servers: ServerProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
  // Both start at once on an empty database: node-pg-migrate's lock must serialise them.
  servers = await Promise.all([startServer({ DATABASE_URL: database.url }), startServer({ DATABASE_URL: database.url })]);
}, 180_000);
afterAll(async () => {
  const codes = await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  expect(codes).toEqual([0, 0]);
  await database.drop();
});

const call = (server: ServerProcess, path: string, key: string, init: RequestInit = {}) =>
  fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers } });

describe('two instances on one database', () => {
  it('migrated once, whichever started first', async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const applied = await client.query<{ name: string }>('SELECT name FROM pgmigrations ORDER BY run_on, id');
    await client.end();
    const files = readdirSync(`${root}/migrations`).map((f) => f.replace(/\.sql$/, '')).sort();
    expect(files.length).toBeGreaterThan(0);
    expect(applied.rows.map((r) => r.name)).toEqual(files);
    for (const server of servers) expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  it('a pet created through one is read through the other', async () => {
    const key = (await apikey(['create', 'two-instances'], database.url)).stdout.trim();
    const [a, b] = servers as [ServerProcess, ServerProcess];
    // A new key reaches both caches through NOTIFY.
    await within(WAIT_MS, async () => (await call(a, '/v1/pets', key)).status === 200 && (await call(b, '/v1/pets', key)).status === 200);
    const created = await call(a, '/v1/pets', key, { method: 'POST', body: JSON.stringify({ name: 'Shared', categoryId: 9 }) });
    expect(created.status).toBe(201);
    const pet = (await created.json()) as { id: number };
    const read = await call(b, `/v1/pets/${pet.id}`, key);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ id: pet.id, name: 'Shared', categoryId: 9, ...PET_TIMES });
  });

  it('a key revoked through the CLI is refused by both', async () => {
    const key = (await apikey(['create', 'revoked-everywhere'], database.url)).stdout.trim();
    await within(WAIT_MS, async () => {
      const answers = await Promise.all(servers.map((s) => call(s, '/v1/pets', key)));
      return answers.every((r) => r.status === 200);
    });
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const id = (await client.query<{ id: string }>("SELECT id FROM api_keys WHERE name = 'revoked-everywhere'")).rows[0]?.id;
    await client.end();

    // Time from the CLI's exit (the revocation is committed) to refusal on each instance.
    const revoked = await apikey(['revoke', String(id)], database.url);
    expect(revoked.code).toBe(0);
    const took = await Promise.all(servers.map((s) => within(WAIT_MS, async () => (await call(s, '/v1/pets', key)).status === 401)));
    console.log(`revoked through the CLI: refused by each instance ${took.map((ms) => ms.toFixed(0)).join(' and ')} ms after`);
  });
});
